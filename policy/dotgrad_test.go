package policy

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
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
func TestDotGeneralGradientFiniteDifferences(t *testing.T) {
	cases := []dotCase{
		{name: "dense [B,T,D]x[D,F]", lhs: []int{2, 3, 4}, rhs: []int{4, 5}, lc: []int{2}, rc: []int{0}},
		{name: "attention scores", lhs: []int{2, 3, 2, 4}, rhs: []int{2, 5, 2, 4}, lc: []int{3}, lb: []int{0, 2}, rc: []int{3}, rb: []int{0, 2}},
		{name: "attention values", lhs: []int{2, 2, 3, 5}, rhs: []int{2, 5, 2, 4}, lc: []int{3}, lb: []int{0, 1}, rc: []int{1}, rb: []int{0, 2}},
		{name: "two contracting axes", lhs: []int{2, 2, 3, 4}, rhs: []int{2, 4, 3}, lc: []int{1, 3}, rc: []int{0, 1}},
		{name: "unsorted contracting pairs", lhs: []int{3, 4, 2}, rhs: []int{2, 5, 3}, lc: []int{0, 2}, rc: []int{2, 0}},
		{name: "batch not leading", lhs: []int{3, 2, 4}, rhs: []int{4, 2, 5}, lc: []int{2}, lb: []int{1}, rc: []int{0}, rb: []int{1}},
	}
	b := backendT(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			lhs, rhs := randSlice(rng, prod(tc.lhs)), randSlice(rng, prod(tc.rhs))
			var outDims []int
			// loss = Σ out ⊙ W for a fixed random W, so ∂loss/∂out = W is non-trivial.
			probe := graph.MustNewExec(b, func(l, r *graph.Node) *graph.Node {
				return graph.DotGeneral(l, tc.lc, tc.lb, r, tc.rc, tc.rb)
			})
			outT := probe.MustExec(tensors.FromFlatDataAndDimensions(lhs, tc.lhs...), tensors.FromFlatDataAndDimensions(rhs, tc.rhs...))[0]
			outDims = outT.Shape().Dimensions
			w := randSlice(rng, prod(outDims))
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
			const eps = 1e-6
			check := func(which string, x []float64, grad []float64, f func([]float64) float64) {
				for i := range x {
					orig := x[i]
					x[i] = orig + eps
					up := f(x)
					x[i] = orig - eps
					down := f(x)
					x[i] = orig
					fd := (up - down) / (2 * eps)
					if math.Abs(fd-grad[i]) > 1e-6*(1+math.Abs(fd)) {
						t.Fatalf("%s[%d]: gradient %g, finite difference %g", which, i, grad[i], fd)
					}
				}
			}
			check("lhs", lhs, gl, func(l []float64) float64 { return eval(l, rhs) })
			check("rhs", rhs, gr, func(r []float64) float64 { return eval(lhs, r) })
		})
	}
}

// The transformer's gradient (attention, MLP, LayerNorm, embeddings, head) must agree with
// finite differences of the loss, probed on random entries of every parameter. float32 limits the
// precision: the tolerance is relative to the gradient scale.
func TestTransformerGradientFiniteDifferences(t *testing.T) {
	c := Config{Vocab: 7, DModel: 8, Layers: 1, Heads: 2, DFF: 16, MaxLen: 6, InitStd: 0.5}
	b := backendT(t)
	specs := paramSpecs(c)
	init := initialValues(c, 11)
	const rows, length = 2, 5
	rng := rand.New(rand.NewPCG(5, 6))
	tokens := make([]int32, rows*length)
	targets := make([]int32, rows*length)
	for i := range tokens {
		tokens[i], targets[i] = int32(rng.IntN(c.Vocab)), int32(rng.IntN(c.Vocab))
	}
	lossOf := func(in []*graph.Node) *graph.Node {
		p := assembleParams(c, in[:len(specs)])
		logits := forward(c, p, in[len(specs)])
		lp, _ := tokenLogProbs(logits, in[len(specs)+1], c.Vocab)
		return graph.Neg(graph.ReduceAllSum(lp))
	}
	gradExec := graph.MustNewExec(b, func(in []*graph.Node) []*graph.Node {
		loss := lossOf(in)
		return append([]*graph.Node{loss}, graph.Gradient(loss, in[:len(specs)]...)...)
	})
	lossExec := graph.MustNewExec(b, func(in []*graph.Node) *graph.Node { return lossOf(in) })
	args := func(vals [][]float32) []any {
		a := make([]any, 0, len(specs)+2)
		for i, s := range specs {
			a = append(a, tensors.FromFlatDataAndDimensions(vals[i], s.shape...))
		}
		return append(a, tensors.FromFlatDataAndDimensions(tokens, rows, length), tensors.FromFlatDataAndDimensions(targets, rows, length))
	}
	out := gradExec.MustExec(args(init)...)
	for i, s := range specs {
		grad := tensors.MustCopyFlatData[float32](out[1+i])
		for probe := 0; probe < 4; probe++ {
			j := rng.IntN(s.size())
			const eps = 1e-2
			orig := init[i][j]
			init[i][j] = orig + eps
			up := tensors.ToScalar[float32](lossExec.MustExec(args(init)...)[0])
			init[i][j] = orig - eps
			down := tensors.ToScalar[float32](lossExec.MustExec(args(init)...)[0])
			init[i][j] = orig
			fd := float64(up-down) / (2 * eps)
			if diff := math.Abs(fd - float64(grad[j])); diff > 5e-3+2e-2*math.Abs(fd) {
				t.Errorf("%s[%d]: gradient %g, finite difference %g", s.name, j, grad[j], fd)
			}
		}
	}
}

func randSlice(rng *rand.Rand, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = rng.NormFloat64()
	}
	return out
}

func prod(d []int) int {
	n := 1
	for _, x := range d {
		n *= x
	}
	return n
}
