package sokoban

import (
	"strconv"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
	"github.com/graftrl/graftrl/envs/grid/gridtest"
)

// BenchmarkSokobanStep measures episodes of random-looking actions on generated rooms, Resets
// included, as the rollout collector drives the env; it reports steps per second.
func BenchmarkSokobanStep(b *testing.B) { benchmarkBoxes(b, gridtest.BenchmarkSteps) }

// BenchmarkSokobanReset measures level generation (draws and solver) for a new task seed.
func BenchmarkSokobanReset(b *testing.B) { benchmarkBoxes(b, envtest.BenchmarkResets) }

// benchmarkBoxes runs bench on the default room with one and with two boxes.
func benchmarkBoxes(b *testing.B, bench func(b *testing.B, newEnv func() (envs.Env, error))) {
	for boxes := 1; boxes <= MaxBoxes; boxes++ {
		b.Run("boxes"+strconv.Itoa(boxes), func(b *testing.B) {
			bench(b, func() (envs.Env, error) { return New(DefaultConfig(DefaultSize, boxes)) })
		})
	}
}
