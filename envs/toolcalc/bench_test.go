package toolcalc

import (
	"strconv"
	"testing"
)

// BenchmarkToolCalcStep measures episodes of random-looking calls on generated tasks, Resets included,
// as the rollout collector drives the env; it reports steps per second.
func BenchmarkToolCalcStep(b *testing.B) {
	e, err := New(DefaultConfig(DefaultCalls))
	if err != nil {
		b.Fatal(err)
	}
	calls := [...]string{"add 3", "mul 2", "sub 5", "undo", "add 7", "add", "mul 3", "sub 2", "undo", "add 4", "submit"}
	seed := int64(0)
	if _, _, err := e.Reset(seed); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		obs, err := e.Step(calls[i%len(calls)])
		if err != nil {
			b.Fatal(err)
		}
		_ = e.StateKey()
		i++
		if obs.Over() {
			// A new task every other episode, so both generation and the cached task are timed.
			seed += int64(i & 1)
			if _, _, err := e.Reset(seed); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
}

// BenchmarkToolCalcReset measures task generation and the solver for a new task seed, per undo depth.
func BenchmarkToolCalcReset(b *testing.B) {
	for u := 0; u <= MaxUndo; u++ {
		b.Run("undo"+strconv.Itoa(u), func(b *testing.B) {
			cfg := DefaultConfig(DefaultCalls)
			cfg.Undo = u
			e, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			seed := int64(0)
			for b.Loop() {
				seed++
				if _, _, err := e.Reset(seed); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
