package maze

import (
	"testing"
)

// BenchmarkMazeStep measures episodes of random-looking actions on generated tasks, Resets included,
// as the rollout collector drives the env; it reports steps per second.
func BenchmarkMazeStep(b *testing.B) {
	m, err := New(DefaultConfig(5))
	if err != nil {
		b.Fatal(err)
	}
	actions := [...]string{"up", "right", "down", "left", "right", "jump", "down", "down", "left", "up", "right"}
	seed := int64(0)
	if _, _, err := m.Reset(seed); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		obs, err := m.Step(actions[i%len(actions)])
		if err != nil {
			b.Fatal(err)
		}
		_ = m.StateKey()
		i++
		if obs.Over() {
			// A new task every other episode, so both layout generation and the cached layout are timed.
			seed += int64(i & 1)
			if _, _, err := m.Reset(seed); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
}

// BenchmarkMazeReset measures layout generation for a new task seed.
func BenchmarkMazeReset(b *testing.B) {
	for _, size := range []int{5, 7} {
		b.Run("size"+string(rune('0'+size)), func(b *testing.B) {
			m, err := New(DefaultConfig(size))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			seed := int64(0)
			for b.Loop() {
				seed++
				if _, _, err := m.Reset(seed); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
