package keydoor

import (
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
)

// Under turn_cap_factor f every task's cap is ⌈f × its optimal length⌉, the distance to success
// that Reset reports; an episode of invalid actions is truncated on exactly that turn, and
// MaxTurns is the cap of the longest task a layout can have.
func TestTurnCapFactor(t *testing.T) {
	envtest.CheckTurnCaps(t, []int{MinSize, MaxSize},
		func(side int) int { return side - 1 }, func(side int) int { return 3*side - 1 },
		func(f float64, side int) (envs.Env, error) {
			cfg := DefaultConfig(side)
			cfg.TurnCapFactor = f
			return New(cfg)
		})
}

// The per-task cap keeps every property of the env contract, at the largest size and factor.
func TestTurnCapFactorConformance(t *testing.T) {
	cfg := DefaultConfig(MaxSize)
	cfg.TurnCapFactor = 3
	envtest.RunWithExpert(t, func() (envs.Env, error) { return New(cfg) }, suiteOptions()...)
}
