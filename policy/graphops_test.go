package policy

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// fdCheck compares the gradient of a scalar function of one float64 input with central finite
// differences at every entry.
func fdCheck(t *testing.T, name string, dims []int, f func(x *graph.Node) *graph.Node) {
	t.Helper()
	b := backendT(t)
	rng := rand.New(rand.NewPCG(7, 8))
	x := randSlice(rng, prod(dims))
	gradExec := graph.MustNewExec(b, func(x *graph.Node) []*graph.Node {
		y := f(x)
		return []*graph.Node{y, graph.Gradient(y, x)[0]}
	})
	valExec := graph.MustNewExec(b, f)
	grad := tensors.MustCopyFlatData[float64](gradExec.MustExec(tensors.FromFlatDataAndDimensions(x, dims...))[1])
	eval := func() float64 {
		return tensors.ToScalar[float64](valExec.MustExec(tensors.FromFlatDataAndDimensions(x, dims...))[0])
	}
	const eps = 1e-6
	for i := range x {
		orig := x[i]
		x[i] = orig + eps
		up := eval()
		x[i] = orig - eps
		down := eval()
		x[i] = orig
		if fd := (up - down) / (2 * eps); math.Abs(fd-grad[i]) > 1e-6*(1+math.Abs(fd)) {
			t.Fatalf("%s[%d]: gradient %g, finite difference %g", name, i, grad[i], fd)
		}
	}
}

// weighted is Σ w ⊙ y for a fixed pseudo-random w, so that every output entry has its own,
// non-trivial weight in the loss.
func weighted(y *graph.Node) *graph.Node {
	w := make([]float64, y.Shape().Size())
	for i := range w {
		w[i] = math.Sin(float64(3*i + 1))
	}
	return graph.ReduceAllSum(graph.Mul(y, graph.Reshape(graph.Const(y.Graph(), w), y.Shape().Dimensions...)))
}

// The cheap graph forms of graphops.go and their re-registered gradients (a sum over trailing axes
// as a vector product, its outer-product gradient, the trailing-broadcast gradient) must agree
// with finite differences.
func TestGraphOpsGradients(t *testing.T) {
	fdCheck(t, "sumLast", []int{3, 4, 5}, func(x *graph.Node) *graph.Node { return weighted(sumLast(x)) })
	fdCheck(t, "broadcastLast", []int{3, 4}, func(x *graph.Node) *graph.Node {
		return weighted(graph.Mul(broadcastLast(x, []int{3, 4, 6}), broadcastLast(x, []int{3, 4, 6})))
	})
	fdCheck(t, "broadcastLeading", []int{5}, func(x *graph.Node) *graph.Node {
		return weighted(graph.Square(broadcastLeading(x, []int{2, 3, 5})))
	})
	fdCheck(t, "normalize", []int{2, 3, 6}, func(x *graph.Node) *graph.Node { return weighted(normalize(x)) })
	fdCheck(t, "softmaxContext", []int{2, 2, 3, 4}, func(x *graph.Node) *graph.Node {
		v := graph.Reshape(graph.Sin(graph.Iota(x.Graph(), x.Shape(), 3)), 2, 4, 2, 3) // [B,Tk,H,hd] from [B,H,Tq,Tk]
		return weighted(softmaxContext(x, graph.Mul(v, graph.OnePlus(graph.Reshape(x, 2, 4, 2, 3)))))
	})
}

// Outer products (a DotGeneral with nothing to contract) inside a gradient are built from
// broadcasts; the gradient must still match finite differences, for a vector of ones (the
// scalar-broadcast shortcut), any other vector, and with batch axes.
func TestDotGeneralOuterProductGradient(t *testing.T) {
	fdCheck(t, "ones", []int{3, 4}, func(x *graph.Node) *graph.Node {
		return weighted(graph.DotGeneral(x, []int{1}, nil, graph.Ones(x.Graph(), shapes.Make(dtypes.Float64, 4)), []int{0}, nil))
	})
	fdCheck(t, "vector", []int{3, 4}, func(x *graph.Node) *graph.Node {
		c := graph.Const(x.Graph(), []float64{0.5, -1, 2, 3})
		return weighted(graph.DotGeneral(x, []int{1}, nil, c, []int{0}, nil))
	})
	fdCheck(t, "batched", []int{2, 3, 4}, func(x *graph.Node) *graph.Node {
		y := graph.Sin(graph.ReduceSum(x, 1)) // [2,4]
		return weighted(graph.DotGeneral(x, []int{2}, []int{0}, y, []int{1}, []int{0}))
	})
}

// splitDot halves long contractions without batch axes; it must equal DotGeneral.
func TestSplitDot(t *testing.T) {
	b := backendT(t)
	rng := rand.New(rand.NewPCG(1, 9))
	x := randSlice(rng, 4*600*3)
	y := randSlice(rng, 4*600*5)
	out := graph.MustNewExec(b, func(x, y *graph.Node) []*graph.Node {
		return []*graph.Node{
			splitDot(x, []int{0, 1}, nil, y, []int{0, 1}, nil),
			graph.DotGeneral(x, []int{0, 1}, nil, y, []int{0, 1}, nil),
		}
	}).MustExec(tensors.FromFlatDataAndDimensions(x, 4, 600, 3), tensors.FromFlatDataAndDimensions(y, 4, 600, 5))
	got, want := tensors.MustCopyFlatData[float64](out[0]), tensors.MustCopyFlatData[float64](out[1])
	if len(got) != 15 {
		t.Fatalf("shape %s, want [3,5]", out[0].Shape())
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-9*(1+math.Abs(want[i])) {
			t.Fatalf("entry %d: split %g, DotGeneral %g", i, got[i], want[i])
		}
	}
	// A dense layer over 2400 tokens: its weight gradient goes through splitDot.
	fdCheck(t, "dense weight, long contraction", []int{3, 2}, func(w *graph.Node) *graph.Node {
		in := graph.Sin(graph.Iota(w.Graph(), shapes.Make(dtypes.Float64, 4, 600, 3), 1))
		return weighted(graph.Tanh(graph.DotGeneral(in, []int{2}, nil, w, []int{0}, nil)))
	})
}
