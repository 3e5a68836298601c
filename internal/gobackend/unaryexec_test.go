package gobackend

import (
	"math"
	"math/rand/v2"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/graftrl/graftrl/internal/kernels"
)

// unaryCases are the functions with a kernel and the math function each must reproduce.
var unaryCases = []struct {
	name string
	f    func(dst, src []float32)
	math func(float64) float64
	op   func(*Node) *Node
}{
	{"exp", expFloat32, math.Exp, Exp},
	{"tanh", tanhFloat32, math.Tanh, Tanh},
	{"logistic", logisticFloat32, kernels.Logistic, Logistic},
	{"sqrt", sqrtFloat32, math.Sqrt, Sqrt},
}

// unaryProbe returns float32 values for the kernel tests: random bit patterns (every exponent,
// NaNs, infinities, denormals) and a dense sweep of [-120, 120], where both functions change
// branch, in an order that puts special values inside groups of four.
func unaryProbe(rng *rand.Rand, n int) []float32 {
	out := make([]float32, 0, 2*n)
	for range n {
		out = append(out, math.Float32frombits(rng.Uint32()))
	}
	for i := range n {
		out = append(out, float32(-120+240*float64(i)/float64(n)))
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// TestUnaryKernelsBitExact checks the Exp, Tanh, Logistic and Sqrt kernels against float32(math.F(float64(x)))
// bit for bit on a million values, and at lengths around their groups of four (sixteen for Sqrt).
func TestUnaryKernelsBitExact(t *testing.T) {
	if !haveUnaryKernels {
		t.Skip("no AVX2/FMA on this machine: the backend's own executors run")
	}
	rng := rand.New(rand.NewPCG(21, 22))
	x := unaryProbe(rng, 1<<19)
	for _, c := range unaryCases {
		for _, n := range []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17, 18, 19, 31, len(x)} {
			got := make([]float32, n)
			c.f(got, x[:n])
			for i, v := range got {
				if w := float32(c.math(float64(x[i]))); math.Float32bits(v) != math.Float32bits(w) {
					t.Fatalf("%s(%v) (bits %#x) = %v, math gives %v", c.name, x[i], math.Float32bits(x[i]), v, w)
				}
			}
		}
	}
	if !kernels.UnaryExact() {
		t.Fatal("start-up check rejects the kernels")
	}
}

// TestUnaryExecutors runs Exp, Tanh, Logistic and Sqrt graphs on the Go backend against math bit for bit.
func TestUnaryExecutors(t *testing.T) {
	b, err := testBackend()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(23, 24))
	for _, n := range []int{37, 50003} {
		x := unaryProbe(rng, n/2+1)[:n]
		for _, c := range unaryCases {
			exec := MustNewExec(b, c.op)
			got := tensors.MustCopyFlatData[float32](exec.MustExec(tensors.FromFlatDataAndDimensions(x, n))[0])
			for i, v := range got {
				if w := float32(c.math(float64(x[i]))); math.Float32bits(v) != math.Float32bits(w) {
					t.Fatalf("%s graph, n %d: out[%d] for %v = %v, math gives %v", c.name, n, i, x[i], v, w)
				}
			}
		}
	}
}

// TestNegExecutor runs Neg graphs on the Go backend against a Go loop bit for bit (NaNs, zeros
// and infinities included), below and above the size split across the worker pool.
func TestNegExecutor(t *testing.T) {
	b, err := testBackend()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(27, 28))
	for _, n := range []int{37, 50003} {
		x := unaryProbe(rng, n/2+1)[:n]
		x[0], x[1] = float32(math.Copysign(0, -1)), float32(math.NaN())
		exec := MustNewExec(b, Neg)
		got := tensors.MustCopyFlatData[float32](exec.MustExec(tensors.FromFlatDataAndDimensions(x, n))[0])
		for i, v := range got {
			if math.Float32bits(v) != math.Float32bits(x[i])^(1<<31) {
				t.Fatalf("Neg graph, n %d: out[%d] for %v = %v", n, i, x[i], v)
			}
		}
	}
}

// BenchmarkUnary compares the kernels with the backend's scalar loop on a GELU-sized tensor.
func BenchmarkUnary(b *testing.B) {
	x := unaryProbe(rand.New(rand.NewPCG(25, 26)), 1<<17)
	for i := range x { // the values a softmax or GELU sees
		x[i] = float32(math.Mod(float64(x[i]), 8))
		if x[i] != x[i] {
			x[i] = 0.5
		}
	}
	dst := make([]float32, len(x))
	for _, c := range unaryCases {
		b.Run(c.name+"/kernel", func(b *testing.B) {
			for range b.N {
				c.f(dst, x)
			}
		})
		b.Run(c.name+"/math", func(b *testing.B) {
			for range b.N {
				for i, v := range x {
					dst[i] = float32(c.math(float64(v)))
				}
			}
		})
	}
}
