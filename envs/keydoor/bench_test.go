package keydoor

import (
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/grid/gridtest"
)

// BenchmarkKeyDoorStep measures episodes of random-looking actions on generated tasks, Resets
// included, as the rollout collector drives the env; it reports steps per second.
func BenchmarkKeyDoorStep(b *testing.B) {
	gridtest.BenchmarkSteps(b, func() (envs.Env, error) { return New(DefaultConfig(DefaultSize)) })
}
