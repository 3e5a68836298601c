package frozenlake

import (
	"fmt"
	"math"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/grid"
	"github.com/graftrl/graftrl/internal/interoptest"
)

// The exact transition distribution of a lake, for the gymnasium check
// (scripts/interop/frozenlake_check.py): TestGymnasiumExport checks it against sampled Steps and
// writes it, with the expert's value-iteration success probabilities, as JSON into
// $GRAFTRL_INTEROP_OUT when it is set, else into a temporary directory.

// transition is one outcome of a move: its probability, the next cell (row·size + col, the
// numbering of gymnasium's states), the reward (step reward plus the outcome when it ends the
// episode) and whether it ends the episode.
type transition struct {
	P      float64 `json:"p"`
	Next   int     `json:"next"`
	Reward float64 `json:"reward"`
	Done   bool    `json:"done"`
}

// lakeTransitions is P[s][a] of a lake: for every cell s and move a (in gymnasium's action order
// left, down, right, up) the outcomes with their probabilities, merged by next cell. Terminal
// cells (holes, the goal) have none; a move that is an invalid action has the single outcome of
// staying, with the invalid penalty, and is listed in Invalid.
type lakeTransitions struct {
	Map      string               `json:"map"`
	SlipMode string               `json:"slip_mode"`
	Size     int                  `json:"size"`
	Start    int                  `json:"start"`
	Terminal []int                `json:"terminal"`
	Invalid  [][2]int             `json:"invalid"`
	P        [][][]transition     `json:"P"`
	Expert   []expertSuccessAtCap `json:"expert"`
}

// expertSuccessAtCap is the expert's success probability from the start with max_turns steps.
type expertSuccessAtCap struct {
	MaxTurns int     `json:"max_turns"`
	Success  float64 `json:"success"`
}

// gymnasiumActions are gymnasium's FrozenLake actions 0..3.
var gymnasiumActions = [4]direction{grid.Left, grid.Down, grid.Right, grid.Up}

// cellIndex numbers a cell as gymnasium does.
func (l *layout) cellIndex(i int) int { return grid.Row(i)*l.size + grid.Col(i) }

// transitionsOf derives P[s][a] from the package doc's dynamics and Config's slip modes.
func transitionsOf(f *FrozenLake) lakeTransitions {
	l := &f.layout
	out := lakeTransitions{Map: f.cfg.Map, SlipMode: f.cfg.SlipMode, Size: l.size, Start: l.cellIndex(l.start)}
	ahead, side := 1-f.cfg.Slip, f.cfg.Slip/2
	if f.cfg.gymnasiumSlips() {
		ahead, side = 1.0/3, 1.0/3
	}
	for r := range l.size {
		for c := range l.size {
			i := grid.Index(r, c)
			s := l.cellIndex(i)
			moves := make([][]transition, len(gymnasiumActions))
			out.P = append(out.P, moves)
			if l.cells[i] != ice {
				out.Terminal = append(out.Terminal, s)
				continue
			}
			for a, d := range gymnasiumActions {
				if _, ok := grid.Neighbour(i, d, l.size); !ok && !f.cfg.gymnasiumSlips() {
					out.Invalid = append(out.Invalid, [2]int{s, a})
					moves[a] = []transition{{P: 1, Next: s, Reward: f.cfg.InvalidPenalty}}
					continue
				}
				byNext := map[int]int{}
				for _, o := range []struct {
					d direction
					p float64
				}{{d, ahead}, {turnLeft(d), side}, {turnRight(d), side}} {
					j, ok := grid.Neighbour(i, o.d, l.size)
					if !ok {
						j = i
					}
					if k, seen := byNext[j]; seen {
						moves[a][k].P += o.p
						continue
					}
					t := transition{P: o.p, Next: l.cellIndex(j), Done: l.cells[j] != ice}
					if l.cells[j] == goal {
						t.Reward = f.cfg.SuccessReward
					}
					byNext[j] = len(moves[a])
					moves[a] = append(moves[a], t)
				}
			}
		}
	}
	return out
}

func gymnasiumLake(t *testing.T, m string, maxTurns int) *FrozenLake {
	t.Helper()
	cfg, err := ConfigFromOptions(envs.Options{"map": m, "slip_mode": SlipGymnasium, "max_turns": maxTurns})
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestGymnasiumTransitionsMatchSteps checks transitionsOf against the env itself: from every
// non-terminal cell, every move is stepped n times, each on its own slip seed, and every observed
// outcome must be one that transitionsOf lists, with the reward and end it lists, at a frequency
// within 5 standard errors of its probability. Both slip modes, both standard maps.
func TestGymnasiumTransitionsMatchSteps(t *testing.T) {
	const n = 3000
	for _, c := range []struct{ m, mode string }{
		{MapGymnasium4x4, SlipGymnasium}, {MapGymnasium4x4, SlipPerpendicular},
		{MapGymnasium8x8, SlipGymnasium}, {MapGymnasium8x8, SlipPerpendicular},
	} {
		mode := c.m + " " + c.mode // for the messages
		cfg, err := ConfigFromOptions(envs.Options{"map": c.m, "slip_mode": c.mode})
		if err != nil {
			t.Fatal(err)
		}
		f, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		tr := transitionsOf(f)
		for s, moves := range tr.P {
			i := grid.Index(s/f.size, s%f.size)
			for a, outs := range moves {
				if len(outs) == 0 {
					continue
				}
				counts := make([]int, len(outs))
				for k := range n {
					f.SetSlipSeed(int64(k))
					if _, _, err := f.Reset(0); err != nil {
						t.Fatal(err)
					}
					f.agent = i
					obs, err := f.Step(gymnasiumActions[a].Word())
					if err != nil {
						t.Fatal(err)
					}
					next, found := f.layout.cellIndex(f.agent), false
					for o, want := range outs {
						if want.Next == next {
							found = true
							counts[o]++
							if got := obs.Reward + obs.Outcome; got != want.Reward || obs.Done != want.Done {
								t.Fatalf("%s: cell %d move %d to %d: reward %v, done %v; transitions say %v, %v",
									mode, s, a, next, got, obs.Done, want.Reward, want.Done)
							}
						}
					}
					if !found {
						t.Fatalf("%s: cell %d move %d reached %d, not among %+v", mode, s, a, next, outs)
					}
				}
				sum := 0.0
				for o, want := range outs {
					sum += want.P
					se := math.Sqrt(want.P * (1 - want.P) / n)
					if got := float64(counts[o]) / n; math.Abs(got-want.P) > 5*se+1e-12 {
						t.Errorf("%s: cell %d move %d to %d: frequency %.4f, probability %.4f (5 se %.4f)",
							mode, s, a, want.Next, got, want.P, 5*se)
					}
				}
				if math.Abs(sum-1) > 1e-12 {
					t.Errorf("%s: cell %d move %d: probabilities sum to %v", mode, s, a, sum)
				}
			}
		}
	}
}

// TestGymnasiumExport writes the 4×4 and 8×8 lakes under SlipGymnasium for the gymnasium check,
// with the expert's success probability at the default cap (16 and 32) and at 100, FrozenLake-v1's
// step cap on either map.
func TestGymnasiumExport(t *testing.T) {
	for _, c := range []struct {
		m        string
		terminal int // holes and the goal
		caps     []int
	}{{MapGymnasium4x4, 5, []int{16, 100}}, {MapGymnasium8x8, 11, []int{32, 100}}} {
		tr := transitionsOf(gymnasiumLake(t, c.m, c.caps[0]))
		if len(tr.Invalid) != 0 || len(tr.Terminal) != c.terminal || tr.Start != 0 {
			t.Fatalf("gymnasium %s: %d invalid moves, terminal cells %v, start %d; want none, %d cells and 0",
				c.m, len(tr.Invalid), tr.Terminal, tr.Start, c.terminal)
		}
		for _, turns := range c.caps {
			f := gymnasiumLake(t, c.m, turns)
			if _, _, err := f.Reset(0); err != nil {
				t.Fatal(err)
			}
			tr.Expert = append(tr.Expert, expertSuccessAtCap{turns, f.ExpertSuccess()})
		}
		// Success within more turns can only be likelier.
		if !(tr.Expert[0].Success > 0 && tr.Expert[0].Success < tr.Expert[1].Success && tr.Expert[1].Success < 1) {
			t.Errorf("%s: expert success %+v, want 0 < at %d < at %d < 1", c.m, tr.Expert, c.caps[0], c.caps[1])
		}
		interoptest.WriteJSON(t, fmt.Sprintf("frozenlake_%s.json", tr.Map), tr)
	}
}

// TestGymnasiumEdgeMoves pins the edge rule of the two slip modes on the map's start (r0 c0):
// up is off the lake, invalid under SlipPerpendicular and a valid step under SlipGymnasium.
func TestGymnasiumEdgeMoves(t *testing.T) {
	for _, tc := range []struct {
		mode    string
		valid   int
		invalid bool
	}{{SlipPerpendicular, 2, true}, {SlipGymnasium, 4, false}} {
		f := gymnasiumLake(t, MapGymnasium4x4, 16)
		f.cfg.SlipMode = tc.mode
		if _, _, err := f.Reset(0); err != nil {
			t.Fatal(err)
		}
		if got := len(f.ValidActions()); got != tc.valid {
			t.Errorf("%s: %d valid actions at the start, want %d", tc.mode, got, tc.valid)
		}
		obs, err := f.Step(grid.Up.Word())
		if err != nil {
			t.Fatal(err)
		}
		if obs.Info.Invalid != tc.invalid {
			t.Errorf("%s: up at the start: invalid %v, want %v", tc.mode, obs.Info.Invalid, tc.invalid)
		}
	}
}
