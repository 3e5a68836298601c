package maze

import (
	"math"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
)

// Under turn_cap_factor f every task's cap is ⌈f × its optimal length⌉, the start's BFS distance
// to the goal as Reset reports it: an episode of invalid moves (a wall hugged, or gibberish) is
// truncated on exactly that turn and not before, the cap depends only on the task seed, and
// MaxTurns bounds every task's cap by the longest task a layout can have.
func TestTurnCapFactor(t *testing.T) {
	for _, f := range []float64{1, 1.5, 3} {
		for size := MinSize; size <= MaxSize; size++ {
			cfg := DefaultConfig(size)
			cfg.TurnCapFactor = f
			m, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			bound := int(math.Ceil(f * float64(2*(size-1))))
			if m.MaxTurns() != bound {
				t.Errorf("f %g size %d: MaxTurns %d, want %d", f, size, m.MaxTurns(), bound)
			}
			for seed := int64(0); seed < 20; seed++ {
				_, obs := envtest.MustReset(t, m, seed)
				d := obs.Info.Distance
				if d < size-1 || d > 2*(size-1) {
					t.Fatalf("seed %d: optimal length %d outside %d..%d", seed, d, size-1, 2*(size-1))
				}
				want := int(math.Ceil(f * float64(d)))
				turns := 0
				for {
					obs = envtest.MustStep(t, m, "x")
					turns++
					if obs.Over() {
						break
					}
				}
				if !obs.Truncated || turns != want || want > bound {
					t.Errorf("f %g size %d seed %d: truncated %v after %d turns, want after ⌈%g×%d⌉ = %d (bound %d)",
						f, size, seed, obs.Truncated, turns, f, d, want, bound)
				}
			}
		}
	}
	// 1.1 × 10 is 11 turns, not 12 (float64 gives 11.000000000000002).
	if got := turnCap(1.1, 10); got != 11 {
		t.Errorf("turnCap(1.1, 10) = %d, want 11", got)
	}
}

// The per-task cap keeps every property of the env contract, at the largest size and factor.
func TestTurnCapFactorConformance(t *testing.T) {
	cfg := DefaultConfig(MaxSize)
	cfg.TurnCapFactor = 3
	envtest.RunWithExpert(t, func() (envs.Env, error) { return New(cfg) }, suiteOptions()...)
	if _, err := envs.New(Name, envs.Options{"size": 7, "turn_cap_factor": 1.5}); err != nil {
		t.Errorf("size 7, turn_cap_factor 1.5: %v", err)
	}
}
