package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkMatmulGroups times one core's product of n row-major rows of k values by ng groups
// of 16 columns (w row-major, [k, 16·ng]) on each groups kernel the CPU runs (fma: the 8-lane
// kernel; avx512: the 16-lane one) and on the 4-wide panels over the same columns, in GFLOP/s:
// operands in cache (16 to 48 rows, as the host decoder's batched step and a block of the
// training step's rows), and SmolLM2's 576-step sums across 36 groups at 16 rows.
func BenchmarkMatmulGroups(b *testing.B) {
	randoms := normals(rand.New(rand.NewPCG(1, 2)))
	for _, c := range []struct{ n, k, ng int }{{48, 64, 4}, {48, 256, 4}, {96, 128, 8}, {16, 576, 36}} {
		x, w := randoms(c.n*c.k), randoms(c.k*16*c.ng)
		out := make([]float32, c.n*16*c.ng)
		flops := float64(2 * c.n * c.k * 16 * c.ng)
		name := fmt.Sprintf("n%d_k%d_groups%d", c.n, c.k, c.ng)
		for _, wide := range []bool{false, true} {
			if !HasGroups() || wide && !HasAVX512() {
				continue
			}
			kind := "fma"
			if wide {
				kind = "avx512"
			}
			b.Run(name+"/"+kind, func(b *testing.B) {
				for range b.N {
					matmulGroupsOn(wide, out, 16*c.ng, x, c.k, 1, c.n, c.k, w, 16*c.ng, 16, c.ng, nil, EpiStore)
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
		b.Run(name+"/panels", func(b *testing.B) {
			p := make([][4]float32, c.k*c.ng*4)
			PackPanels(p, w, c.k, 16*c.ng, 1)
			zeros := make([]float32, 16*c.ng)
			for range b.N {
				MatmulPanels(out, 16*c.ng, x, c.k, c.n, c.k, p, c.k, 4*c.ng, zeros, EpiStore)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
