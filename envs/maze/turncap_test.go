package maze

import (
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
	"github.com/graftrl/graftrl/envs/grid"
)

// Under turn_cap_factor f every task's cap is ⌈f × its optimal length⌉, the distance to success
// that Reset reports; an episode of invalid actions is truncated on exactly that turn, and
// MaxTurns is the cap of the longest task a layout can have.
func TestTurnCapFactor(t *testing.T) {
	envtest.CheckTurnCaps(t, []int{MinSize, MaxSize},
		func(side int) int { return side - 1 }, func(side int) int { return 2 * (side - 1) },
		func(f float64, side int) (envs.Env, error) {
			cfg := DefaultConfig(side)
			cfg.TurnCapFactor = f
			return New(cfg)
		})
	// 1.1 × 10 is 11 turns, not 12 (float64 gives 11.000000000000002).
	if got := grid.TurnCap(1.1, 10); got != 11 {
		t.Errorf("grid.TurnCap(1.1, 10) = %d, want 11", got)
	}
}

// The per-task cap keeps every property of the env contract, at the largest size and factor.
func TestTurnCapFactorConformance(t *testing.T) {
	cfg := DefaultConfig(MaxSize)
	cfg.TurnCapFactor = 3
	envtest.RunWithExpert(t, func() (envs.Env, error) { return New(cfg) }, suiteOptions()...)
}
