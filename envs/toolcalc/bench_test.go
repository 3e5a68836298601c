package toolcalc

import (
	"strconv"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
)

// BenchmarkToolCalcStep measures episodes of random-looking calls on generated tasks, Resets included,
// as the rollout collector drives the env; it reports steps per second.
func BenchmarkToolCalcStep(b *testing.B) {
	envtest.BenchmarkSteps(b, func() (envs.Env, error) { return New(DefaultConfig(DefaultCalls)) },
		"add 3", "mul 2", "sub 5", "undo", "add 7", "add", "mul 3", "sub 2", "undo", "add 4", "submit")
}

// BenchmarkToolCalcReset measures task generation and the solver for a new task seed, per undo depth.
func BenchmarkToolCalcReset(b *testing.B) {
	for u := 0; u <= MaxUndo; u++ {
		b.Run("undo"+strconv.Itoa(u), func(b *testing.B) {
			envtest.BenchmarkResets(b, func() (envs.Env, error) {
				cfg := DefaultConfig(DefaultCalls)
				cfg.Undo = u
				return New(cfg)
			})
		})
	}
}
