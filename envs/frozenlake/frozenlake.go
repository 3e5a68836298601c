// Package frozenlake is the slippery grid world of graftrl: cross a small frozen lake to the goal
// cell, one move per turn, around holes that end the episode in failure. Moves slip: with probability
// slip a move goes to one of the two perpendicular directions instead of the intended one, so the same
// state and action can lead to different next states. It is the environment on which estimators that
// average over observed transitions (GRAFT's Bellman expectation) and those that take the best
// observed continuation (GraphGPO's shortest path) part ways.
//
// Tasks. The lake of a task seed is drawn with a PCG generator seeded by (seed, "froz"): size×size
// cells (size 4..8), start, goal and holes on distinct cells, redrawn from the same stream until the
// goal is reachable from the start without entering a hole, if no move slipped, in size-1 ..
// 2*(size-1) moves. The slips do not change the task: they are drawn from a separate stream.
//
// Slips. Episode e of an instance (e = 0 for its first Reset, 1 for the second, and so on whatever the
// task seeds) of task seed s, with option slip_seed k, draws its slips from a PCG generator seeded by
// (s, slipStream(k, e)), where slipStream(k, e) = splitmix64(splitmix64(k XOR "slip") + e). Every
// valid step draws one number u in [0, 1) from it (invalid steps draw nothing): the move goes the
// intended way if u < 1-slip, turns left of it (up→left, left→down, down→right, right→up) if
// u < 1-slip/2, and turns right otherwise. The whole episode is therefore a deterministic function of
// (task seed, slip_seed, episode number, the sequence of actions), and Clone copies the generator, so
// a clone continues exactly as the original would (ReseedSlips gives a clone a stream of its own, for
// lookaheads that must not foresee the slips). Instances made with the same options replay the
// same slips in their episodes of the same number: to decorrelate the parallel rollouts of a group,
// give each instance its own slip seed with SetSlipSeed (or the slip_seed option).
//
// Text. Words are separated by single spaces; rows and columns are 0-based, row 0 at the top.
//
//	instruction   goal r<R> c<C>                         goal r3 c3
//	observation   r<R> c<C> <up> <down> <left> <right>   r1 c2 open wall hole goal
//	invalid       invalid <observation>                  invalid r0 c2 wall open hole open
//	in a hole     r<R> c<C> hole                         r1 c1 hole
//	on the goal   r<R> c<C> goal                         r3 c3 goal
//
// The four words after the position say what lies one move up, down, left and right: open (ice),
// wall (the lake's edge), hole or goal. An observation does not tell whether the last move slipped;
// Info.Extra["slipped"] = 1 does, for diagnostics. An observation is six words; an episode at the
// default cap (16 turns on the 4×4 lake) takes about 150 tokens.
//
// Actions are the words up, down, left and right, case-insensitive, surrounding spaces ignored.
// Anything else, and an intended move off the lake, is an invalid action: invalid_penalty as the step
// reward, no change of state, no slip drawn, Info.Invalid set. A slip towards the edge leaves the
// agent where it is (a valid step). Entering a hole ends the episode (Done, outcome 0,
// Info.Distance = envs.DistDead); reaching the goal ends it with outcome success_reward and
// Info.Success. After max_turns steps (invalid ones included) the episode is truncated.
// Info.Distance is the number of moves to the goal if no move slipped (a breadth-first search
// avoiding holes): the optimal path of the slip-free lake, not an expected number of moves.
//
// Gymnasium's FrozenLake-v1. Option map: 4x4 replaces the drawn lakes by gymnasium's default 4×4 map
// (SFFF FHFH FFFH HFFG) for every task seed, map: 8x8 by its 8×8 map; option slip_mode: gymnasium replaces the slips by those
// of is_slippery=True: u < 1/3 the intended way, u < 2/3 a left turn, otherwise a right turn (slip is
// not used), and every move is valid, one that goes off the lake leaving the agent in place. With
// both (and max_turns: 100, gymnasium's step cap) the dynamics are gymnasium's transition table P.
//
// The state key is the agent's cell, "r<R>c<C>"; it identifies a state within one task.
//
// Vocabulary (23 words, the same for sides 4..7): r0..r6, c0..c6, open, wall, hole, goal, up, down,
// left, right, invalid; side 8 appends r7 and c7 (25 words), so the smaller lakes keep their tokens.
//
// Options (see Config): size (default 4), holes (size), slip (0.2), slip_seed (0), max_turns
// (4*(size-1)+4: 16 for size 4), invalid_penalty (-0.1), success_reward (1), map ("": drawn lakes),
// slip_mode (perpendicular).
//
// Import the package for its side effect of registering "frozenlake" (or import envs/all).
package frozenlake

import (
	"math/rand/v2"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/grid"
)

// direction is a move of the agent, in the order of the observation words.
type direction = grid.Direction

// turnLeft returns the direction a quarter turn counter-clockwise of d, one of the two slips:
// up→left, down→right, left→down, right→up.
func turnLeft(d direction) direction {
	return [...]direction{grid.Left, grid.Right, grid.Down, grid.Up}[d]
}

// turnRight returns the direction a quarter turn clockwise of d, the other slip: up→right,
// down→left, left→up, right→down.
func turnRight(d direction) direction {
	return [...]direction{grid.Right, grid.Left, grid.Up, grid.Down}[d]
}

const (
	// vocabulary lists every word the env emits or accepts as an action, in a fixed order. The
	// position words go up to side 7 whatever the size, so one vocabulary serves lakes of 4..7;
	// side 8 appends its own words, r7 and c7, at the end (grid.Vocabulary).
	vocabulary = "r0 r1 r2 r3 r4 r5 r6 c0 c1 c2 c3 c4 c5 c6 open wall hole goal up down left right invalid"
	// slipSalt is mixed into the slip stream (see the package doc); it is part of the episode
	// identity: changing it changes every slip of every run.
	slipSalt = 0x736c6970 // "slip"
)

// smallSize is the largest side whose positions the words of vocabulary cover.
const smallSize = 7

// word is the observation word of a cell; ice is "open".
func (c cell) word() string { return [...]string{"open", "hole", "goal"}[c] }

// splitmix64 is the finaliser of the SplitMix64 generator, a bijective mix of 64 bits.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// slipStream is the second PCG seed word of the slips of episode e with slip seed k.
func slipStream(k int64, e uint64) uint64 { return splitmix64(splitmix64(uint64(k)^slipSalt) + e) }

// FrozenLake is one frozen-lake environment instance (see the package doc). It implements envs.Env,
// envs.Cloner, envs.ValidActioner and envs.Expert; the zero value is not usable, build one with New.
type FrozenLake struct {
	cfg Config
	layout
	ep grid.Episode
	// slips is the random stream of the current episode; as a value it is copied by Clone.
	slips rand.PCG
	// episodes counts the Resets of the instance; the episode of the next Reset is episodes.
	episodes uint64
	agent    int
	// scratch holds observation text while it is built; as an array it is copied, not shared, by Clone.
	scratch [40]byte
	// plan is the expert's policy of the lake, computed on the first ExpertAction of a lake and never
	// written afterwards, so clones share it (see expert.go).
	plan *plan
}

var (
	_ envs.Env           = (*FrozenLake)(nil)
	_ envs.Cloner        = (*FrozenLake)(nil)
	_ envs.ValidActioner = (*FrozenLake)(nil)
	_ envs.Expert        = (*FrozenLake)(nil)
)

// New returns a frozen lake with the given configuration. Reset must be called before Step.
func New(cfg Config) (*FrozenLake, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Map != "" {
		return newFromGrid(standardMaps[cfg.Map], cfg) // Validate checked the size against the map
	}
	return &FrozenLake{cfg: cfg}, nil
}

// newFromGrid returns a lake on a hand-built layout (see parseLayout) that Reset keeps for every seed.
// The size of cfg is taken from the grid; the other options apply as given, unvalidated.
func newFromGrid(rows []string, cfg Config) (*FrozenLake, error) {
	l, err := parseLayout(rows)
	if err != nil {
		return nil, err
	}
	cfg.Size = l.size
	return &FrozenLake{cfg: cfg, layout: l, ep: grid.FixedEpisode()}, nil
}

// Config returns the configuration of the lake.
func (f *FrozenLake) Config() Config { return f.cfg }

// SetSlipSeed replaces the slip seed (the option slip_seed) from the next Reset on. The rollout
// collector can give each parallel instance its own seed so that the rollouts of a group slip
// independently; the slips then depend on (task seed, slip seed, episode number, actions).
func (f *FrozenLake) SetSlipSeed(k int64) { f.cfg.SlipSeed = k }

// SeedEpisode implements envs.EpisodeSeeder: the collector's per-episode seed becomes the slip
// seed and the episode count restarts, so the next episode's slips depend on (task seed, this
// seed, actions) only — not on how many episodes the instance ran before (a resumed run uses new
// instances and must replay the same slips).
func (f *FrozenLake) SeedEpisode(seed int64) {
	f.SetSlipSeed(seed)
	f.episodes = 0
}

// ReseedSlips replaces the random stream of the rest of the current episode by the one selected by k,
// the task seed, the episode number and the turn. A clone continues exactly as the original would
// (it copies the stream), so a lookahead on clones would foresee the slips; clones reseeded with
// different k slip independently from here on, and the same k reproduces the same continuation.
func (f *FrozenLake) ReseedSlips(k int64) {
	f.slips.Seed(uint64(f.ep.Task()), splitmix64(slipStream(k, f.episodes-1)+uint64(f.ep.Turn())+1))
}

// Reset starts the episode of a task seed (see the package doc for the instruction format and the
// seeding of the slips).
func (f *FrozenLake) Reset(task int64) (string, envs.Observation, error) {
	if err := f.ep.Load(task, func(task int64) error { return f.generate(f.cfg, task) }); err != nil {
		return "", envs.Observation{}, err
	}
	f.slips.Seed(uint64(task), slipStream(f.cfg.SlipSeed, f.episodes))
	f.episodes++
	f.agent = f.start
	f.ep.Start(f.cfg.MaxTurns)
	return "goal " + grid.Position(f.goal), grid.Moved(f.text(false), f.distance()), nil
}

// Step applies one action (see the package doc). Stepping before Reset or after the episode ended
// is a fault of the caller and returns an error.
func (f *FrozenLake) Step(action string) (envs.Observation, error) {
	return f.ep.Step(Name, func() envs.Observation {
		d, ok := grid.ParseDirection(action)
		if ok && !f.cfg.gymnasiumSlips() {
			_, ok = grid.Neighbour(f.agent, d, f.size)
		}
		if !ok {
			return grid.Invalid(f.cfg.InvalidPenalty, f.text(true), f.distance())
		}
		actual := f.slip(d)
		if next, on := grid.Neighbour(f.agent, actual, f.size); on {
			f.agent = next
		}
		var obs envs.Observation
		switch f.cells[f.agent] {
		case hole:
			obs = grid.Failure(grid.EndText(f.agent, "hole"))
		case goal:
			obs = grid.Success(f.cfg.SuccessReward, grid.EndText(f.agent, "goal"))
		default:
			obs = grid.Moved(f.text(false), f.distance())
		}
		if actual != d {
			obs.Info.Extra = map[string]float64{"slipped": 1}
		}
		return obs
	})
}

// slip draws the direction a move in direction d actually takes (see the package doc).
func (f *FrozenLake) slip(d direction) direction {
	u := float64(f.slips.Uint64()>>11) / (1 << 53)
	if f.cfg.gymnasiumSlips() {
		switch {
		case u < 1.0/3:
			return d
		case u < 2.0/3:
			return turnLeft(d)
		}
		return turnRight(d)
	}
	switch {
	case u < 1-f.cfg.Slip:
		return d
	case u < 1-f.cfg.Slip/2:
		return turnLeft(d)
	}
	return turnRight(d)
}

// distance is Info.Distance of the agent's cell.
func (f *FrozenLake) distance() int {
	if f.cells[f.agent] == hole || f.dist[f.agent] == unreachable {
		return envs.DistDead
	}
	return int(f.dist[f.agent])
}

// look returns the word for what lies next to the agent in direction d.
func (f *FrozenLake) look(d direction) string {
	j, ok := grid.Neighbour(f.agent, d, f.size)
	if !ok {
		return "wall"
	}
	return f.cells[j].word()
}

// text is the observation of a non-terminal state, built in scratch so that it costs one allocation.
func (f *FrozenLake) text(invalid bool) string {
	return string(grid.AppendView(f.scratch[:0], invalid, f.agent, f.look))
}

// StateKey returns the agent's cell, "r<R>c<C>"; the rest of the state is fixed by the task.
func (f *FrozenLake) StateKey() string { return grid.CellKey(f.agent) }

// Vocabulary returns the words of the env (see the package doc): the same for sides 4..7, plus r7
// and c7 for side 8.
func (f *FrozenLake) Vocabulary() []string {
	return grid.Vocabulary(vocabulary, f.cfg.Size, smallSize, MaxSize)
}

// ActionWords returns the words actions are made of: up, down, left, right (see envs.ActionWorder).
func (f *FrozenLake) ActionWords() []string { return grid.ActionWords() }

// MaxTurns returns the step cap.
func (f *FrozenLake) MaxTurns() int { return f.cfg.MaxTurns }

// Clone returns an independent copy of the lake in its current state, random stream and episode
// count included, so the copy continues exactly as the original would.
func (f *FrozenLake) Clone() envs.Env {
	c := *f
	return &c
}

// Legend says what Render's symbols mean (envs.Legender).
func (f *FrozenLake) Legend() string {
	return "'@' agent, 'S' start, 'G' goal, 'H' hole, '.' ice; rows r0…, columns 0…"
}

// Render draws the lake for people, one row per line under a header of column numbers: '@' agent,
// 'S' start, 'G' goal, 'H' hole, '.' ice. Before the first Reset of a generated lake there is nothing
// to draw and it returns "".
func (f *FrozenLake) Render() string {
	if !f.ep.HasLayout() {
		return ""
	}
	return grid.Render(f.size, func(i int) byte {
		switch {
		case f.ep.Started() && i == f.agent:
			return '@'
		case i == f.start:
			return 'S'
		}
		return symbols[f.cells[i]]
	})
}
