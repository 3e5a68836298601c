package gradients

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/graftrl/graftrl/internal/gradcheck"
)

// dotCase is one DotGeneral configuration: operand shapes and axes.
type dotCase struct {
	lhs, rhs       []int
	lc, lb, rc, rb []int
	name           string
}

// The re-registered DotGeneral gradient must agree with central finite differences (float64)
// for every arrangement of batch, contracting and free axes the model uses, and for unsorted
// and transposed contracting axes it does not.
func TestDotGeneralGradientFiniteDifferences(t *testing.T) { checkDotGradients(t, backendT(t)) }

// TestXLACPUDotGeneralGradient runs the same checks on xla:cpu.
func TestXLACPUDotGeneralGradient(t *testing.T) { checkDotGradients(t, xlaT(t)) }

func checkDotGradients(t *testing.T, b backends.Backend) {
	cases := []dotCase{
		{name: "dense [B,T,D]x[D,F]", lhs: []int{2, 3, 4}, rhs: []int{4, 5}, lc: []int{2}, rc: []int{0}},
		{name: "attention scores", lhs: []int{2, 3, 2, 4}, rhs: []int{2, 5, 2, 4}, lc: []int{3}, lb: []int{0, 2}, rc: []int{3}, rb: []int{0, 2}},
		{name: "attention values", lhs: []int{2, 2, 3, 5}, rhs: []int{2, 5, 2, 4}, lc: []int{3}, lb: []int{0, 1}, rc: []int{1}, rb: []int{0, 2}},
		{name: "two contracting axes", lhs: []int{2, 2, 3, 4}, rhs: []int{2, 4, 3}, lc: []int{1, 3}, rc: []int{0, 1}},
		{name: "unsorted contracting pairs", lhs: []int{3, 4, 2}, rhs: []int{2, 5, 3}, lc: []int{0, 2}, rc: []int{2, 0}},
		{name: "batch not leading", lhs: []int{3, 2, 4}, rhs: []int{4, 2, 5}, lc: []int{2}, lb: []int{1}, rc: []int{0}, rb: []int{1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			lhs, rhs := gradcheck.Normals(rng, gradcheck.Size(tc.lhs)), gradcheck.Normals(rng, gradcheck.Size(tc.rhs))
			var outDims []int
			// loss = Σ out ⊙ W for a fixed random W, so ∂loss/∂out = W is non-trivial.
			probe := graph.MustNewExec(b, func(l, r *graph.Node) *graph.Node {
				return graph.DotGeneral(l, tc.lc, tc.lb, r, tc.rc, tc.rb)
			})
			outT := probe.MustExec(tensors.FromFlatDataAndDimensions(lhs, tc.lhs...), tensors.FromFlatDataAndDimensions(rhs, tc.rhs...))[0]
			outDims = outT.Shape().Dimensions
			w := gradcheck.Normals(rng, gradcheck.Size(outDims))
			lossOf := func(l, r *graph.Node) *graph.Node {
				out := graph.DotGeneral(l, tc.lc, tc.lb, r, tc.rc, tc.rb)
				return graph.ReduceAllSum(graph.Mul(out, graph.Reshape(graph.Const(l.Graph(), w), outDims...)))
			}
			gradExec := graph.MustNewExec(b, func(l, r *graph.Node) []*graph.Node {
				loss := lossOf(l, r)
				return append([]*graph.Node{loss}, graph.Gradient(loss, l, r)...)
			})
			lossExec := graph.MustNewExec(b, lossOf)
			out := gradExec.MustExec(tensors.FromFlatDataAndDimensions(lhs, tc.lhs...), tensors.FromFlatDataAndDimensions(rhs, tc.rhs...))
			gl, gr := tensors.MustCopyFlatData[float64](out[1]), tensors.MustCopyFlatData[float64](out[2])
			eval := func(l, r []float64) float64 {
				return tensors.ToScalar[float64](lossExec.MustExec(tensors.FromFlatDataAndDimensions(l, tc.lhs...), tensors.FromFlatDataAndDimensions(r, tc.rhs...))[0])
			}
			gradcheck.Compare(t, "lhs", lhs, gl, func(l []float64) float64 { return eval(l, rhs) })
			gradcheck.Compare(t, "rhs", rhs, gr, func(r []float64) float64 { return eval(lhs, r) })
		})
	}
}

// Outer products (a DotGeneral with nothing to contract) inside a gradient are built from
// broadcasts; the gradient must still match finite differences, for a vector of ones (the
// scalar-broadcast shortcut), any other vector, and with batch axes.
func TestDotGeneralOuterProductGradient(t *testing.T) { checkOuterProducts(t, backendT(t)) }

// TestXLACPUDotGeneralOuterProductGradient runs the same checks on xla:cpu.
func TestXLACPUDotGeneralOuterProductGradient(t *testing.T) { checkOuterProducts(t, xlaT(t)) }

func checkOuterProducts(t *testing.T, b backends.Backend) {
	gradcheck.Check(t, b, "ones", []int{3, 4}, func(x *graph.Node) *graph.Node {
		return gradcheck.Weighted(graph.DotGeneral(x, []int{1}, nil, graph.Ones(x.Graph(), shapes.Make(dtypes.Float64, 4)), []int{0}, nil))
	})
	gradcheck.Check(t, b, "vector", []int{3, 4}, func(x *graph.Node) *graph.Node {
		c := graph.Const(x.Graph(), []float64{0.5, -1, 2, 3})
		return gradcheck.Weighted(graph.DotGeneral(x, []int{1}, nil, c, []int{0}, nil))
	})
	gradcheck.Check(t, b, "batched", []int{2, 3, 4}, func(x *graph.Node) *graph.Node {
		y := graph.Sin(graph.ReduceSum(x, 1)) // [2,4]
		return gradcheck.Weighted(graph.DotGeneral(x, []int{2}, []int{0}, y, []int{1}, []int{0}))
	})
}

// splitDot halves long contractions without batch axes; it must equal DotGeneral.
func TestSplitDot(t *testing.T) { checkSplitDot(t, backendT(t)) }

// TestXLACPUSplitDot runs the same check on xla:cpu.
func TestXLACPUSplitDot(t *testing.T) { checkSplitDot(t, xlaT(t)) }

func checkSplitDot(t *testing.T, b backends.Backend) {
	rng := rand.New(rand.NewPCG(1, 9))
	x := gradcheck.Normals(rng, 4*600*3)
	y := gradcheck.Normals(rng, 4*600*5)
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
	gradcheck.Check(t, b, "dense weight, long contraction", []int{3, 2}, func(w *graph.Node) *graph.Node {
		in := graph.Sin(graph.Iota(w.Graph(), shapes.Make(dtypes.Float64, 4, 600, 3), 1))
		return gradcheck.Weighted(graph.Tanh(graph.DotGeneral(in, []int{2}, nil, w, []int{0}, nil)))
	})
}
