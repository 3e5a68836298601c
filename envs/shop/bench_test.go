package shop

import "testing"

// BenchmarkShopStep measures episodes of random-looking actions on generated catalogues, Resets
// included, as the rollout collector drives the env; it reports steps per second.
func BenchmarkShopStep(b *testing.B) {
	s, err := New(DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	actions := [...]string{"search red shirt", "click i1", "click i2", "select m", "back", "search shoes",
		"click i3", "select s", "jump", "back", "search blue", "click i4", "select l", "buy"}
	seed := int64(0)
	if _, _, err := s.Reset(seed); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		obs, err := s.Step(actions[i%len(actions)])
		if err != nil {
			b.Fatal(err)
		}
		_ = s.StateKey()
		i++
		if obs.Over() {
			// A new task every other episode, so both generation and the cached catalogue are timed.
			seed += int64(i & 1)
			if _, _, err := s.Reset(seed); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
}
