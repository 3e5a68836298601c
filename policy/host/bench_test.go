package host

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkHostDecodeStep times one host KV-cache decode step (one token per row) at the
// quickstart size. Rows sit at staggered positions that cycle through the whole context, so the
// attention length averages ~MaxLen/2 as in a real rollout. Run with -cpu 1,2 and compare with
// BenchmarkDecodeStep (the GoMLX decoder).
func BenchmarkHostDecodeStep(b *testing.B) {
	for _, rows := range []int{1, 16, 64, 128} {
		b.Run(fmt.Sprintf("B%d", rows), func(b *testing.B) {
			c := benchConfig()
			h, err := New(c, initialWeights(b, c, 7))
			if err != nil {
				b.Fatal(err)
			}
			d := h.NewDecoder(rows)
			rng := rand.New(rand.NewPCG(1, 1))
			tokens := hostRandomTokens(rng, 1024*rows, c.Vocab) // a fresh token per row and step
			pos := make([]int32, rows)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				for r := range pos {
					pos[r] = int32((i + r*c.MaxLen/rows) % c.MaxLen)
				}
				k := i % 1024 * rows
				if _, err := d.Step(tokens[k:k+rows], pos, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}
