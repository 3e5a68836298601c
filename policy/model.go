package policy

import (
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// negInf is the additive attention bias of masked positions: exp underflows to exactly 0.
const negInf = -1e30

// layerNormEps is the LayerNorm ε.
const layerNormEps = 1e-5

// params are the transformer's parameters as nodes of one graph.
type params struct {
	tok, pos     *Node // [V,D], [MaxLen,D]
	blocks       []blockParams
	lnG, lnB     *Node // final LayerNorm
	headW, headB *Node // [D,V], [V]
}

type blockParams struct {
	ln1G, ln1B, wq, bq, wk, bk, wv, bv, wo, bo *Node
	ln2G, ln2B, w1, b1, w2, b2                 *Node
}

// assembleParams maps the nodes (in paramSpecs order) onto the params struct.
func assembleParams(c Config, nodes []*Node) *params {
	p := &params{tok: nodes[0], pos: nodes[1]}
	i := 2
	for range c.Layers {
		n := nodes[i : i+16]
		p.blocks = append(p.blocks, blockParams{
			ln1G: n[0], ln1B: n[1], wq: n[2], bq: n[3], wk: n[4], bk: n[5], wv: n[6], bv: n[7],
			wo: n[8], bo: n[9], ln2G: n[10], ln2B: n[11], w1: n[12], b1: n[13], w2: n[14], b2: n[15],
		})
		i += 16
	}
	p.lnG, p.lnB, p.headW, p.headB = nodes[i], nodes[i+1], nodes[i+2], nodes[i+3]
	return p
}

// dense applies x·W + b over the last axis of x.
func dense(x, w, b *Node) *Node {
	y := DotGeneral(x, []int{x.Rank() - 1}, nil, w, []int{0}, nil)
	return Add(y, ExpandLeftToRank(b, y.Rank()))
}

// layerNorm normalises the last axis: (x − μ)/√(σ² + ε)·g + b.
func layerNorm(x, g, b *Node) *Node {
	axis := x.Rank() - 1
	mean := ReduceAndKeep(x, ReduceMean, axis)
	centred := Sub(x, mean)
	variance := ReduceAndKeep(Square(centred), ReduceMean, axis)
	y := Div(centred, Sqrt(AddScalar(variance, layerNormEps))) // (Rsqrt has no gradient in v0.26)
	return Add(Mul(y, ExpandLeftToRank(g, y.Rank())), ExpandLeftToRank(b, y.Rank()))
}

// gelu is the tanh approximation of GELU (PyTorch's gelu(approximate="tanh")).
func gelu(x *Node) *Node {
	inner := MulScalar(Add(x, MulScalar(Mul(Square(x), x), 0.044715)), math.Sqrt(2/math.Pi))
	return Mul(x, MulScalar(OnePlus(Tanh(inner)), 0.5))
}

// embed returns token plus position embeddings. Both lookups are one-hot products: the tables
// are small and a matmul's gradient avoids scatter ops.
func embed(p *params, tokens, positions *Node, vocab, maxLen int) *Node {
	tok := DotGeneral(OneHot(tokens, vocab, dtypes.Float32), []int{tokens.Rank()}, nil, p.tok, []int{0}, nil)
	pos := DotGeneral(OneHot(positions, maxLen, dtypes.Float32), []int{positions.Rank()}, nil, p.pos, []int{0}, nil)
	if pos.Rank() < tok.Rank() {
		pos = BroadcastToShape(ExpandLeftToRank(pos, tok.Rank()), tok.Shape())
	}
	return Add(tok, pos)
}

// forward computes logits [B,T,V] for tokens [B,T] with causal self-attention.
func forward(c Config, p *params, tokens *Node) *Node {
	g := tokens.Graph()
	bsz, t := tokens.Shape().Dimensions[0], tokens.Shape().Dimensions[1]
	h, hd := c.Heads, c.HeadDim()
	x := embed(p, tokens, Iota(g, shapes.Make(dtypes.Int32, t), 0), c.Vocab, c.MaxLen)

	// Causal mask as an additive bias [T,T]: key j is visible to query i iff j ≤ i. Padding sits at
	// the end of each row, so the causal mask also keeps real tokens from seeing it.
	qi := Iota(g, shapes.Make(dtypes.Int32, t, t), 0)
	kj := Iota(g, shapes.Make(dtypes.Int32, t, t), 1)
	bias := Where(GreaterOrEqual(qi, kj), ScalarZero(g, dtypes.Float32), Const(g, float32(negInf)))
	scale := 1 / math.Sqrt(float64(hd))

	for _, blk := range p.blocks {
		a := layerNorm(x, blk.ln1G, blk.ln1B)
		q := Reshape(MulScalar(dense(a, blk.wq, blk.bq), scale), bsz, t, h, hd)
		k := Reshape(dense(a, blk.wk, blk.bk), bsz, t, h, hd)
		v := Reshape(dense(a, blk.wv, blk.bv), bsz, t, h, hd)
		scores := DotGeneral(q, []int{3}, []int{0, 2}, k, []int{3}, []int{0, 2}) // [B,H,Tq,Tk]
		probs := Softmax(Add(scores, ExpandLeftToRank(bias, 4)), -1)
		ctxv := DotGeneral(probs, []int{3}, []int{0, 1}, v, []int{1}, []int{0, 2}) // [B,H,Tq,hd]
		wo := Reshape(blk.wo, h, hd, c.DModel)
		att := DotGeneral(ctxv, []int{1, 3}, nil, wo, []int{0, 1}, nil) // [B,Tq,D]
		x = Add(x, Add(att, ExpandLeftToRank(blk.bo, 3)))

		m := layerNorm(x, blk.ln2G, blk.ln2B)
		x = Add(x, dense(gelu(dense(m, blk.w1, blk.b1)), blk.w2, blk.b2))
	}
	x = layerNorm(x, p.lnG, p.lnB)
	return dense(x, p.headW, p.headB)
}

// decodeStep runs one incremental step: each row b feeds token tokens[b] at position pos[b],
// attending to its cached keys/values at positions ≤ pos[b]. caches holds, per layer, K and V
// of shape [B,H,MaxLen,hd]; the new key/value is written at pos[b] with a one-hot blend (the Go
// backend has no DynamicUpdateSlice). It returns logits [B,V] and the updated caches.
func decodeStep(c Config, p *params, tokens, pos *Node, caches []*Node) (*Node, []*Node) {
	g := tokens.Graph()
	bsz := tokens.Shape().Dimensions[0]
	h, hd, tmax := c.Heads, c.HeadDim(), c.MaxLen
	x := embed(p, tokens, pos, c.Vocab, c.MaxLen) // [B,D]

	slot := Reshape(OneHot(pos, tmax, dtypes.Float32), bsz, 1, tmax, 1) // where to write
	keep := OneMinus(slot)
	keyIdx := Iota(g, shapes.Make(dtypes.Int32, bsz, tmax), 1)
	visible := LessOrEqual(keyIdx, BroadcastToDims(InsertAxes(pos, 1), bsz, tmax))
	bias := Reshape(Where(visible, ScalarZero(g, dtypes.Float32), Const(g, float32(negInf))), bsz, 1, tmax)
	scale := 1 / math.Sqrt(float64(hd))

	out := make([]*Node, 0, len(caches))
	for l, blk := range p.blocks {
		a := layerNorm(x, blk.ln1G, blk.ln1B)
		q := Reshape(MulScalar(dense(a, blk.wq, blk.bq), scale), bsz, h, hd)
		k := Reshape(dense(a, blk.wk, blk.bk), bsz, h, 1, hd)
		v := Reshape(dense(a, blk.wv, blk.bv), bsz, h, 1, hd)
		kc := Add(Mul(caches[2*l], keep), Mul(slot, k)) // [B,H,Tmax,hd]
		vc := Add(Mul(caches[2*l+1], keep), Mul(slot, v))
		out = append(out, kc, vc)
		scores := DotGeneral(q, []int{2}, []int{0, 1}, kc, []int{3}, []int{0, 1}) // [B,H,Tmax]
		probs := Softmax(Add(scores, bias), -1)
		ctxv := DotGeneral(probs, []int{2}, []int{0, 1}, vc, []int{2}, []int{0, 1}) // [B,H,hd]
		wo := Reshape(blk.wo, h, hd, c.DModel)
		att := DotGeneral(ctxv, []int{1, 2}, nil, wo, []int{0, 1}, nil) // [B,D]
		x = Add(x, Add(att, ExpandLeftToRank(blk.bo, 2)))

		m := layerNorm(x, blk.ln2G, blk.ln2B)
		x = Add(x, dense(gelu(dense(m, blk.w1, blk.b1)), blk.w2, blk.b2))
	}
	x = layerNorm(x, p.lnG, p.lnB)
	return dense(x, p.headW, p.headB), out
}
