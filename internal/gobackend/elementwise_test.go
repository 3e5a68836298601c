package gobackend

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// TestBinaryFloat32 checks the element-wise kernels bit for bit against Go loops, for lengths
// around the kernels' 16-element blocks.
func TestBinaryFloat32(t *testing.T) {
	if !useAVX {
		t.Skip("no AVX on this machine: the backend's own executors run")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	ops := []struct {
		op binaryOp
		f  func(a, b float32) float32
	}{
		{opMul, func(a, b float32) float32 { return a * b }},
		{opAdd, func(a, b float32) float32 { return a + b }},
		{opSub, func(a, b float32) float32 { return a - b }},
		{opDiv, func(a, b float32) float32 { return a / b }},
	}
	for _, n := range []int{1, 7, 15, 16, 17, 31, 32, 33, 100, 1000} {
		l, r := randomFloats(rng, []int{n}), randomFloats(rng, []int{n})
		for _, o := range ops {
			for _, scalar := range []bool{false, true} {
				rr := r
				if scalar {
					rr = r[:1]
				}
				want := make([]float32, n)
				for i := range want {
					if scalar {
						want[i] = o.f(l[i], rr[0])
					} else {
						want[i] = o.f(l[i], rr[i])
					}
				}
				got := make([]float32, n)
				binaryFloat32(got, l, rr, o.op)
				if !slices.Equal(got, want) {
					t.Fatalf("n %d op %d scalar %v: got %v, want %v", n, o.op, scalar, got, want)
				}
			}
		}
	}
}

// TestBinaryExecutors runs Mul, Add, Sub and Div graphs on the Go backend (same shapes, a scalar
// on either side, and a broadcast the backend handles itself) against Go loops, bit for bit.
func TestBinaryExecutors(t *testing.T) {
	b, err := testBackend()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	x, y, s := randomFloats(rng, []int{3, 37}), randomFloats(rng, []int{3, 37}), randomFloats(rng, []int{1})
	row := randomFloats(rng, []int{1, 37})
	cases := []struct {
		name string
		f    func(a, b *Node) *Node
		a, b *tensors.Tensor
		want func(i int) float32
	}{
		{"mul", Mul, tensors.FromFlatDataAndDimensions(x, 3, 37), tensors.FromFlatDataAndDimensions(y, 3, 37), func(i int) float32 { return x[i] * y[i] }},
		{"add", Add, tensors.FromFlatDataAndDimensions(x, 3, 37), tensors.FromFlatDataAndDimensions(y, 3, 37), func(i int) float32 { return x[i] + y[i] }},
		{"scalar·x", Mul, tensors.FromScalar(s[0]), tensors.FromFlatDataAndDimensions(x, 3, 37), func(i int) float32 { return x[i] * s[0] }},
		{"x+scalar", Add, tensors.FromFlatDataAndDimensions(x, 3, 37), tensors.FromScalar(s[0]), func(i int) float32 { return x[i] + s[0] }},
		{"sub", Sub, tensors.FromFlatDataAndDimensions(x, 3, 37), tensors.FromFlatDataAndDimensions(y, 3, 37), func(i int) float32 { return x[i] - y[i] }},
		{"div", Div, tensors.FromFlatDataAndDimensions(x, 3, 37), tensors.FromFlatDataAndDimensions(y, 3, 37), func(i int) float32 { return x[i] / y[i] }},
		{"x/scalar", Div, tensors.FromFlatDataAndDimensions(x, 3, 37), tensors.FromScalar(s[0]), func(i int) float32 { return x[i] / s[0] }},
		{"scalar−x (the backend's)", Sub, tensors.FromScalar(s[0]), tensors.FromFlatDataAndDimensions(x, 3, 37), func(i int) float32 { return s[0] - x[i] }},
		{"x+row (broadcast)", Add, tensors.FromFlatDataAndDimensions(x, 3, 37), tensors.FromFlatDataAndDimensions(row, 1, 37), func(i int) float32 { return x[i] + row[i%37] }},
	}
	for _, tc := range cases {
		exec := MustNewExec(b, tc.f)
		got := tensors.MustCopyFlatData[float32](exec.MustExec(tc.a, tc.b)[0])
		if len(got) != len(x) {
			t.Fatalf("%s: %d outputs, want %d", tc.name, len(got), len(x))
		}
		for i, g := range got {
			if w := tc.want(i); g != w {
				t.Fatalf("%s: out[%d] = %v, want %v", tc.name, i, g, w)
			}
		}
	}
}

// TestExecutorsWriteInPlaceSafely runs graphs whose intermediates the backend hands to the
// element-wise, unary and scatter executors as owned (so they write into them) next to ones it
// does not (an intermediate read again later must not change), against Go loops, bit for bit.
func TestExecutorsWriteInPlaceSafely(t *testing.T) {
	b, err := testBackend()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(13, 14))
	const n = 3 * 37
	x, y := randomFloats(rng, []int{3, 37}), randomFloats(rng, []int{3, 37})
	exec := MustNewExec(b, func(x, y *Node) *Node {
		z := Mul(x, y)                                         // read twice below: not owned by the first reader
		u := Exp(Tanh(Sub(z, y)))                              // Sub's result owned by Tanh, Tanh's by Exp
		v := Div(Add(z, MulScalar(u, 0.5)), u)                 // Add owns MulScalar's result; Div may own Add's
		return Sub(v, Mul(z, ScalarOne(x.Graph(), x.DType()))) // z read again: must be intact
	})
	got := tensors.MustCopyFlatData[float32](exec.MustExec(tensors.FromFlatDataAndDimensions(x, 3, 37),
		tensors.FromFlatDataAndDimensions(y, 3, 37))[0])
	for i := range n {
		z := x[i] * y[i]
		u := float32(math.Exp(float64(float32(math.Tanh(float64(z - y[i]))))))
		v := (z + u*0.5) / u
		if w := v - z*1; got[i] != w {
			t.Fatalf("out[%d] = %v, want %v", i, got[i], w)
		}
	}
}
