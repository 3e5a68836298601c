package frozenlake

import (
	"math"
	"strconv"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/grid"
)

// TestExpertPlanByHand checks the value iteration on a 2×2 lake, S G over the ice cells A B, with
// slip 0.2 (0.8 ahead, 0.1 to each side; a slip off the lake stays). With one turn left: from S,
// right reaches G with 0.8 (down only by its slip right: 0.1); from A nothing reaches G; from B, up
// with 0.8. With two turns: from S, right is worth 0.8 + 0.1·V1(S) + 0.1·V1(A) = 0.88 (down 0.18);
// from A, up and right are both worth 0.8·0.8 + 0.1·0.8 = 0.72, their cells are both one move from
// G, and the tie goes to up, the first in direction order.
func TestExpertPlanByHand(t *testing.T) {
	cfg := DefaultConfig(DefaultSize)
	cfg.Slip, cfg.MaxTurns = 0.2, 2
	f, err := newFromGrid([]string{"SG", ".."}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.Reset(0); err != nil {
		t.Fatal(err)
	}
	p := f.expertPlan()
	const cellS, cellA, cellB = 0, grid.MaxSide, grid.MaxSide + 1
	for _, c := range []struct {
		h, cell int
		value   float64
		move    direction
	}{
		{1, cellS, 0.8, grid.Right},
		{1, cellB, 0.8, grid.Up},
		{2, cellS, 0.88, grid.Right},
		{2, cellA, 0.72, grid.Up},
	} {
		if got := p.value[c.h][c.cell]; math.Abs(got-c.value) > 1e-12 || direction(p.move[c.h][c.cell]) != c.move {
			t.Errorf("cell %d with %d turns: value %v, move %s; want %v, %s", c.cell, c.h, got, direction(p.move[c.h][c.cell]).Word(), c.value, c.move.Word())
		}
	}
	if got := p.value[1][cellA]; got != 0 {
		t.Errorf("cell A with one turn: value %v, want 0", got)
	}
	if a, _ := f.ExpertAction(); a != "right" {
		t.Errorf("ExpertAction from S with two turns = %q, want right", a)
	}
	if got := f.ExpertSuccess(); math.Abs(got-0.88) > 1e-12 {
		t.Errorf("ExpertSuccess from S = %v, want 0.88", got)
	}
}

// evaluate returns the success probability of a fixed policy (move(h, cell), a direction) from every
// cell with h turns left: the recursion of the value iteration without the max.
func evaluate(l layout, slip float64, turns int, move func(h, i int) direction) [][grid.MaxCells]float64 {
	v := make([][grid.MaxCells]float64, turns+1)
	for h := range v {
		for i := range grid.MaxCells {
			if grid.Row(i) >= l.size || grid.Col(i) >= l.size {
				continue
			}
			switch {
			case l.cells[i] == goal:
				v[h][i] = 1
			case l.cells[i] != hole && h > 0:
				v[h][i] = l.expected(&v[h-1], slip, false, i, move(h, i))
			}
		}
	}
	return v
}

// TestExpertBeatsTheShortestPath checks the optimality of the plan against another policy: walking
// the slip-free shortest path (the greedy move of Info.Distance) succeeds no more often, from any
// cell with any number of turns left, and strictly less often on some lakes.
func TestExpertBeatsTheShortestPath(t *testing.T) {
	better := 0
	for seed := range int64(100) {
		f, _ := New(DefaultConfig(DefaultSize))
		if _, _, err := f.Reset(seed); err != nil {
			t.Fatal(err)
		}
		p := f.expertPlan()
		greedy := evaluate(f.layout, f.cfg.Slip, f.cfg.MaxTurns, func(_, i int) direction {
			best, bestD := direction(-1), math.MaxInt
			for d := range grid.NumDirections {
				if j, ok := grid.Neighbour(i, d, f.size); ok && f.cells[j] != hole && f.dist[j] != unreachable && int(f.dist[j]) < bestD {
					best, bestD = d, int(f.dist[j])
				}
			}
			if best < 0 { // surrounded by holes and edges: any valid move
				for d := range grid.NumDirections {
					if _, ok := grid.Neighbour(i, d, f.size); ok {
						return d
					}
				}
			}
			return best
		})
		own := evaluate(f.layout, f.cfg.Slip, f.cfg.MaxTurns, func(h, i int) direction { return direction(p.move[h][i]) })
		for h := range greedy {
			for i := range grid.MaxCells {
				if math.Abs(own[h][i]-p.value[h][i]) > 1e-12 {
					t.Fatalf("seed %d: V_%d(cell %d) = %v, but the plan's moves are worth %v", seed, h, i, p.value[h][i], own[h][i])
				}
				if greedy[h][i] > p.value[h][i]+1e-12 {
					t.Errorf("seed %d: the shortest path beats the expert from cell %d with %d turns: %v > %v", seed, i, h, greedy[h][i], p.value[h][i])
				}
			}
		}
		if start := f.start; p.value[f.cfg.MaxTurns][start] > greedy[f.cfg.MaxTurns][start]+1e-9 {
			better++
		}
	}
	if better == 0 {
		t.Error("the expert is never better than the slip-free shortest path: the slips are ignored")
	}
	t.Logf("the expert beats the slip-free shortest path from the start of %d of 100 lakes", better)
}

// playExpert plays n episodes of the expert on the task with episode seeds 0..n-1 and returns the
// successes and the value-iteration value of the start.
func playExpert(t *testing.T, cfg Config, task int64, n int) (successes int, value float64) {
	f, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for k := range n {
		f.SeedEpisode(int64(k))
		_, obs, err := f.Reset(task)
		if err != nil {
			t.Fatal(err)
		}
		value = f.ExpertSuccess()
		for !obs.Over() {
			a, err := f.ExpertAction()
			if err != nil {
				t.Fatal(err)
			}
			if obs, _ = f.Step(a); obs.Info.Invalid {
				t.Fatalf("task %d: the expert's %q is invalid", task, a)
			}
		}
		if obs.Info.Success {
			successes++
		}
	}
	return successes, value
}

// TestExpertSuccessMatchesValueIteration checks that the expert's empirical success rate equals the
// value-iteration value of the start within 4 standard errors: on single lakes with many episodes,
// and pooled over a panel of 200 lakes of every size.
func TestExpertSuccessMatchesValueIteration(t *testing.T) {
	check := func(name string, successes, n int, mean, variance float64) {
		t.Helper()
		emp, se := float64(successes)/float64(n), math.Sqrt(variance)/float64(n)
		t.Logf("%s: empirical success %.4f over %d episodes, value iteration %.4f (standard error %.4f)", name, emp, n, mean, se)
		if math.Abs(emp-mean) > 4*se+1e-12 {
			t.Errorf("%s: empirical success %.4f is %.1f standard errors from the value-iteration value %.4f",
				name, emp, math.Abs(emp-mean)/se, mean)
		}
	}
	for _, task := range []int64{0, 1, 2, 3} {
		const n = 4000
		s, v := playExpert(t, DefaultConfig(DefaultSize), task, n)
		check("default lake of task "+strconv.FormatInt(task, 10), s, n, v, n*v*(1-v))
	}
	for size := MinSize; size <= MaxSize; size++ {
		const tasks, n = 200, 25
		total, sum, variance := 0, 0.0, 0.0
		for _, task := range envs.TaskSeeds(envs.Eval, tasks, 0) {
			s, v := playExpert(t, DefaultConfig(size), task, n)
			total, sum, variance = total+s, sum+n*v, variance+n*v*(1-v)
		}
		check("eval panel of size "+strconv.Itoa(size), total, tasks*n, sum/(tasks*n), variance)
	}
}
