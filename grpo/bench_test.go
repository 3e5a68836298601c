package grpo

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"

	"github.com/graftrl/graftrl/rollout"
)

// walkBatch is a batch the size of a real iteration: tasks × rollouts random walks on a side×side
// grid from a per-task start to a per-task goal, at most cap steps, with 5 % invalid actions
// (penalty −0.1, no move). Keys are fresh strings, as an environment returns them. (package graft
// has the same workload for all five estimators side by side.)
func walkBatch(tasks, rollouts, side, cap int) *rollout.Batch {
	rng := rand.New(rand.NewPCG(1, 7))
	b := &rollout.Batch{Tasks: tasks}
	key := func(x, y int) string { return "x=" + strconv.Itoa(x) + ",y=" + strconv.Itoa(y) + ",keys=0" }
	dirs := [4][2]int{{0, -1}, {0, 1}, {-1, 0}, {1, 0}}
	for task := 0; task < tasks; task++ {
		sx, sy, gx, gy := rng.IntN(side), rng.IntN(side), rng.IntN(side), rng.IntN(side)
		for r := 0; r < rollouts; r++ {
			t := rollout.Trajectory{Task: task, Steps: make([]rollout.Step, 0, cap)}
			x, y := sx, sy
			k := key(x, y)
			for len(t.Steps) < cap && !(x == gx && y == gy) {
				s := rollout.Step{Key: k, Action: "move"}
				if rng.IntN(20) == 0 {
					s.Reward, s.Invalid = -0.1, true
				} else if d := dirs[rng.IntN(4)]; x+d[0] >= 0 && y+d[1] >= 0 && x+d[0] < side && y+d[1] < side {
					x, y = x+d[0], y+d[1]
					k = key(x, y)
				}
				s.NextKey = k
				t.Steps = append(t.Steps, s)
			}
			if x == gx && y == gy {
				t.Outcome, t.Success = 1, true
			} else {
				t.Truncated = true
			}
			b.Trajs = append(b.Trajs, t)
		}
	}
	return b
}

func bench(b *testing.B, est interface {
	Estimate(*rollout.Batch) (rollout.Advantages, rollout.Diagnostics)
}) {
	batch := walkBatch(2000, 8, 7, 90)
	steps := batch.NumSteps()
	runtime.GC() // collect the generator's garbage outside the timed loop
	b.ResetTimer()
	for b.Loop() {
		est.Estimate(batch)
	}
	b.ReportMetric(float64(steps)*float64(b.N)/b.Elapsed().Seconds(), "steps/s")
}

func BenchmarkGRPO1M(b *testing.B) {
	g, err := New(DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	bench(b, g)
}

func BenchmarkGiGPO1M(b *testing.B) {
	g, err := NewGiGPO(DefaultGiGPOOptions())
	if err != nil {
		b.Fatal(err)
	}
	bench(b, g)
}
