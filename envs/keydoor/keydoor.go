// Package keydoor is the key-and-door environment of graftrl: on a small grid cut in two by a wall
// line with one door, walk onto the key, then through the door to the goal on the other side, one
// move per turn. The door only opens while the key is held, so the value of a cell depends on a bit
// of state the cell does not show; the option key_in_state can leave that bit out of the state key to
// alias states on purpose.
//
// Tasks. The layout of a task seed is drawn with a PCG generator seeded by the seed: a size×size grid
// (size 5..11) with a full row or column of walls (never the first or last) holding one door cell, the
// start and the key on one side, the goal on the other, and extra walls anywhere else; redrawn from
// the same stream until the optimal path (start, key, door, goal) takes size-1 .. 3*size-1 moves.
//
// Text. Words are separated by single spaces; rows and columns are 0-based, row 0 at the top.
//
//	instruction   key r<R> c<C> door r<R> c<C> goal r<R> c<C>      key r1 c0 door r2 c3 goal r4 c4
//	observation   r<R> c<C> <up> <down> <left> <right> <held>        r1 c1 open wall key door nokey
//	invalid       invalid <observation>                             invalid r1 c1 open wall key door nokey
//	on the goal   r<R> c<C> goal                                    r4 c4 goal
//
// The four words after the position say what lies one move up, down, left and right, in that fixed
// order: open, wall (off the grid too), key (until it is picked up), door (open or not) or goal. The
// last word is haskey or nokey. An observation is thus seven words; an episode at the default cap
// (18 turns on the 5×5 grid) takes about 190 tokens.
//
// Actions are the words up, down, left and right, case-insensitive, surrounding spaces ignored.
// Walking onto the key's cell picks the key up (there is no separate pick action) and the key is kept
// for the rest of the episode. The door cell can be entered only while holding the key. Anything else
// (other text, a move into a wall, off the grid, or onto the door without the key) is an invalid
// action: invalid_penalty as the step reward, no change of state, Info.Invalid set. Reaching the goal
// ends the episode with outcome success_reward and Info.Success; after max_turns steps (invalid ones
// included) the episode is truncated; turn_cap_factor f replaces max_turns by a cap per task,
// ⌈f × its optimal length⌉ (envs.TurnCapper). Info.Distance is the optimal number of moves left, from a
// breadth-first search over (cell, key held) states.
//
// The state key is the agent's cell followed by "k" while the key is held, "r<R>c<C>" or "r<R>c<C>k"
// (r2c3k, r10c3k), with key_in_state true (the default); with key_in_state false it is the cell
// alone, so states before and after the pick-up share a key while their observations differ.
//
// Vocabulary (26 words for sizes 5..7, whatever the other options): r0..r6, c0..c6, open, wall, key,
// door, goal, up, down, left, right, haskey, nokey, invalid. Sizes 8..11 share one vocabulary of 34
// words that appends r7..r10 and c7..c10 to it, so the words of sizes 5..7 keep their places (and
// token ids).
//
// Options (see Config): size (default 5), walls (size-4), key_in_state (true), max_turns (3*size+3:
// 18 for size 5), turn_cap_factor (0: off), invalid_penalty (-0.1), success_reward (1).
//
// Import the package for its side effect of registering "keydoor" (or import envs/all).
package keydoor

import (
	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/grid"
)

// direction is a move of the agent, in the order of the observation words.
type direction = grid.Direction

// Constant strings sliced by index, because substrings of constants do not allocate.
const (
	// heldKeys holds the state keys r0c0k..r10c10k of the cells with the key held, one 7-byte
	// slot per cell index (grid.Index), padded with spaces.
	heldKeys = "r0c0k  r0c1k  r0c2k  r0c3k  r0c4k  r0c5k  r0c6k  r0c7k  r0c8k  r0c9k  r0c10k " +
		"r1c0k  r1c1k  r1c2k  r1c3k  r1c4k  r1c5k  r1c6k  r1c7k  r1c8k  r1c9k  r1c10k " +
		"r2c0k  r2c1k  r2c2k  r2c3k  r2c4k  r2c5k  r2c6k  r2c7k  r2c8k  r2c9k  r2c10k " +
		"r3c0k  r3c1k  r3c2k  r3c3k  r3c4k  r3c5k  r3c6k  r3c7k  r3c8k  r3c9k  r3c10k " +
		"r4c0k  r4c1k  r4c2k  r4c3k  r4c4k  r4c5k  r4c6k  r4c7k  r4c8k  r4c9k  r4c10k " +
		"r5c0k  r5c1k  r5c2k  r5c3k  r5c4k  r5c5k  r5c6k  r5c7k  r5c8k  r5c9k  r5c10k " +
		"r6c0k  r6c1k  r6c2k  r6c3k  r6c4k  r6c5k  r6c6k  r6c7k  r6c8k  r6c9k  r6c10k " +
		"r7c0k  r7c1k  r7c2k  r7c3k  r7c4k  r7c5k  r7c6k  r7c7k  r7c8k  r7c9k  r7c10k " +
		"r8c0k  r8c1k  r8c2k  r8c3k  r8c4k  r8c5k  r8c6k  r8c7k  r8c8k  r8c9k  r8c10k " +
		"r9c0k  r9c1k  r9c2k  r9c3k  r9c4k  r9c5k  r9c6k  r9c7k  r9c8k  r9c9k  r9c10k " +
		"r10c0k r10c1k r10c2k r10c3k r10c4k r10c5k r10c6k r10c7k r10c8k r10c9k r10c10k"
	// vocabulary lists every word the env emits or accepts as an action, in a fixed order. The
	// position words go up to smallSize whatever the size, so one vocabulary serves sizes 5..7;
	// larger sizes append r7..r10 and c7..c10 at the end (grid.Vocabulary), which keeps every
	// earlier word in its place.
	vocabulary = "r0 r1 r2 r3 r4 r5 r6 c0 c1 c2 c3 c4 c5 c6 open wall key door goal up down left right haskey nokey invalid"
)

// heldKeys has a slot for every cell index; otherwise this constant is negative and does not compile.
const _ = uint(len(heldKeys) - 7*grid.MaxCells)

// smallSize is the largest size whose positions the words of vocabulary cover.
const smallSize = 7

// word is the observation word of a cell.
func (c cell) word() string { return [...]string{"open", "wall", "key", "door", "goal"}[c] }

// KeyDoor is one key-and-door environment instance (see the package doc). It implements envs.Env,
// envs.Cloner, envs.ValidActioner and envs.Expert; the zero value is not usable, build one with New.
type KeyDoor struct {
	cfg Config
	layout
	ep     grid.Episode
	agent  int
	hasKey bool
	// scratch holds observation text while it is built; as an array it is copied, not shared, by Clone.
	scratch [48]byte
}

var (
	_ envs.Env           = (*KeyDoor)(nil)
	_ envs.Cloner        = (*KeyDoor)(nil)
	_ envs.ValidActioner = (*KeyDoor)(nil)
	_ envs.Expert        = (*KeyDoor)(nil)
	_ envs.TurnCapper    = (*KeyDoor)(nil)
)

// New returns a key-and-door environment with the given configuration. Reset must be called before
// Step.
func New(cfg Config) (*KeyDoor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &KeyDoor{cfg: cfg}, nil
}

// Config returns the configuration of the environment.
func (k *KeyDoor) Config() Config { return k.cfg }

// Reset starts the episode of a task seed (see the package doc for the instruction format).
func (k *KeyDoor) Reset(task int64) (string, envs.Observation, error) {
	if err := k.ep.Load(task, func(task int64) error { return k.generate(k.cfg, task) }); err != nil {
		return "", envs.Observation{}, err
	}
	k.agent, k.hasKey = k.start, false
	k.ep.Start(grid.TaskCap(k.cfg.MaxTurns, k.cfg.TurnCapFactor, k.distance(), maxDistance(k.cfg.Size)))
	ins := "key " + grid.Position(k.keyAt) +
		" door " + grid.Position(k.doorAt) +
		" goal " + grid.Position(k.goalAt)
	return ins, grid.Moved(k.text(false), k.distance()), nil
}

// Step applies one action (see the package doc). Stepping before Reset or after the episode ended
// is a fault of the caller and returns an error.
func (k *KeyDoor) Step(action string) (envs.Observation, error) {
	return k.ep.Step(Name, func() envs.Observation {
		next, ok := 0, false
		if d, valid := grid.ParseDirection(action); valid {
			next, ok = k.move(d)
		}
		switch {
		case !ok:
			return grid.Invalid(k.cfg.InvalidPenalty, k.text(true), k.distance())
		case k.cells[next] == goal:
			k.agent = next
			return grid.Success(k.cfg.SuccessReward, grid.EndText(next, "goal"))
		}
		k.agent, k.hasKey = next, k.holds(next, k.hasKey)
		return grid.Moved(k.text(false), k.distance())
	})
}

// move returns the cell a move of the agent in direction d leads to, or ok=false when the move is
// invalid (into a wall, off the grid, or onto the door without the key).
func (k *KeyDoor) move(d direction) (next int, ok bool) {
	next, ok = grid.Neighbour(k.agent, d, k.size)
	return next, ok && k.passable(next, k.hasKey)
}

// distance is Info.Distance of the current state.
func (k *KeyDoor) distance() int { return k.distanceAt(k.agent, k.hasKey) }

// distanceAt is Info.Distance of the agent on cell i, holding the key or not.
func (k *KeyDoor) distanceAt(i int, hasKey bool) int {
	d := k.dist[b2i(hasKey)][i]
	if d == unreachable {
		return envs.DistDead
	}
	return int(d)
}

// text is the observation of a non-terminal state, built in scratch so that it costs one allocation.
func (k *KeyDoor) text(invalid bool) string {
	b := grid.AppendView(k.scratch[:0], invalid, k.agent, func(d direction) string {
		return k.look(k.agent, d, k.hasKey).word()
	})
	if k.hasKey {
		return string(append(b, " haskey"...))
	}
	return string(append(b, " nokey"...))
}

// StateKey returns the agent's cell, followed by "k" while the key is held if key_in_state is set
// (see the package doc).
func (k *KeyDoor) StateKey() string {
	cell := grid.CellKey(k.agent)
	if k.hasKey && k.cfg.KeyInState {
		return heldKeys[7*k.agent : 7*k.agent+len(cell)+1]
	}
	return cell
}

// Vocabulary returns the words of the env (see the package doc): the same for sizes 5..7 whatever
// the other options, and for sizes 8..11 those words followed by r7..r10 and c7..c10.
func (k *KeyDoor) Vocabulary() []string {
	return grid.Vocabulary(vocabulary, k.cfg.Size, smallSize, MaxSize)
}

// ActionWords returns the words actions are made of: up, down, left, right (see envs.ActionWorder).
func (k *KeyDoor) ActionWords() []string { return grid.ActionWords() }

// TurnCap returns the step cap of the current task: max_turns, or ⌈turn_cap_factor × its optimal
// length⌉.
func (k *KeyDoor) TurnCap() int { return k.ep.Cap() }

// MaxTurns returns the step cap: max_turns, or under turn_cap_factor the cap of the longest task
// a layout of this size can have.
func (k *KeyDoor) MaxTurns() int {
	return grid.MaxCap(k.cfg.MaxTurns, k.cfg.TurnCapFactor, maxDistance(k.cfg.Size))
}

// Clone returns an independent copy of the environment in its current state.
func (k *KeyDoor) Clone() envs.Env {
	c := *k
	return &c
}

// Legend says what Render's symbols mean (envs.Legender).
func (k *KeyDoor) Legend() string {
	return "'@' agent ('&' while it holds the key), 'S' start, 'K' key, 'D' door, 'G' goal, '#' wall, '.' open; rows r0…, columns 0…"
}

// Render draws the grid for people, one row per line under a header of column numbers: '@' agent
// (shown as '&' while it holds the key), 'S' start, 'K' key (until picked up), 'D' door, 'G' goal,
// '#' wall, '.' open. Before the first Reset of a generated layout there is nothing to draw and it
// returns "".
func (k *KeyDoor) Render() string {
	if !k.ep.HasLayout() {
		return ""
	}
	return grid.Render(k.size, func(i int) byte {
		held := k.ep.Started() && k.hasKey
		switch {
		case k.ep.Started() && i == k.agent && held:
			return '&'
		case k.ep.Started() && i == k.agent:
			return '@'
		case i == k.start:
			return 'S'
		case k.cells[i] == key && held:
			return '.'
		}
		return symbols[k.cells[i]]
	})
}
