package gobackend

import (
	"math/rand/v2"
	"testing"

	"github.com/graftrl/graftrl/internal/workers"
)

// lmDotCases are the largest products of SmolLM2-135M's train step at T256×B8 (2,048 tokens, the
// output layer at every third position: 768 rows), in the layouts the forward pass and its
// gradients hand the executor.
var lmDotCases = []execCase{
	{"ffn up fwd 2048x576x1536", []int{2048, 576}, []int{1536, 576}, []int{1}, nil, []int{1}, nil},
	{"ffn down fwd 2048x576x1536", []int{2048, 1536}, []int{576, 1536}, []int{1}, nil, []int{1}, nil},
	{"ffn down dx 2048x1536x576", []int{2048, 576}, []int{576, 1536}, []int{1}, nil, []int{0}, nil},
	{"ffn up dx 2048x576x1536", []int{2048, 1536}, []int{1536, 576}, []int{1}, nil, []int{0}, nil},
	{"ffn down dW 1536x576 k2048", []int{2048, 1536}, []int{2048, 576}, []int{0}, nil, []int{0}, nil},
	{"ffn up dW 576x1536 k2048", []int{2048, 576}, []int{2048, 1536}, []int{0}, nil, []int{0}, nil},
	{"logits fwd 768x49152 k576", []int{768, 576}, []int{49152, 576}, []int{1}, nil, []int{1}, nil},
	{"logits dx 768x576 k49152", []int{768, 49152}, []int{49152, 576}, []int{1}, nil, []int{0}, nil},
	{"logits dW 49152x576 k768", []int{768, 49152}, []int{768, 576}, []int{0}, nil, []int{0}, nil},
	{"attention context 24x768x64 k256", []int{8, 3, 256, 3, 256}, []int{8, 256, 3, 64}, []int{4}, []int{0, 1}, []int{1}, []int{0, 2}},
	{"attention scores 24x768x256 k64", []int{8, 256, 3, 3, 64}, []int{8, 256, 3, 64}, []int{4}, []int{0, 2}, []int{3}, []int{0, 2}},
}

// policyDotCases are the weight gradients of the from-scratch policy's MLP (d_ff 4·d) at the
// peers' shapes: d64 at T64×B16 (1,024 rows), d128 at T128×B64 (8,192), d256 at T256×B16
// (4,096), in the layout the gradients hand the executor: both operands contracted over rows.
var policyDotCases = []execCase{
	{"d64 up dW 64x256 k1024", []int{1024, 64}, []int{1024, 256}, []int{0}, nil, []int{0}, nil},
	{"d64 down dW 256x64 k1024", []int{1024, 256}, []int{1024, 64}, []int{0}, nil, []int{0}, nil},
	{"d128 up dW 128x512 k8192", []int{8192, 128}, []int{8192, 512}, []int{0}, nil, []int{0}, nil},
	{"d128 down dW 512x128 k8192", []int{8192, 512}, []int{8192, 128}, []int{0}, nil, []int{0}, nil},
	{"d256 up dW 256x1024 k4096", []int{4096, 256}, []int{4096, 1024}, []int{0}, nil, []int{0}, nil},
	{"d256 down dW 1024x256 k4096", []int{4096, 1024}, []int{4096, 256}, []int{0}, nil, []int{0}, nil},
	{"d128 attention context 256x128x32 k128", []int{64, 4, 128, 128}, []int{64, 128, 4, 32}, []int{3}, []int{0, 1}, []int{1}, []int{0, 2}},
	{"d128 attention dP 256x128x128 k32", []int{64, 128, 4, 32}, []int{64, 128, 4, 32}, []int{3}, []int{0, 2}, []int{3}, []int{0, 2}},
}

// BenchmarkDotLM times the executor's product on lmDotCases with the shared worker pool and
// reports GFLOP/s.
func BenchmarkDotLM(b *testing.B) { benchDot(b, lmDotCases) }

// BenchmarkDotPolicy is BenchmarkDotLM on policyDotCases.
func BenchmarkDotPolicy(b *testing.B) { benchDot(b, policyDotCases) }

// benchDot times dotFloat32 on each case as a sub-benchmark, in GFLOP/s.
func benchDot(b *testing.B, cases []execCase) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, tc := range cases {
		lhs, rhs := randomFloats(rng, tc.lhsDims), randomFloats(rng, tc.rhsDims)
		batch, m, n, k := tc.sizes()
		out := make([]float32, batch*m*n)
		b.Run(tc.name, func(b *testing.B) {
			for range b.N {
				dotFloat32(out, lhs, tc.lhsDims, tc.lhsB, tc.lhsC, rhs, tc.rhsDims, tc.rhsB, tc.rhsC, batch, m, n, k, workers.Shared().Size())
			}
			b.ReportMetric(float64(2*batch*m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
