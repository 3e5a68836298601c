package maze

import (
	"strconv"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
	"github.com/graftrl/graftrl/envs/grid/gridtest"
)

// BenchmarkMazeStep measures episodes of random-looking actions on generated tasks, Resets included,
// as the rollout collector drives the env; it reports steps per second.
func BenchmarkMazeStep(b *testing.B) {
	gridtest.BenchmarkSteps(b, func() (envs.Env, error) { return New(DefaultConfig(5)) })
}

// BenchmarkMazeReset measures layout generation for a new task seed.
func BenchmarkMazeReset(b *testing.B) {
	for _, size := range []int{5, 7} {
		b.Run("size"+strconv.Itoa(size), func(b *testing.B) {
			envtest.BenchmarkResets(b, func() (envs.Env, error) { return New(DefaultConfig(size)) })
		})
	}
}
