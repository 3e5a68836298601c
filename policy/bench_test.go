package policy

import (
	"fmt"
	"testing"

	"github.com/graftrl/graftrl/policy/spec"
)

// benchConfig is the quickstart architecture with a 64-token vocabulary.
func benchConfig() Config {
	c := spec.DefaultConfig()
	c.Vocab = 64
	return c
}

// BenchmarkTrainStep times forward + backward + Adam at the quickstart shape (T64×B16) and 4× it.
func BenchmarkTrainStep(b *testing.B) {
	for _, rows := range []int{16, 64} {
		b.Run(fmt.Sprintf("T64xB%d", rows), func(b *testing.B) {
			c := benchConfig()
			p := newTestPolicy(b, c, spec.DefaultLossConfig())
			tb := SyntheticBatch(c, rows, 64, 1)
			if _, err := p.Update(tb, 1e-4); err != nil { // compile outside the timing
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if _, err := p.Update(tb, 1e-4); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rows*64*b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkDecodeStep times one KV-cache decode step (one token per row) on the GoMLX backend.
func BenchmarkDecodeStep(b *testing.B) {
	for _, rows := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("B%d", rows), func(b *testing.B) {
			c := benchConfig()
			p := newTestPolicy(b, c, spec.DefaultLossConfig())
			d := p.NewDecoder(rows)
			tok, pos := make([]int32, rows), make([]int32, rows)
			if _, err := d.Step(tok, pos); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				for r := range pos {
					pos[r] = int32(i % c.MaxLen)
				}
				if _, err := d.Step(tok, pos); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}
