package policy

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/graftrl/graftrl/policy/spec"
)

// The transformer's gradient (attention, MLP, LayerNorm, embeddings, head) must agree with
// finite differences of the loss, probed on random entries of every parameter. float32 limits the
// precision: the tolerance is relative to the gradient scale.
func TestTransformerGradientFiniteDifferences(t *testing.T) {
	c := Config{Vocab: 7, DModel: 8, Layers: 1, Heads: 2, DFF: 16, MaxLen: 6, InitStd: 0.5}
	b := backendT(t)
	specs := spec.Params(c)
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
			a = append(a, tensors.FromFlatDataAndDimensions(vals[i], s.Shape...))
		}
		return append(a, tensors.FromFlatDataAndDimensions(tokens, rows, length), tensors.FromFlatDataAndDimensions(targets, rows, length))
	}
	out := gradExec.MustExec(args(init)...)
	for i, s := range specs {
		grad := tensors.MustCopyFlatData[float32](out[1+i])
		for probe := 0; probe < 4; probe++ {
			j := rng.IntN(s.Size())
			const eps = 1e-2
			orig := init[i][j]
			init[i][j] = orig + eps
			up := tensors.ToScalar[float32](lossExec.MustExec(args(init)...)[0])
			init[i][j] = orig - eps
			down := tensors.ToScalar[float32](lossExec.MustExec(args(init)...)[0])
			init[i][j] = orig
			fd := float64(up-down) / (2 * eps)
			if diff := math.Abs(fd - float64(grad[j])); diff > 5e-3+2e-2*math.Abs(fd) {
				t.Errorf("%s[%d]: gradient %g, finite difference %g", s.Name, j, grad[j], fd)
			}
		}
	}
}
