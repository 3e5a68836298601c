// Package sokoban is the box-pushing environment of graftrl: in a small room walled all around, walk
// the player and push every box onto a target, one move per turn. A box pushed into a corner (or
// along a wall that holds no target) can never be brought back, so the task has irreversible dead
// ends, which the step-level estimators must learn to avoid.
//
// Tasks. The room of a task seed is drawn with a PCG generator seeded by the seed: size×size cells
// (size 5..7, border walls included), interior walls, one target per box, the boxes and the player on
// distinct interior cells, redrawn from the same stream until no box starts on a target and a
// breadth-first solver over (player, boxes) states finds an optimal solution of 4..maxSolution moves
// (with one box 10, 12, 16 for size 5, 6, 7; with two boxes 8, 14, 18). The solver searches backwards
// from the solved states over pulls and labels every state of the room with its optimal number of
// remaining moves, once per task; stepping only reads that table.
//
// Text. Words are separated by single spaces; rows and columns are 0-based, row 0 at the top; the
// border rows and columns are walls and are not listed.
//
//	instruction   target r<R> c<C> ... wall r<R> c<C> ...       target r4 c1 wall r2 c2 wall r3 c4
//	observation   r<R> c<C> <up> <down> <left> <right> r<R> c<C> ...   r2 c3 open box wall open r3 c3
//	invalid       invalid <observation>                         invalid r2 c3 open box wall open r3 c3
//	solved        r<R> c<C> solved                              r2 c3 solved
//
// The instruction lists the target cells and the interior walls. An observation gives the player's
// cell, what lies one move up, down, left and right of it (open, wall or box; targets are not marked),
// then the cell of every box in increasing order. That is 8 words with one box and 10 with two, so an
// episode at the default cap takes about 190 tokens with one box (16 turns) and 250 with two (18).
//
// Actions are the words up, down, left and right, case-insensitive, surrounding spaces ignored. A move
// onto a free cell moves the player; a move onto a box pushes it one cell further when that cell is
// free (neither a wall nor another box). Anything else (other text, a move into a wall, a push against
// a wall or a box) is an invalid action: invalid_penalty as the step reward, no change of state,
// Info.Invalid set. The episode ends with outcome success_reward and Info.Success when every box is on
// a target; after max_turns steps (invalid ones included) it is truncated. A deadlocked room does not
// end the episode, but Info.Distance is envs.DistDead from then on; otherwise it is the optimal number
// of moves left.
//
// The state key is the player's cell followed by the boxes' cells in increasing order, for example
// "r2c3 r3c3"; it identifies a state within one task.
//
// Vocabulary (24 words, the same for every option): r0..r6, c0..c6, open, wall, box, target, up,
// down, left, right, invalid, solved.
//
// Options (see Config): size (default 6), boxes (1; 2 is the harder level), walls (size-4), max_turns
// (the longest accepted optimal solution + 4: 16 for the default room, 18 with two boxes),
// invalid_penalty (-0.1), success_reward (1).
//
// Import the package for its side effect of registering "sokoban" (or import envs/all).
package sokoban

import (
	"strings"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/grid"
)

// direction is a move of the agent, in the order of the observation words.
type direction = grid.Direction

// vocabulary lists every word the env emits or accepts as an action, in a fixed order; the
// position words go up to MaxSize whatever the size, so one vocabulary serves every room.
const vocabulary = "r0 r1 r2 r3 r4 r5 r6 c0 c1 c2 c3 c4 c5 c6 open wall box target up down left right invalid solved"

// Sokoban is one sokoban environment instance (see the package doc). It implements envs.Env,
// envs.Cloner, envs.ValidActioner and envs.Expert; the zero value is not usable, build one with New.
type Sokoban struct {
	cfg Config
	level
	ep     grid.Episode
	player int
	// boxes holds the boxes' cells in increasing order (only the first cfg.Boxes entries are used).
	boxes [2]int
	// scratch holds text while it is built; as an array it is copied, not shared, by Clone.
	scratch [64]byte
}

var (
	_ envs.Env           = (*Sokoban)(nil)
	_ envs.Cloner        = (*Sokoban)(nil)
	_ envs.ValidActioner = (*Sokoban)(nil)
	_ envs.Expert        = (*Sokoban)(nil)
)

// New returns a sokoban environment with the given configuration. Reset must be called before Step.
func New(cfg Config) (*Sokoban, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Sokoban{cfg: cfg}, nil
}

// Config returns the configuration of the environment.
func (s *Sokoban) Config() Config { return s.cfg }

// Reset starts the episode of a task seed (see the package doc for the instruction format).
func (s *Sokoban) Reset(task int64) (string, envs.Observation, error) {
	if err := s.ep.Load(task, func(task int64) error { return s.generate(s.cfg, task) }); err != nil {
		return "", envs.Observation{}, err
	}
	s.player, s.boxes = s.startPlayer, s.startBoxes
	s.ep.Start(s.cfg.MaxTurns)
	return s.instruction(), grid.Moved(s.text(false), s.distance()), nil
}

// instruction lists the targets and the interior walls.
func (s *Sokoban) instruction() string {
	var b strings.Builder
	for _, t := range s.targets[:s.nBoxes] {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("target ")
		b.WriteString(grid.Position(t))
	}
	for r := 1; r < s.size-1; r++ {
		for c := 1; c < s.size-1; c++ {
			if i := grid.Index(r, c); s.wall[i] {
				b.WriteString(" wall ")
				b.WriteString(grid.Position(i))
			}
		}
	}
	return b.String()
}

// Step applies one action (see the package doc). Stepping before Reset or after the episode ended
// is a fault of the caller and returns an error.
func (s *Sokoban) Step(action string) (envs.Observation, error) {
	return s.ep.Step(Name, func() envs.Observation {
		d, ok := grid.ParseDirection(action)
		if ok {
			ok = s.move(d)
		}
		switch {
		case !ok:
			return grid.Invalid(s.cfg.InvalidPenalty, s.text(true), s.distance())
		case s.solved():
			return grid.Success(s.cfg.SuccessReward, grid.EndText(s.player, "solved"))
		}
		return grid.Moved(s.text(false), s.distance())
	})
}

// move applies a move or push in direction d and reports whether it was allowed.
func (s *Sokoban) move(d direction) bool {
	player, boxes, ok := s.moved(d)
	if ok {
		s.player, s.boxes = player, boxes
	}
	return ok
}

// moved returns the state a move or push in direction d leads to, or ok=false when it is not allowed.
func (s *Sokoban) moved(d direction) (player int, boxes [2]int, ok bool) {
	dd := d.Offset()
	next, boxes := s.player+dd, s.boxes
	if s.wall[next] {
		return s.player, boxes, false
	}
	if k := s.boxAt(next); k >= 0 {
		beyond := next + dd
		if s.wall[beyond] || s.boxAt(beyond) >= 0 {
			return s.player, boxes, false
		}
		boxes[k] = beyond
		if s.cfg.Boxes == 2 {
			boxes = sorted(boxes)
		}
	}
	return next, boxes, true
}

// boxAt returns the index in boxes of the box on cell i, or -1.
func (s *Sokoban) boxAt(i int) int {
	for k, b := range s.boxes[:s.cfg.Boxes] {
		if b == i {
			return k
		}
	}
	return -1
}

// solved reports whether every box is on a target.
func (s *Sokoban) solved() bool {
	for _, b := range s.boxes[:s.cfg.Boxes] {
		if !s.target[b] {
			return false
		}
	}
	return true
}

// distance is Info.Distance of the current state, read from the solver table.
func (s *Sokoban) distance() int { return s.distanceOf(s.player, s.boxes) }

// distanceOf is Info.Distance of a state, read from the solver table: 0 when solved.
func (s *Sokoban) distanceOf(player int, boxes [2]int) int {
	d := s.dist[s.index(player, boxes)]
	if d == dead {
		return envs.DistDead
	}
	return int(d)
}

// look returns the word for what lies one move from the player in direction d.
func (s *Sokoban) look(d direction) string {
	i := s.player + d.Offset()
	switch {
	case s.wall[i]:
		return "wall"
	case s.boxAt(i) >= 0:
		return "box"
	}
	return "open"
}

// text is the observation of a non-terminal state, built in scratch so that it costs one allocation.
func (s *Sokoban) text(invalid bool) string {
	b := grid.AppendView(s.scratch[:0], invalid, s.player, s.look)
	for _, x := range s.boxes[:s.cfg.Boxes] {
		b = grid.AppendPosition(append(b, ' '), x)
	}
	return string(b)
}

// StateKey returns the player's cell and the boxes' cells, "r2c3 r3c3" (see the package doc).
func (s *Sokoban) StateKey() string {
	b := s.scratch[:0]
	b = append(b, grid.CellKey(s.player)...)
	for _, x := range s.boxes[:s.cfg.Boxes] {
		b = append(b, ' ')
		b = append(b, grid.CellKey(x)...)
	}
	return string(b)
}

// Vocabulary returns the words of the env (see the package doc), the same for every option.
func (s *Sokoban) Vocabulary() []string { return strings.Fields(vocabulary) }

// ActionWords returns the words actions are made of: up, down, left, right (see envs.ActionWorder).
func (s *Sokoban) ActionWords() []string { return grid.ActionWords() }

// MaxTurns returns the step cap.
func (s *Sokoban) MaxTurns() int { return s.cfg.MaxTurns }

// Clone returns an independent copy of the environment in its current state. The copy shares the
// solver table, which is never written after the level is generated.
func (s *Sokoban) Clone() envs.Env {
	c := *s
	return &c
}

// Legend says what Render's symbols mean (envs.Legender).
func (s *Sokoban) Legend() string {
	return "'#' wall, '@' player ('+' on a target), '$' box ('*' on a target), '.' target, '-' floor; rows r0…, columns 0…"
}

// Render draws the room for people in the usual Sokoban notation, one row per line under a header
// of column numbers: '#' wall, '@' player ('+' on a target), '$' box ('*' on a target), '.' target,
// '-' floor. Before the first Reset of a generated room there is nothing to draw and it returns "".
func (s *Sokoban) Render() string {
	if !s.ep.HasLayout() {
		return ""
	}
	player, boxes := s.startPlayer, s.startBoxes
	if s.ep.Started() {
		player, boxes = s.player, s.boxes
	}
	return grid.Render(s.size, func(i int) byte {
		box := boxes[0] == i || (s.nBoxes == 2 && boxes[1] == i)
		ch := byte('-')
		switch {
		case s.wall[i]:
			ch = '#'
		case i == player && s.target[i]:
			ch = '+'
		case i == player:
			ch = '@'
		case box && s.target[i]:
			ch = '*'
		case box:
			ch = '$'
		case s.target[i]:
			ch = '.'
		}
		return ch
	})
}
