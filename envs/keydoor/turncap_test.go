package keydoor

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
	envtest.CheckTurnCaps(t, Name, []int{MinSize, 7, 9, MaxSize}, func(side int) int { return side - 1 }, func(side int) int { return 3*side - 1 })
}

// TestTurnCapFactorLargeSizes checks the cap as a multiple of the optimal length at sizes 9 and 11
// against the oracle's optimal length: for f 1.5 and 3 the cap of every task is ⌈f × optimal⌉,
// MaxTurns is ⌈f × (3·size-1)⌉, and the expert still succeeds in the optimal number of steps.
func TestTurnCapFactorLargeSizes(t *testing.T) {
	for _, size := range []int{9, MaxSize} {
		for _, f := range []float64{1.5, 3} {
			cfg := DefaultConfig(size)
			cfg.TurnCapFactor = f
			k, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ceilHalf := func(d int) int { return (int(2*f)*d + 1) / 2 } // ⌈f × d⌉ for f a multiple of 1/2
			if want := ceilHalf(3*size - 1); k.MaxTurns() != want {
				t.Errorf("size %d f %g: MaxTurns %d, want %d", size, f, k.MaxTurns(), want)
			}
			for seed := int64(0); seed < 30; seed++ {
				envtest.MustReset(t, k, seed)
				optimal := oracle(t, k)[k.StateKey()][0]
				if want := ceilHalf(optimal); k.TurnCap() != want || envs.TurnCapOf(k) != want {
					t.Fatalf("size %d f %g seed %d: cap %d, want ⌈%g × %d⌉ = %d", size, f, seed, k.TurnCap(), f, optimal, want)
				}
				if steps, last := gridtest.PlayExpert(t, k); !last.Info.Success || steps != optimal {
					t.Fatalf("size %d f %g seed %d: expert took %d steps (success %v), optimal %d", size, f, seed, steps, last.Info.Success, optimal)
				}
			}
		}
	}
}
