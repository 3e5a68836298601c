package frozenlake

import "testing"

// BenchmarkFrozenLakeStep measures episodes of random-looking actions on generated lakes, Resets
// included, as the rollout collector drives the env; it reports steps per second.
func BenchmarkFrozenLakeStep(b *testing.B) {
	f, err := New(DefaultConfig(DefaultSize))
	if err != nil {
		b.Fatal(err)
	}
	actions := [...]string{"up", "right", "down", "left", "right", "jump", "down", "down", "left", "up", "right"}
	seed := int64(0)
	if _, _, err := f.Reset(seed); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		obs, err := f.Step(actions[i%len(actions)])
		if err != nil {
			b.Fatal(err)
		}
		_ = f.StateKey()
		i++
		if obs.Over() {
			// A new task every other episode, so both generation and the cached layout are timed.
			seed += int64(i & 1)
			if _, _, err := f.Reset(seed); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
}
