package sokoban

import (
	"strconv"
	"testing"
)

// BenchmarkSokobanStep measures episodes of random-looking actions on generated rooms, Resets
// included, as the rollout collector drives the env; it reports steps per second.
func BenchmarkSokobanStep(b *testing.B) {
	for boxes := 1; boxes <= MaxBoxes; boxes++ {
		b.Run("boxes"+strconv.Itoa(boxes), func(b *testing.B) {
			s, err := New(DefaultConfig(DefaultSize, boxes))
			if err != nil {
				b.Fatal(err)
			}
			actions := [...]string{"up", "right", "down", "left", "right", "jump", "down", "down", "left", "up", "right"}
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
					// A new room every other episode, so both generation and the cached room are timed.
					seed += int64(i & 1)
					if _, _, err := s.Reset(seed); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
		})
	}
}

// BenchmarkSokobanReset measures level generation (draws and solver) for a new task seed.
func BenchmarkSokobanReset(b *testing.B) {
	for boxes := 1; boxes <= MaxBoxes; boxes++ {
		b.Run("boxes"+strconv.Itoa(boxes), func(b *testing.B) {
			s, err := New(DefaultConfig(DefaultSize, boxes))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			seed := int64(0)
			for b.Loop() {
				seed++
				if _, _, err := s.Reset(seed); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
