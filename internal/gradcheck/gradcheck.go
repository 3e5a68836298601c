// Package gradcheck checks GoMLX gradients against central finite differences in float64. It is
// used by the tests of policy and internal/gobackend, which re-register gradients and replace
// executors, and holds no state.
package gradcheck

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// Eps is the finite-difference step and Tol the agreement required, relative to 1+|fd|.
const (
	Eps = 1e-6
	Tol = 1e-6
)

// Check compares the gradient of the scalar function f of one float64 input of shape dims with
// central finite differences at every entry of a random input, and fails t at the first entry
// that disagrees.
func Check(t testing.TB, b backends.Backend, name string, dims []int, f func(x *graph.Node) *graph.Node) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 8))
	x := Normals(rng, Size(dims))
	gradExec := graph.MustNewExec(b, func(x *graph.Node) []*graph.Node {
		y := f(x)
		return []*graph.Node{y, graph.Gradient(y, x)[0]}
	})
	valExec := graph.MustNewExec(b, f)
	grad := tensors.MustCopyFlatData[float64](gradExec.MustExec(tensors.FromFlatDataAndDimensions(x, dims...))[1])
	eval := func(x []float64) float64 {
		return tensors.ToScalar[float64](valExec.MustExec(tensors.FromFlatDataAndDimensions(x, dims...))[0])
	}
	Compare(t, name, x, grad, eval)
}

// Compare checks grad, the gradient of f at x, against central finite differences at every entry
// of x (which it perturbs and restores), failing t at the first entry that disagrees.
func Compare(t testing.TB, name string, x, grad []float64, f func([]float64) float64) {
	t.Helper()
	for i := range x {
		orig := x[i]
		x[i] = orig + Eps
		up := f(x)
		x[i] = orig - Eps
		down := f(x)
		x[i] = orig
		if fd := (up - down) / (2 * Eps); math.Abs(fd-grad[i]) > Tol*(1+math.Abs(fd)) {
			t.Fatalf("%s[%d]: gradient %g, finite difference %g", name, i, grad[i], fd)
		}
	}
}

// Weighted is Σ w ⊙ y for a fixed pseudo-random w, so that every output entry has its own,
// non-trivial weight in the loss.
func Weighted(y *graph.Node) *graph.Node {
	w := make([]float64, y.Shape().Size())
	for i := range w {
		w[i] = math.Sin(float64(3*i + 1))
	}
	return graph.ReduceAllSum(graph.Mul(y, graph.Reshape(graph.Const(y.Graph(), w), y.Shape().Dimensions...)))
}

// Normals returns n standard normal draws from rng.
func Normals(rng *rand.Rand, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = rng.NormFloat64()
	}
	return out
}

// Size is the number of elements of a shape.
func Size(dims []int) int {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return n
}
