package frozenlake

import (
	"fmt"
	"math"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/grid"
)

// tieTolerance is how close two success probabilities must be for the expert to treat them as
// equal and break the tie; far below the sampling error of any experiment, far above rounding.
const tieTolerance = 1e-12

// plan is the expert's policy of one lake: the success-maximising policy of the slippery dynamics
// under the step cap, by finite-horizon value iteration over (turns left, cell). value[h][i] is the
// probability of reaching the goal from cell i within h more steps when the expert plays, and
// move[h][i] the expert's move there (-1 on the goal and in holes, where no move is made).
type plan struct {
	// The lake and the options the plan was computed for; it serves only those.
	lake      layout
	slip      float64
	gymnasium bool // SlipGymnasium's dynamics
	turns     int
	value     [][grid.MaxCells]float64
	move      [][grid.MaxCells]int8
}

// newPlan runs value iteration (the Bellman optimality equation of success probability, with turns
// left as the horizon) on a lake:
//
//	V_0(i) = 1 on the goal, 0 elsewhere; V_h(goal) = 1, V_h(hole) = 0;
//	V_h(i) = max over valid moves a of Q_h(i, a),
//	Q_h(i, a) = (1−slip)·V_{h−1}(i ⊕ a) + slip/2·V_{h−1}(i ⊕ left(a)) + slip/2·V_{h−1}(i ⊕ right(a)),
//
// where i ⊕ a is the cell a move a from i lands on (i itself against the edge). A move is valid when
// its intended cell is on the lake: an invalid action only spends a turn, which never raises the
// probability (V_h is nondecreasing in h). Ties (within tieTolerance) go to the move whose intended
// cell is closest to the goal without slips, then to the first in the order up, down, left, right;
// V_h(i) is the value of the move chosen, so it is exactly the expert's success probability.
//
// Under SlipGymnasium (gymnasium true) every move is valid and Q_h(i, a) weighs the three cells 1/3
// each, a move off the lake landing on i.
func newPlan(lake layout, slip float64, gymnasium bool, turns int) *plan {
	p := &plan{lake: lake, slip: slip, gymnasium: gymnasium, turns: turns,
		value: make([][grid.MaxCells]float64, turns+1), move: make([][grid.MaxCells]int8, turns+1)}
	// slipFree ranks a move by the slip-free distance of its intended cell; holes and cells cut off
	// from the goal come last.
	slipFree := func(j int) int {
		if lake.cells[j] == hole || lake.dist[j] == unreachable {
			return math.MaxInt
		}
		return int(lake.dist[j])
	}
	for h := range p.value {
		for r := range lake.size {
			for c := range lake.size {
				i := grid.Index(r, c)
				p.move[h][i] = -1
				switch {
				case lake.cells[i] == goal:
					p.value[h][i] = 1
					continue
				case lake.cells[i] == hole || h == 0:
					continue
				}
				prev := &p.value[h-1]
				var q [grid.NumDirections]float64
				best := math.Inf(-1)
				for d := range grid.NumDirections {
					q[d] = math.Inf(-1)
					if _, ok := grid.Neighbour(i, d, lake.size); ok || gymnasium {
						q[d] = lake.expected(prev, slip, gymnasium, i, d)
						best = max(best, q[d])
					}
				}
				if math.IsInf(best, -1) {
					continue // no valid move: impossible on a lake of side 2 or more
				}
				chosen, rank := -1, 0
				for d := range grid.NumDirections {
					if q[d] < best-tieTolerance {
						continue
					}
					j, ok := grid.Neighbour(i, d, lake.size)
					if !ok {
						j = i // a move towards the edge, valid under SlipGymnasium
					}
					if chosen < 0 || slipFree(j) < rank {
						chosen, rank = int(d), slipFree(j)
					}
				}
				p.move[h][i], p.value[h][i] = int8(chosen), q[chosen]
			}
		}
	}
	return p
}

// expected is Q_h(i, d) of newPlan: the mean of v (the values with one turn less) over the cells a
// move from i in direction d lands on, weighted by the slip probabilities.
func (l *layout) expected(v *[grid.MaxCells]float64, slip float64, gymnasium bool, i int, d direction) float64 {
	land := func(d direction) int {
		if j, ok := grid.Neighbour(i, d, l.size); ok {
			return j
		}
		return i // against the edge
	}
	if gymnasium {
		return (v[land(d)] + v[land(turnLeft(d))] + v[land(turnRight(d))]) / 3
	}
	return (1-slip)*v[land(d)] + slip/2*v[land(turnLeft(d))] + slip/2*v[land(turnRight(d))]
}

// expertPlan returns the plan of the current lake, computing it on first use. A new lake or new
// options get a new plan; clones share the old one, which is never written.
func (f *FrozenLake) expertPlan() *plan {
	if p := f.plan; p != nil && p.lake == f.layout && p.slip == f.cfg.Slip && p.gymnasium == f.cfg.gymnasiumSlips() && p.turns == f.cfg.MaxTurns {
		return p
	}
	f.plan = newPlan(f.layout, f.cfg.Slip, f.cfg.gymnasiumSlips(), f.cfg.MaxTurns)
	return f.plan
}

// ValidActions returns the moves whose intended cell is on the lake, in the order up, down, left,
// right (a move into a hole is valid; see envs.ValidActioner).
func (f *FrozenLake) ValidActions() []string {
	return grid.ValidMoves(f.ep.Running(), func(d direction) (int, bool) {
		_, ok := grid.Neighbour(f.agent, d, f.size)
		return envs.DistUnknown, ok || f.cfg.gymnasiumSlips()
	})
}

// ExpertAction returns the move that maximises the probability of reaching the goal before the step
// cap from the agent's cell with the turns left, by value iteration over the slippery dynamics
// (computed once per lake; see newPlan for the equations and the tie-break). It depends on the cell
// and the turn, not on the slips to come (see envs.Expert).
func (f *FrozenLake) ExpertAction() (string, error) {
	if f.ep.Running() {
		if d := f.expertPlan().move[f.cfg.MaxTurns-f.ep.Turn()][f.agent]; d >= 0 {
			return direction(d).Word(), nil
		}
	}
	return "", fmt.Errorf("frozenlake: %w", envs.ErrNoAction)
}

// ExpertSuccess returns the probability that the expert (ExpertAction at every step) reaches the
// goal from the current state before the step cap: the value-iteration value of the agent's cell
// with the turns left. It is 0 when no episode is running.
func (f *FrozenLake) ExpertSuccess() float64 {
	if !f.ep.Running() {
		return 0
	}
	return f.expertPlan().value[f.cfg.MaxTurns-f.ep.Turn()][f.agent]
}
