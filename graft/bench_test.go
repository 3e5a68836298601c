package graft

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"

	"github.com/graftrl/graftrl/grpo"
	"github.com/graftrl/graftrl/rollout"
)

// gridBatch simulates a batch the size of a real iteration: tasks × rollouts episodes of a
// partly trained policy on a side×side grid, up to cap steps each. Every task has its own start
// and goal; a step moves towards the goal with probability bias, otherwise in a random direction
// (bumping into a wall is a self-loop), and with probability 0.05 is an invalid action (penalty
// −0.1, no move). Keys are fresh strings per visited state, as an environment would return them,
// so merging (5–20 steps per node) happens in the estimator, not by pointer identity.
func gridBatch(seed uint64, tasks, rollouts, side, cap int, bias float64) *rollout.Batch {
	rng := rand.New(rand.NewPCG(seed, 7))
	b := &rollout.Batch{Tasks: tasks}
	key := func(x, y int) string { return "x=" + strconv.Itoa(x) + ",y=" + strconv.Itoa(y) + ",keys=0" }
	moves := []struct {
		name   string
		dx, dy int
	}{{"move north", 0, -1}, {"move south", 0, 1}, {"move west", -1, 0}, {"move east", 1, 0}}
	for task := 0; task < tasks; task++ {
		sx, sy := rng.IntN(side), rng.IntN(side)
		gx, gy := rng.IntN(side), rng.IntN(side)
		for gx == sx && gy == sy {
			gx, gy = rng.IntN(side), rng.IntN(side)
		}
		for r := 0; r < rollouts; r++ {
			t := rollout.Trajectory{Task: task, TaskSeed: int64(task), Steps: make([]rollout.Step, 0, cap)}
			x, y := sx, sy
			k := key(x, y)
			for len(t.Steps) < cap {
				s := rollout.Step{Key: k, Distance: -1}
				switch p := rng.Float64(); {
				case p < 0.05:
					s.Action, s.Reward, s.Invalid = "jump", -0.1, true
				default:
					m := moves[rng.IntN(4)]
					if p < 0.05+bias { // towards the goal
						switch {
						case gx > x:
							m = moves[3]
						case gx < x:
							m = moves[2]
						case gy > y:
							m = moves[1]
						default:
							m = moves[0]
						}
					}
					s.Action = m.name
					if nx, ny := x+m.dx, y+m.dy; nx >= 0 && ny >= 0 && nx < side && ny < side {
						x, y = nx, ny
						k = key(x, y)
					}
				}
				s.NextKey = k
				t.Steps = append(t.Steps, s)
				if x == gx && y == gy {
					t.Outcome, t.Success = 1, true
					break
				}
			}
			t.Truncated = !t.Success
			b.Trajs = append(b.Trajs, t)
		}
	}
	return b
}

func benchmarkEstimator(b *testing.B, est interface {
	Estimate(*rollout.Batch) (rollout.Advantages, rollout.Diagnostics)
}) {
	batch := gridBatch(1, 2000, 8, 7, 90, 0)
	steps := batch.NumSteps()
	runtime.GC() // collect the generator's garbage outside the timed loop
	b.ResetTimer()
	var d rollout.Diagnostics
	for b.Loop() {
		_, d = est.Estimate(batch)
	}
	b.ReportMetric(float64(steps)*float64(b.N)/b.Elapsed().Seconds(), "steps/s")
	b.ReportMetric(float64(steps), "steps")
	for _, k := range []string{"merge_ratio", "singleton_share", "sweeps"} {
		if v, ok := d[k]; ok {
			b.ReportMetric(v, k)
		}
	}
}

func BenchmarkGRAFT1M(b *testing.B) {
	x, err := New(DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	benchmarkEstimator(b, x)
}

func BenchmarkGRAFT1MPaper(b *testing.B) {
	o := DefaultOptions()
	o.Mode = ModePaper
	x, err := New(o)
	if err != nil {
		b.Fatal(err)
	}
	benchmarkEstimator(b, x)
}

func BenchmarkGRAFT1MUniform(b *testing.B) {
	o := DefaultOptions()
	o.PolicyWeighting = WeightUniform
	x, err := New(o)
	if err != nil {
		b.Fatal(err)
	}
	benchmarkEstimator(b, x)
}

func BenchmarkGraphGPO1M(b *testing.B) {
	x, err := NewGraphGPO(DefaultGraphGPOOptions())
	if err != nil {
		b.Fatal(err)
	}
	benchmarkEstimator(b, x)
}

func BenchmarkGiGPO1M(b *testing.B) {
	x, err := grpo.NewGiGPO(grpo.DefaultGiGPOOptions())
	if err != nil {
		b.Fatal(err)
	}
	benchmarkEstimator(b, x)
}

func BenchmarkGRPO1M(b *testing.B) {
	x, err := grpo.New(grpo.DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	benchmarkEstimator(b, x)
}
