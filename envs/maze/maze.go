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
// Actions are the words up, down, left and right, case-insensitive, surrounding spaces ignored.
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
	"errors"
	"strings"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/grid"
)

// direction is a move of the agent, in the order of the observation words.
type direction = grid.Direction

const (
	up            = grid.Up
	down          = grid.Down
	left          = grid.Left
	right         = grid.Right
	numDirections = grid.NumDirections
)

// Constant strings sliced by index, because substrings of constants do not allocate.
const (
	// vocabulary lists every word the env emits or accepts as an action, in a fixed order. The
	// position words go up to smallSize whatever the size, so one vocabulary serves sizes 5..7;
	// larger sizes append largeWords at the end, which keeps every earlier word in its place.
	vocabulary = "r0 r1 r2 r3 r4 r5 r6 c0 c1 c2 c3 c4 c5 c6 open wall trap goal up down left right invalid " +
		"up-open up-wall up-trap up-goal down-open down-wall down-trap down-goal " +
		"left-open left-wall left-trap left-goal right-open right-wall right-trap right-goal " +
		"goal-up goal-down goal-left goal-right"
	// largeWords are the position words of sizes smallSize+1..MaxSize.
	largeWords = "r7 r8 r9 r10 c7 c8 c9 c10"
	// invalidWord prefixes the observation after an invalid action, so the policy can tell that the
	// unchanged position is its own fault and not a no-op move.
	invalidWord = "invalid"
)

// smallSize is the largest size whose positions the words of vocabulary cover.
const smallSize = 7

func rowWord(i int) string { return grid.RowWord(row(i)) }
func colWord(i int) string { return grid.ColWord(col(i)) }

func (c cell) word() string {
	switch c {
	case wall:
		return "wall"
	case trap:
		return "trap"
	case goal:
		return "goal"
	}
	return "open"
}

// Maze is one maze environment instance (see the package doc). It implements envs.Env, envs.Cloner,
// envs.ValidActioner and envs.Expert; the zero value is not usable, build one with New.
type Maze struct {
	cfg Config
	layout
	// seeded is set once layout holds the layout of layoutSeed, which Reset then reuses: the rollouts
	// of a group replay the same task.
	seeded     bool
	layoutSeed int64
	// fixed is set for hand-built layouts, which Reset keeps whatever the seed.
	fixed bool

	agent   int
	turn    int
	cap     int // the step cap of the current task (max_turns, or turn_cap_factor's)
	started bool
	over    bool
	// scratch holds observation text while it is built; as an array it is copied, not shared, by Clone.
	scratch [40]byte
}

var (
	_ envs.Env           = (*Maze)(nil)
	_ envs.Cloner        = (*Maze)(nil)
	_ envs.ValidActioner = (*Maze)(nil)
	_ envs.Expert        = (*Maze)(nil)
	_ envs.TurnCapper    = (*Maze)(nil)
)

// New returns a maze with the given configuration. Reset must be called before Step.
func New(cfg Config) (*Maze, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Maze{cfg: cfg}, nil
}

// newFromGrid returns a maze on a hand-built layout (see parseLayout) that Reset keeps for every
// seed. The size of cfg is taken from the grid; the other options apply as given, unvalidated.
func newFromGrid(rows []string, cfg Config) (*Maze, error) {
	l, err := parseLayout(rows)
	if err != nil {
		return nil, err
	}
	cfg.Size = l.size
	return &Maze{cfg: cfg, layout: l, fixed: true}, nil
}

// Config returns the configuration of the maze.
func (m *Maze) Config() Config { return m.cfg }

// Reset starts the episode of a task seed (see the package doc for the instruction format).
func (m *Maze) Reset(task int64) (string, envs.Observation, error) {
	if !m.fixed && (!m.seeded || m.layoutSeed != task) {
		// A failed draw leaves a partial layout behind; no episode may run on it.
		m.seeded, m.started = false, false
		if err := m.generate(m.cfg, task); err != nil {
			return "", envs.Observation{}, err
		}
		m.seeded, m.layoutSeed = true, task
	}
	m.agent, m.turn, m.started, m.over = m.start, 0, true, false
	m.cap = m.cfg.MaxTurns
	if d := m.distance(); m.cfg.TurnCapFactor != 0 && d > 0 {
		m.cap = min(grid.TurnCap(m.cfg.TurnCapFactor, d), m.MaxTurns())
	}
	obs := envs.Observation{Text: m.text(false), Info: envs.Info{Distance: m.distance()}}
	return "goal " + rowWord(m.goal) + " " + colWord(m.goal), obs, nil
}

// Step applies one action (see the package doc). Stepping before Reset or after the episode ended
// is a fault of the caller and returns an error.
func (m *Maze) Step(action string) (envs.Observation, error) {
	if !m.started {
		return envs.Observation{}, errors.New("maze: Step before Reset")
	}
	if m.over {
		return envs.Observation{}, errors.New("maze: Step after the episode ended")
	}
	m.turn++
	var obs envs.Observation
	next, ok := 0, false
	if d, valid := grid.ParseDirection(action); valid {
		next, ok = m.move(d)
	}
	switch {
	case !ok:
		obs.Reward = m.cfg.InvalidPenalty
		obs.Info.Invalid = true
		obs.Text = m.text(true)
		obs.Info.Distance = m.distance()
	case m.cells[next] == trap:
		m.agent = next
		obs.Done = true
		obs.Text = m.endText()
		obs.Info.Distance = envs.DistDead
	case m.cells[next] == goal:
		m.agent = next
		obs.Done = true
		obs.Outcome = m.cfg.SuccessReward
		obs.Info.Success = true
		obs.Text = m.endText()
	default:
		m.agent = next
		obs.Text = m.text(false)
		obs.Info.Distance = m.distance()
	}
	// A step that ends the episode on the last turn is a termination, not a truncation.
	obs.Truncated = !obs.Done && m.turn >= m.cap
	m.over = obs.Over()
	return obs, nil
}

// move returns the cell a move of the agent in direction d leads to, or ok=false when the move is
// invalid (into a wall or off the grid).
func (m *Maze) move(d direction) (next int, ok bool) {
	next, ok = m.neighbour(m.agent, d)
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
	b := m.scratch[:0]
	if invalid {
		b = append(b, invalidWord...)
		b = append(b, ' ')
	}
	b = append(b, rowWord(m.agent)...)
	b = append(b, ' ')
	b = append(b, colWord(m.agent)...)
	for d := range numDirections {
		b = append(b, ' ')
		if m.cfg.Labelled {
			b = append(b, d.Word()...)
			b = append(b, '-')
		}
		b = append(b, m.look(m.agent, d).word()...)
	}
	if m.cfg.GoalHint {
		b = m.appendGoalHint(b)
	}
	return string(b)
}

// appendGoalHint appends the goal's direction: its row side, then its column side.
func (m *Maze) appendGoalHint(b []byte) []byte {
	ar, ac, gr, gc := row(m.agent), col(m.agent), row(m.goal), col(m.goal)
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

// endText is the observation of a terminal state: the position and the cell the agent ended on.
func (m *Maze) endText() string {
	return rowWord(m.agent) + " " + colWord(m.agent) + " " + m.cells[m.agent].word()
}

// StateKey returns the agent's cell, "r<R>c<C>"; the rest of the state is fixed by the task.
func (m *Maze) StateKey() string { return grid.CellKey(row(m.agent), col(m.agent)) }

// Vocabulary returns the words of the env (see the package doc): the same for sizes 5..7, and for
// sizes 8..11 those words followed by r7..r10 and c7..c10.
func (m *Maze) Vocabulary() []string {
	if m.cfg.Size > smallSize {
		return strings.Fields(vocabulary + " " + largeWords)
	}
	return strings.Fields(vocabulary)
}

// ActionWords returns the words actions are made of: up, down, left, right.
func (m *Maze) ActionWords() []string { return grid.ActionWords() }

// TurnCap returns the step cap of the current task: max_turns, or ⌈turn_cap_factor × its optimal
// length⌉.
func (m *Maze) TurnCap() int { return m.cap }

// MaxTurns returns the step cap: max_turns, or under turn_cap_factor the cap of the longest task
// a layout of this size can have.
func (m *Maze) MaxTurns() int {
	if m.cfg.TurnCapFactor != 0 {
		return grid.TurnCap(m.cfg.TurnCapFactor, maxDistance(m.cfg.Size))
	}
	return m.cfg.MaxTurns
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
	if !m.fixed && !m.seeded {
		return ""
	}
	return grid.Render(m.size, func(r, c int) byte {
		i := r*stride + c
		ch := byte('.')
		switch {
		case m.started && i == m.agent:
			ch = '@'
		case i == m.start:
			ch = 'S'
		case m.cells[i] == wall:
			ch = '#'
		case m.cells[i] == trap:
			ch = 'T'
		case m.cells[i] == goal:
			ch = 'G'
		}
		return ch
	})
}
