package policy

import (
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/graftrl/graftrl/policy/spec"
)

// negInf is the additive attention bias of masked positions: exp underflows to exactly 0.
const negInf = -1e30

// geluC1 and geluC3 are the coefficients of the tanh approximation of GELU:
// gelu(x) = ½·x·(1 + tanh(C1·x + C3·x³)), C1 = √(2/π), C3 = 0.044715·√(2/π).
var (
	geluC1 = math.Sqrt(2 / math.Pi)
	geluC3 = 0.044715 * math.Sqrt(2/math.Pi)
)

// maxConstMask is the largest attention mask (in elements, B·H·T·T) kept as a graph constant of
// the full score shape; larger ones are broadcast from [T,T] at run time.
const maxConstMask = 1 << 18

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

// The functions below compute the transformer of ARCHITECTURE.md (The policy) — pre-LayerNorm blocks of causal
// multi-head attention and a tanh-GELU MLP — in the forms that are cheapest on GoMLX's Go backend
// (see graphops.go). Every rewrite is an identity of real arithmetic; only float32 rounding
// differs from the textbook order, well inside the 1e-5 the host path is checked against.

// dense applies x·W + b over the last axis of x.
func dense(x, w, b *Node) *Node {
	return addBias(DotGeneral(x, []int{x.Rank() - 1}, nil, w, []int{0}, nil), b)
}

// normalize is LayerNorm without its gain and shift: n̂ = (x − μ)/√(σ² + ε) over the last axis,
// with the population variance.
func normalize(x *Node) *Node {
	dims := x.Shape().Dimensions
	inv := 1 / float64(dims[len(dims)-1])
	mean := MulScalar(sumLast(x), inv)
	centred := Sub(x, broadcastLast(mean, dims))
	variance := MulScalar(sumLast(Mul(centred, centred)), inv)
	rstd := Reciprocal(Sqrt(AddScalar(variance, spec.LayerNormEps))) // (Rsqrt has no gradient in v0.26)
	return Mul(centred, broadcastLast(rstd, dims))
}

// lnDense is dense(LayerNorm(x; g, b), W, c)·scale from the normalised n̂ = normalize(x), with the
// LayerNorm's gain and shift folded into the (small) weights instead of applied to every token:
// (n̂·g + b)·W + c = n̂·(g ⊙ W) + (b·W + c).
func lnDense(n, g, b, w, c *Node, scale float64) *Node {
	wd := w.Shape().Dimensions
	wg := Mul(w, broadcastLast(g, wd))
	bias := Add(DotGeneral(b, []int{0}, nil, w, []int{0}, nil), c)
	if scale != 1 {
		wg, bias = MulScalar(wg, scale), MulScalar(bias, scale)
	}
	return dense(n, wg, bias)
}

// keys is the key projection without its bias. The bias of k_j = LN(x_j)·Wk + bk is
// c = ln1_b·Wk + bk, the same vector for every key: q·(k_j + c) = q·k_j + q·c adds the same value
// to all of a query's scores, which the softmax cancels. Leaving c out therefore computes the
// same function (bk's gradient, and ln1_b's through the keys, are exactly zero), saves a bias pass
// and its gradient, and keeps float32 scores free of a common offset.
func keys(n *Node, blk blockParams) *Node {
	wd := blk.wk.Shape().Dimensions
	return DotGeneral(n, []int{n.Rank() - 1}, nil, Mul(blk.wk, broadcastLast(blk.ln1G, wd)), []int{0}, nil)
}

// mlp is the block's feed-forward part from the normalised n̂: gelu(LN(x)·W1 + b1)·W2 + b2, with
// gelu(h) = ½·h·(1 + tanh(C1·h + C3·h³)) and its ½ folded into W2.
func mlp(n *Node, blk blockParams) *Node {
	h := lnDense(n, blk.ln2G, blk.ln2B, blk.w1, blk.b1, 1)
	u := Mul(h, AddScalar(MulScalar(Mul(h, h), geluC3), geluC1))
	twoGelu := Mul(h, OnePlus(Tanh(u)))
	return dense(twoGelu, MulScalar(blk.w2, 0.5), blk.b2)
}

// embed returns token plus position embeddings, looked up with Gather (its gradient is a
// ScatterSum into the table). positions is nil for positions 0..T−1 of tokens [B,T].
func embed(p *params, tokens, positions *Node) *Node {
	tok := Gather(p.tok, InsertAxes(tokens, -1))
	if positions != nil {
		return Add(tok, Gather(p.pos, InsertAxes(positions, -1)))
	}
	dims := tokens.Shape().Dimensions
	idx := Iota(tokens.Graph(), shapes.Make(dtypes.Int32, dims[len(dims)-1], 1), 0)
	return Add(tok, broadcastLeading(Gather(p.pos, idx), tok.Shape().Dimensions))
}

// causalMask is the additive attention bias [B,H,T,T]: key j is visible to query i iff j ≤ i.
// Padding sits at the end of each row, so the causal mask also keeps real tokens from seeing it.
func causalMask(g *Graph, bsz, heads, t int) *Node {
	tri := make([]float32, t*t)
	for i := range t {
		for j := i + 1; j < t; j++ {
			tri[i*t+j] = negInf
		}
	}
	if bsz*heads*t*t > maxConstMask {
		return broadcastLeading(ConstTensor(g, tensors.FromFlatDataAndDimensions(tri, t, t)), []int{bsz, heads, t, t})
	}
	full := make([]float32, 0, bsz*heads*t*t)
	for range bsz * heads {
		full = append(full, tri...)
	}
	return ConstTensor(g, tensors.FromFlatDataAndDimensions(full, bsz, heads, t, t))
}

// softmaxContext is Σ_j softmax_j(scores)·v_j over the last axis of scores [B,H,Tq,Tk], with
// v [B,Tk,H,hd], returning [B,H,Tq,hd]. The exponentials are multiplied with v unnormalised and
// the context is divided by their sum afterwards: hd values per query instead of Tk
// probabilities. The max is subtracted first, as in any stable softmax.
func softmaxContext(scores, v *Node) *Node {
	dims := scores.Shape().Dimensions
	peak := StopGradient(ReduceMax(scores, -1))
	e := Exp(Sub(scores, broadcastLast(peak, dims)))
	sum := sumLast(e)
	ctx := DotGeneral(e, []int{3}, []int{0, 1}, v, []int{1}, []int{0, 2}) // [B,H,Tq,hd]
	return Mul(ctx, broadcastLast(Reciprocal(sum), ctx.Shape().Dimensions))
}

// forward computes logits [B,T,V] for tokens [B,T] with causal self-attention.
func forward(c Config, p *params, tokens *Node) *Node {
	return forwardAt(c, p, tokens, nil)
}

// queries selects the positions whose logits are wanted. idx [B,Q,2] holds (row, position) pairs,
// each row selecting Q of its own positions, and bias [B,H,Q,T] is the causal attention bias of
// each selected query (0 for keys at or before its position, negInf after).
type queries struct{ idx, bias *Node }

// forwardAt computes logits [B,Q,V] at the selected positions (all positions when at is nil:
// [B,T,V]). The last block's keys and values still come from every position, but its queries,
// attention output, MLP, the final LayerNorm and the head only run at the selected ones: every
// other position of the last block feeds nothing but its own logits. The loss reads only action
// positions (~10% of an episode's tokens), so this skips most of the last block.
func forwardAt(c Config, p *params, tokens *Node, at *queries) *Node {
	g := tokens.Graph()
	bsz, t := tokens.Shape().Dimensions[0], tokens.Shape().Dimensions[1]
	h, hd := c.Heads, c.HeadDim()
	x := embed(p, tokens, nil)
	var mask *Node // built on first use: with one block and selected queries it is not needed
	scale := 1 / math.Sqrt(float64(hd))

	for l, blk := range p.blocks {
		n := normalize(x)
		k := Reshape(keys(n, blk), bsz, t, h, hd)
		v := Reshape(lnDense(n, blk.ln1G, blk.ln1B, blk.wv, blk.bv, 1), bsz, t, h, hd)
		var bias *Node
		if l == len(p.blocks)-1 && at != nil {
			x, n, bias = Gather(x, at.idx), Gather(n, at.idx), at.bias
		} else {
			if mask == nil {
				mask = causalMask(g, bsz, h, t)
			}
			bias = mask
		}
		tq := x.Shape().Dimensions[1]
		q := Reshape(lnDense(n, blk.ln1G, blk.ln1B, blk.wq, blk.bq, scale), bsz, tq, h, hd)
		scores := DotGeneral(q, []int{3}, []int{0, 2}, k, []int{3}, []int{0, 2}) // [B,H,Tq,Tk]
		ctxv := softmaxContext(Add(scores, bias), v)                             // [B,H,Tq,hd]
		wo := Reshape(blk.wo, h, hd, c.DModel)
		att := DotGeneral(ctxv, []int{1, 3}, nil, wo, []int{0, 1}, nil) // [B,Tq,D]
		x = Add(x, addBias(att, blk.bo))
		x = Add(x, mlp(normalize(x), blk))
	}
	return lnDense(normalize(x), p.lnG, p.lnB, p.headW, p.headB, 1)
}

// decodeStep runs one incremental step: each row b feeds token tokens[b] at position pos[b],
// attending to its cached keys/values at positions ≤ pos[b]. caches holds, per layer, K and V
// of shape [B,H,MaxLen,hd]; the new key/value is written at pos[b] with a one-hot blend (the Go
// backend has no DynamicUpdateSlice). It returns logits [B,V] and the updated caches.
func decodeStep(c Config, p *params, tokens, pos *Node, caches []*Node) (*Node, []*Node) {
	g := tokens.Graph()
	bsz := tokens.Shape().Dimensions[0]
	h, hd, tmax := c.Heads, c.HeadDim(), c.MaxLen
	x := embed(p, tokens, pos) // [B,D]

	slot := Reshape(OneHot(pos, tmax, dtypes.Float32), bsz, 1, tmax, 1) // where to write
	keep := OneMinus(slot)
	keyIdx := Iota(g, shapes.Make(dtypes.Int32, bsz, tmax), 1)
	visible := LessOrEqual(keyIdx, BroadcastToDims(InsertAxes(pos, 1), bsz, tmax))
	bias := Reshape(Where(visible, ScalarZero(g, dtypes.Float32), Const(g, float32(negInf))), bsz, 1, tmax)
	scale := 1 / math.Sqrt(float64(hd))

	out := make([]*Node, 0, len(caches))
	for l, blk := range p.blocks {
		n := normalize(x)
		q := Reshape(lnDense(n, blk.ln1G, blk.ln1B, blk.wq, blk.bq, scale), bsz, h, hd)
		k := Reshape(keys(n, blk), bsz, h, 1, hd)
		v := Reshape(lnDense(n, blk.ln1G, blk.ln1B, blk.wv, blk.bv, 1), bsz, h, 1, hd)
		kc := Add(Mul(caches[2*l], keep), Mul(slot, k)) // [B,H,Tmax,hd]
		vc := Add(Mul(caches[2*l+1], keep), Mul(slot, v))
		out = append(out, kc, vc)
		scores := DotGeneral(q, []int{2}, []int{0, 1}, kc, []int{3}, []int{0, 1}) // [B,H,Tmax]
		scores = Add(scores, BroadcastToDims(bias, bsz, h, tmax))
		peak := StopGradient(ReduceMax(scores, -1))
		e := Exp(Sub(scores, broadcastLast(peak, scores.Shape().Dimensions)))
		ctxv := DotGeneral(e, []int{2}, []int{0, 1}, vc, []int{2}, []int{0, 1}) // [B,H,hd]
		ctxv = Mul(ctxv, broadcastLast(Reciprocal(sumLast(e)), ctxv.Shape().Dimensions))
		wo := Reshape(blk.wo, h, hd, c.DModel)
		att := DotGeneral(ctxv, []int{1, 2}, nil, wo, []int{0, 1}, nil) // [B,D]
		x = Add(x, addBias(att, blk.bo))
		x = Add(x, mlp(normalize(x), blk))
	}
	return lnDense(normalize(x), p.lnG, p.lnB, p.headW, p.headB, 1), out
}
