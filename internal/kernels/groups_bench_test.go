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

// BenchmarkMatmulGroupsStream times one core's batch-16 decoding product the way the host
// decoder runs it on the FMA kernel (policy/host panels.mulParts: weights [ng][576][16], pairs of
// groups a call, in parts of 256 steps), in GFLOP/s, over weights that stay in cache (8 groups,
// 288 KB) and over 150 MB of them (4,096 groups), which come from memory once a step as
// SmolLM2's 540 MB do.
func BenchmarkMatmulGroupsStream(b *testing.B) {
	if !HasGroups() {
		b.Skip("no groups kernel on this CPU")
	}
	const n, k, part = 16, 576, 256
	randoms := normals(rand.New(rand.NewPCG(1, 2)))
	x := randoms(n * k)
	sums, odd := make([]float32, n*32), make([]float32, n*32)
	for _, ng := range []int{8, 4096} {
		w := randoms(ng * k * 16)
		b.Run(fmt.Sprintf("groups%d", ng), func(b *testing.B) {
			for range b.N {
				for g := 0; g < ng; g += 2 {
					for k0 := 0; k0 < k; k0 += part {
						kk := min(part, k-k0)
						p := GroupsPart{Resume: k0 > 0, Split: k0+kk < k}
						MatmulGroupsPart(sums, odd, 32, x[k0:], k, 1, n, kk, w[g*16*k+16*k0:], 16, 16*k, 2, nil, EpiStore, p)
					}
				}
			}
			b.ReportMetric(float64(2*n*k*16*ng)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
