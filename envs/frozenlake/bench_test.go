package frozenlake

import (
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/grid/gridtest"
)

// BenchmarkFrozenLakeStep measures episodes of random-looking actions on generated lakes, Resets
// included, as the rollout collector drives the env; it reports steps per second.
func BenchmarkFrozenLakeStep(b *testing.B) {
	gridtest.BenchmarkSteps(b, func() (envs.Env, error) { return New(DefaultConfig(DefaultSize)) })
}
