package shop

import (
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
)

// BenchmarkShopStep measures episodes of random-looking actions on generated catalogues, Resets
// included, as the rollout collector drives the env; it reports steps per second.
func BenchmarkShopStep(b *testing.B) {
	envtest.BenchmarkSteps(b, func() (envs.Env, error) { return New(DefaultConfig()) },
		"search red shirt", "click i1", "click i2", "select m", "back", "search shoes",
		"click i3", "select s", "jump", "back", "search blue", "click i4", "select l", "buy")
}
