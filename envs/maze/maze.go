// Package maze is the grid-world environment of graftrl: reach the goal cell of a small grid, one
// move per turn, around walls and around traps that end the episode in failure. Its state space is
// small enough that the state key (the agent's cell) merges many steps across the rollouts of a task,
// which is what the step-level estimators feed on.
//
// Tasks. The layout of a task seed is drawn with a PCG generator seeded by the seed: size×size cells
// (size 5..11), start, goal, walls and traps on distinct cells, redrawn from the same stream until the
// goal is reachable from the start without stepping on a trap in size-1 .. 2*(size-1) moves. The turn
// cap max_turns is at least 2*(size-1), so every task can be solved in time. turn_cap_factor f
// replaces it by a cap per task, ⌈f × the task's optimal length⌉ (envs.TurnCapper), so that the
// slack for detours is the same share of every task (f ≥ 1: still solvable in time).
//
// Text. Words are separated by single spaces; rows and columns are 0-based, row 0 at the top. The
// vocabulary of sizes 5..7 holds the position words r0..r6 and c0..c6 (whatever the size, so one
// vocabulary serves them all); sizes 8..11 share one vocabulary that appends r7..r10 and c7..c10 to
// it, so the words of sizes 5..7 keep their places (and token ids).
//
//	instruction   goal r<R> c<C>                       goal r4 c4
//	observation   r<R> c<C> <up> <down> <left> <right> r2 c3 wall open trap goal
//	invalid       invalid r<R> c<C> <up> ...           invalid r2 c3 wall open trap goal
//	on a trap     r<R> c<C> trap                       r1 c1 trap
//	on the goal   r<R> c<C> goal                       r4 c4 goal
//
// The four words after the position say what lies one move up, down, left and right, in that fixed
// order: open, wall (off the grid too, since both block), trap or goal. An observation is thus six
// words (seven after an invalid action), which keeps whole episodes within the policy's context.
//
// Actions are the words up, down, left and right, case-insensitive, surrounding spaces ignored;
// with idle_actions also look, which changes nothing but spends a turn: the observation is the
// current view, with no penalty (envs.Idler).
// Anything else, and a move into a wall or off the grid, is an invalid action: invalid_penalty as the
// step reward, no change of state, Info.Invalid set. Stepping on a trap ends the episode (Done, outcome
// 0, Info.Distance = envs.DistDead); reaching the goal ends it with outcome success_reward and
// Info.Success. After max_turns steps (invalid ones included) the episode is truncated.
//
// The state key is the agent's cell, "r<R>c<C>" (r2c3, r10c3); it identifies a state only within one
// task.
//
// Import the package for its side effect of registering "maze" (or import envs/all).
package maze

import (
	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/grid"
)

// direction is a move of the agent, in the order of the observation words.
type direction = grid.Direction

// vocabulary lists every word the env emits or accepts as an action, in a fixed order. The
// position words go up to smallSize whatever the size, so one vocabulary serves sizes 5..7;
// larger sizes append r7..r10 and c7..c10 at the end (grid.Vocabulary), which keeps every
// earlier word in its place.
const vocabulary = "r0 r1 r2 r3 r4 r5 r6 c0 c1 c2 c3 c4 c5 c6 open wall trap goal up down left right invalid " +
	"up-open up-wall up-trap up-goal down-open down-wall down-trap down-goal " +
	"left-open left-wall left-trap left-goal right-open right-wall right-trap right-goal " +
	"goal-up goal-down goal-left goal-right"

// smallSize is the largest size whose positions the words of vocabulary cover.
const smallSize = 7

// word is the observation word of a cell.
func (c cell) word() string { return [...]string{"open", "wall", "trap", "goal"}[c] }

// Maze is one maze environment instance (see the package doc). It implements envs.Env, envs.Cloner,
// envs.ValidActioner and envs.Expert; the zero value is not usable, build one with New.
type Maze struct {
	cfg Config
	layout
	ep    grid.Episode
	agent int
	// scratch holds observation text while it is built; as an array it is copied, not shared, by Clone.
	scratch [40]byte
}

var (
	_ envs.Env           = (*Maze)(nil)
	_ envs.Cloner        = (*Maze)(nil)
	_ envs.ValidActioner = (*Maze)(nil)
	_ envs.Expert        = (*Maze)(nil)
	_ envs.TurnCapper    = (*Maze)(nil)
	_ envs.Idler         = (*Maze)(nil)
)

// New returns a maze with the given configuration. Reset must be called before Step.
func New(cfg Config) (*Maze, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Maze{cfg: cfg}, nil
}

// Config returns the configuration of the maze.
func (m *Maze) Config() Config { return m.cfg }

// Reset starts the episode of a task seed (see the package doc for the instruction format).
func (m *Maze) Reset(task int64) (string, envs.Observation, error) {
	if err := m.ep.Load(task, func(task int64) error { return m.generate(m.cfg, task) }); err != nil {
		return "", envs.Observation{}, err
	}
	m.agent = m.start
	m.ep.Start(grid.TaskCap(m.cfg.MaxTurns, m.cfg.TurnCapFactor, m.distance(), maxDistance(m.cfg.Size)))
	return "goal " + grid.Position(m.goal), grid.Moved(m.text(false), m.distance()), nil
}

// Step applies one action (see the package doc). Stepping before Reset or after the episode ended
// is a fault of the caller and returns an error.
func (m *Maze) Step(action string) (envs.Observation, error) {
	return m.ep.Step(Name, func() envs.Observation {
		if m.cfg.IdleActions && grid.IsLook(action) {
			return grid.Moved(m.text(false), m.distance())
		}
		next, ok := 0, false
		if d, valid := grid.ParseDirection(action); valid {
			next, ok = m.move(d)
		}
		if !ok {
			return grid.Invalid(m.cfg.InvalidPenalty, m.text(true), m.distance())
		}
		m.agent = next
		switch m.cells[next] {
		case trap:
			return grid.Failure(grid.EndText(next, "trap"))
		case goal:
			return grid.Success(m.cfg.SuccessReward, grid.EndText(next, "goal"))
		}
		return grid.Moved(m.text(false), m.distance())
	})
}

// move returns the cell a move of the agent in direction d leads to, or ok=false when the move is
// invalid (into a wall or off the grid).
func (m *Maze) move(d direction) (next int, ok bool) {
	next, ok = grid.Neighbour(m.agent, d, m.size)
	return next, ok && m.cells[next] != wall
}

// distance is Info.Distance of the agent's cell.
func (m *Maze) distance() int { return m.distanceAt(m.agent) }

// distanceAt is Info.Distance of the agent on cell i: 0 on the goal, envs.DistDead on a trap.
func (m *Maze) distanceAt(i int) int {
	if m.cells[i] == trap || m.dist[i] == unreachable {
		return envs.DistDead
	}
	return int(m.dist[i])
}

// text is the observation of a non-terminal state, built in scratch so that it costs one allocation.
func (m *Maze) text(invalid bool) string {
	b := grid.AppendView(m.scratch[:0], invalid, m.agent, m.lookWord)
	if m.cfg.GoalHint {
		b = m.appendGoalHint(b)
	}
	return string(b)
}

// lookWord is the word of what lies one move from the agent in direction d: the cell's word, or
// with labelled neighbours the direction and the cell's word in one ("up-open").
func (m *Maze) lookWord(d direction) string {
	c := m.look(m.agent, d)
	if m.cfg.Labelled {
		return [...]string{
			"up-open", "up-wall", "up-trap", "up-goal",
			"down-open", "down-wall", "down-trap", "down-goal",
			"left-open", "left-wall", "left-trap", "left-goal",
			"right-open", "right-wall", "right-trap", "right-goal",
		}[int(d)*4+int(c)]
	}
	return c.word()
}

// appendGoalHint appends the goal's direction: its row side, then its column side.
func (m *Maze) appendGoalHint(b []byte) []byte {
	ar, ac, gr, gc := grid.Row(m.agent), grid.Col(m.agent), grid.Row(m.goal), grid.Col(m.goal)
	switch {
	case gr < ar:
		b = append(b, " goal-up"...)
	case gr > ar:
		b = append(b, " goal-down"...)
	}
	switch {
	case gc < ac:
		b = append(b, " goal-left"...)
	case gc > ac:
		b = append(b, " goal-right"...)
	}
	return b
}

// StateKey returns the agent's cell, "r<R>c<C>"; the rest of the state is fixed by the task.
func (m *Maze) StateKey() string { return grid.CellKey(m.agent) }

// Vocabulary returns the words of the env (see the package doc): the same for sizes 5..7, and for
// sizes 8..11 those words followed by r7..r10 and c7..c10; with idle_actions, look last.
func (m *Maze) Vocabulary() []string {
	v := grid.Vocabulary(vocabulary, m.cfg.Size, smallSize, MaxSize)
	if m.cfg.IdleActions {
		v = append(v, grid.Look)
	}
	return v
}

// ActionWords returns the words actions are made of: up, down, left, right, and look with
// idle_actions.
func (m *Maze) ActionWords() []string { return append(grid.ActionWords(), m.IdleActions()...) }

// IdleActions returns look with idle_actions, else nothing (see envs.Idler).
func (m *Maze) IdleActions() []string {
	if m.cfg.IdleActions {
		return []string{grid.Look}
	}
	return nil
}

// TurnCap returns the step cap of the current task: max_turns, or ⌈turn_cap_factor × its optimal
// length⌉.
func (m *Maze) TurnCap() int { return m.ep.Cap() }

// MaxTurns returns the step cap: max_turns, or under turn_cap_factor the cap of the longest task
// a layout of this size can have.
func (m *Maze) MaxTurns() int {
	return grid.MaxCap(m.cfg.MaxTurns, m.cfg.TurnCapFactor, maxDistance(m.cfg.Size))
}

// Clone returns an independent copy of the maze in its current state.
func (m *Maze) Clone() envs.Env {
	c := *m
	return &c
}

// Legend says what Render's symbols mean (envs.Legender).
func (m *Maze) Legend() string {
	return "'@' agent, 'S' start, 'G' goal, '#' wall, 'T' trap, '.' open; rows r0…, columns 0…"
}

// Render draws the maze for people, one row per line under a header of column numbers:
// '@' agent, 'S' start, 'G' goal, '#' wall, 'T' trap, '.' open. Before the first Reset of a
// generated maze there is nothing to draw and it returns "".
func (m *Maze) Render() string {
	if !m.ep.HasLayout() {
		return ""
	}
	return grid.Render(m.size, func(i int) byte {
		switch {
		case m.ep.Started() && i == m.agent:
			return '@'
		case i == m.start:
			return 'S'
		}
		return symbols[m.cells[i]]
	})
}
