package maze

import (
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
	"github.com/graftrl/graftrl/envs/grid/gridtest"
)

// Under turn_cap_factor f every task's cap is ⌈f × its optimal length⌉, the distance to success
// that Reset reports; an episode of invalid actions is truncated on exactly that turn, and
// MaxTurns is the cap of the longest task a layout can have.
func TestTurnCapFactor(t *testing.T) {
	envtest.CheckTurnCaps(t, Name, []int{MinSize, 7, 9, MaxSize}, func(side int) int { return side - 1 }, func(side int) int { return 2 * (side - 1) })
}

// TestTurnCapFactorLargeSizes checks the cap as a multiple of the optimal length at sizes 9 and 11
// against an independent breadth-first search: for f 1.5 and 3 the cap of every task is ⌈f ×
// optimal⌉, MaxTurns is ⌈f × 2(size-1)⌉, and the expert still succeeds in the optimal number of steps.
func TestTurnCapFactorLargeSizes(t *testing.T) {
	for _, size := range []int{9, MaxSize} {
		for _, tc := range []struct {
			f        float64
			maxTurns int // ⌈f × 2(size-1)⌉, worked out by hand
		}{{1.5, 3 * (size - 1)}, {3, 6 * (size - 1)}} {
			cfg := DefaultConfig(size)
			cfg.TurnCapFactor = tc.f
			m, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if m.MaxTurns() != tc.maxTurns {
				t.Errorf("size %d f %g: MaxTurns %d, want %d", size, tc.f, m.MaxTurns(), tc.maxTurns)
			}
			caps := map[int]bool{}
			for seed := int64(0); seed < 100; seed++ {
				envtest.MustReset(t, m, seed)
				optimal := bfsFrom(&m.layout, m.start, m.goal)
				want := (int(2*tc.f)*optimal + 1) / 2 // ⌈f × optimal⌉ for f a multiple of 1/2
				if m.TurnCap() != want || envs.TurnCapOf(m) != want {
					t.Fatalf("size %d f %g seed %d: cap %d, want ⌈%g × %d⌉ = %d", size, tc.f, seed, m.TurnCap(), tc.f, optimal, want)
				}
				caps[want] = true
				if steps, last := gridtest.PlayExpert(t, m); !last.Info.Success || steps != optimal {
					t.Fatalf("size %d f %g seed %d: expert took %d steps (success %v), optimal %d", size, tc.f, seed, steps, last.Info.Success, optimal)
				}
			}
			if len(caps) < 3 {
				t.Errorf("size %d f %g: 100 tasks have %d distinct caps, want a cap per length", size, tc.f, len(caps))
			}
		}
	}
	// Size 11 admits factors up to 100/20 = 5; a larger one is refused, naming the key and range.
	cfg := DefaultConfig(MaxSize)
	cfg.TurnCapFactor = 5.5
	if _, err := New(cfg); err == nil || err.Error() != `env maze: option "turn_cap_factor": 5.5 is out of range (allowed 0 (off) or 1..5 for size 11 (the longest task's cap at most 100 turns))` {
		t.Errorf("turn_cap_factor 5.5 at size 11: %v", err)
	}
}
