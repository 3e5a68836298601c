package policy

import (
	"fmt"
	"math"
	"slices"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/graftrl/graftrl/policy/pretrained"
	"github.com/graftrl/graftrl/policy/spec"
)

// Pretrained is a pretrained Llama decoder (SmolLM2) to train as the policy
// (Options.Pretrained), as policy/pretrained reads it from a model file. Its architecture
// replaces the transformer's: of Options.Model, Vocab must be 0 or the model's vocabulary and
// MaxLen (8..8192) is still the longest sequence the policy takes (the length limit and bucket
// cap of updates and log-probs, the decoder's cache), while DModel, Layers, Heads, DFF and
// InitStd must be 0. Options.Seed is not used, except to draw LoRA's adapters (Options.LoRA).
type Pretrained struct {
	Config pretrained.Config
	// Weights are the starting weights; New copies them. They may be empty when Options.Init
	// holds the starting weights instead (in the order of spec.LlamaParams).
	Weights pretrained.Weights
}

// llamaArchOf checks the options of a pretrained policy and returns its network, its Config
// (Vocab and MaxLen) and its starting weights.
func llamaArchOf(o Options) (arch, Config, [][]float32, error) {
	lc, m := o.Pretrained.Config, o.Model
	if err := lc.Validate(); err != nil {
		return nil, Config{}, nil, fmt.Errorf("policy: pretrained model: %w", err)
	}
	switch {
	case m.DModel != 0 || m.Layers != 0 || m.Heads != 0 || m.DFF != 0 || m.InitStd != 0:
		return nil, Config{}, nil, fmt.Errorf("policy: d_model %d, layers %d, heads %d, d_ff %d, init_std %g given with a "+
			"pretrained model, whose architecture and weights come from the model (leave them 0)", m.DModel, m.Layers, m.Heads, m.DFF, m.InitStd)
	case m.Vocab != 0 && m.Vocab != lc.Vocab:
		return nil, Config{}, nil, fmt.Errorf("policy: vocabulary of %d tokens, but the pretrained model's has %d (give 0 or %d)", m.Vocab, lc.Vocab, lc.Vocab)
	case m.MaxLen < 8 || m.MaxLen > 8192:
		return nil, Config{}, nil, fmt.Errorf("policy.max_len: %d is out of range (allowed 8..8192)", m.MaxLen)
	}
	a := newLlamaArch(lc)
	if o.LoRA != nil {
		if err := checkLoRA(lc, *o.LoRA); err != nil {
			return nil, Config{}, nil, err
		}
		l := *o.LoRA
		l.Targets = slices.Clone(l.Targets)
		a.lora = &l
	}
	init := o.Init
	if init == nil {
		init = spec.LlamaFlat(o.Pretrained.Weights)
	}
	if err := spec.CheckParamWeights(a.specs, init); err != nil {
		return nil, Config{}, nil, fmt.Errorf("policy: pretrained model: %w", err)
	}
	return a, Config{Vocab: lc.Vocab, MaxLen: m.MaxLen}, init, nil
}

// llamaArch is the Llama decoder of Hugging Face's modeling_llama.py as GoMLX functions, the same
// function as policy/host's Llama: RMSNorm, grouped-query attention with RoPE on GGUF's
// adjacent pairs, a SwiGLU MLP, the output layer tied to the token embedding, no biases.
type llamaArch struct {
	c     pretrained.Config
	specs []spec.Param
	invF  []float64  // RoPE's frequencies θ_i = base^(−2i/hd)
	lora  *spec.LoRA // adapters the graph functions take after the base parameters (nil: none)
}

func newLlamaArch(c pretrained.Config) *llamaArch {
	a := &llamaArch{c: c, specs: spec.LlamaParams(c)}
	for i := range c.HeadDim / 2 {
		a.invF = append(a.invF, math.Pow(c.RopeBase, -float64(2*i)/float64(c.HeadDim)))
	}
	return a
}

func (a *llamaArch) params() []spec.Param { return a.specs }

// biasHeads is 1: the causal bias is the same for every head, and the attention broadcasts it.
func (a *llamaArch) biasHeads() int { return 1 }

// llamaNodes are a Llama's parameters as nodes of one graph.
type llamaNodes struct {
	tok, norm *Node // [V,D] (also the output layer), [D]
	layers    []llamaLayerNodes
}

type llamaLayerNodes struct {
	attnNorm, q, k, v, o, ffnNorm, gate, up, down *Node
	lora                                          map[string]loraNodes // adapters by target (nil: none)
}

// assemble maps the nodes (in spec.LlamaParams order, then the adapters in spec.LoRAParams
// order if any) onto llamaNodes. The attention's scale 1/√hd is folded into the query projection
// (RoPE is linear, so it commutes).
func (a *llamaArch) assemble(theta []*Node) *llamaNodes {
	nb := len(a.specs)
	p := &llamaNodes{tok: theta[0], norm: theta[nb-1]}
	scale := 1 / math.Sqrt(float64(a.c.HeadDim))
	for l := range a.c.Layers {
		n := theta[1+9*l : 1+9*(l+1)]
		p.layers = append(p.layers, llamaLayerNodes{attnNorm: n[0], q: MulScalar(n[1], scale), k: n[2], v: n[3], o: n[4],
			ffnNorm: n[5], gate: n[6], up: n[7], down: n[8]})
	}
	if len(theta) > nb {
		a.attachLoRA(p, theta[nb:], scale)
	}
	return p
}

// linear is x·Wᵀ over the last axis of x, for W [out, in] (nn.Linear's layout, no bias).
func linear(x, w *Node) *Node {
	return DotGeneral(x, []int{x.Rank() - 1}, nil, w, []int{1}, nil)
}

// rmsNorm is x/√(mean(x²) + ε)·g over the last axis.
func rmsNorm(x, g *Node, eps float64) *Node {
	dims := x.Shape().Dimensions
	ms := MulScalar(sumLast(Mul(x, x)), 1/float64(dims[len(dims)-1]))
	rs := Reciprocal(Sqrt(AddScalar(ms, eps))) // (Rsqrt has no gradient in v0.26)
	return Mul(Mul(x, broadcastLast(rs, dims)), broadcastLeading(g, dims))
}

// ropeTables are RoPE's factors for positions 0..n−1, [n, hd] each: cos[t, 2i] = cos[t, 2i+1] =
// cos(t·θ_i), and sin[t, 2i] = −sin(t·θ_i), sin[t, 2i+1] = +sin(t·θ_i), so that
// rope(x) = x ⊙ cos + swapPairs(x) ⊙ sin rotates each pair (x_2i, x_2i+1) by t·θ_i. The angle
// and its sine and cosine are taken in float64, then rounded to float32, as policy/host does
// (and converted to dtype).
func (a *llamaArch) ropeTables(g *Graph, n int, dtype dtypes.DType) (cos, sin *Node) {
	hd := a.c.HeadDim
	cv, sv := make([]float32, n*hd), make([]float32, n*hd)
	for t := range n {
		for i, f := range a.invF {
			s, c := math.Sincos(float64(t) * f)
			cv[t*hd+2*i], cv[t*hd+2*i+1] = float32(c), float32(c)
			sv[t*hd+2*i], sv[t*hd+2*i+1] = -float32(s), float32(s)
		}
	}
	return ConvertDType(ConstTensor(g, tensors.FromFlatDataAndDimensions(cv, n, hd)), dtype),
		ConvertDType(ConstTensor(g, tensors.FromFlatDataAndDimensions(sv, n, hd)), dtype)
}

// swapPairs exchanges x's last-axis entries 2i and 2i+1, as a product with a block-diagonal
// matrix of [[0,1],[1,0]] blocks over blocks of swapBlock(hd) entries (exact for finite x: one
// term of each sum is multiplied by 1, the others by 0). The Go backend has no Reverse, and a
// Slice on a trainable path has no gradient there. Blocks of 16 rather than single pairs make
// the product one the backend's kernels run at full width: a [rows, 2] × [2, 2] product spends
// its time on per-row overhead (a tenth of SmolLM2's train step on the Go backend).
func swapPairs(x *Node) *Node {
	dims := x.Shape().Dimensions
	b := swapBlock(dims[len(dims)-1])
	blocks := append(append([]int(nil), dims[:len(dims)-1]...), dims[len(dims)-1]/b, b)
	swap := make([][]float32, b)
	for i := range swap {
		swap[i] = make([]float32, b)
		swap[i][i^1] = 1
	}
	m := ConvertDType(Const(x.Graph(), swap), x.DType())
	return Reshape(DotGeneral(Reshape(x, blocks...), []int{len(blocks) - 1}, nil, m, []int{0}, nil), dims...)
}

// swapBlock is the width of swapPairs' blocks for a head width hd (even): the largest of 16, 8,
// 4 and 2 that divides it.
func swapBlock(hd int) int {
	b := 16
	for hd%b != 0 {
		b /= 2
	}
	return b
}

// rope rotates x [..., heads, hd] by RoPE's tables cos and sin, which have x's shape without the
// axes expanded (the head axis, and the batch axis when every row shares the positions).
func rope(x, cos, sin *Node, expanded ...int) *Node {
	dims := x.Shape().Dimensions
	c, s := ExpandAndBroadcast(cos, dims, expanded), ExpandAndBroadcast(sin, dims, expanded)
	return Add(Mul(x, c), Mul(swapPairs(x), s))
}

// swiGLU is the MLP down(silu(gate·x) ⊙ up·x), silu(g) = g·σ(g).
func swiGLU(x *Node, L llamaLayerNodes) *Node {
	g := L.proj(x, "ffn_gate")
	return L.proj(Mul(Mul(g, Logistic(g)), L.proj(x, "ffn_up")), "ffn_down")
}

// attention is grouped-query attention without repeating the keys and values: the query heads
// are grouped by the KV head they share. q [B,Tq,KVH,G,hd] (scaled), k and v [B,Tk,KVH,hd],
// bias [B,KVH,Tq,G,Tk]; it returns the output projection [B,Tq,D] with L's wo [D, H·hd].
func (a *llamaArch) attention(q, k, v, bias *Node, L llamaLayerNodes) *Node {
	scores := Add(DotGeneral(q, []int{4}, []int{0, 2}, k, []int{3}, []int{0, 2}), bias) // [B,KVH,Tq,G,Tk]
	dims := scores.Shape().Dimensions
	peak := StopGradient(ReduceMax(scores, -1))
	e := Exp(Sub(scores, broadcastLast(peak, dims)))
	ctx := DotGeneral(e, []int{4}, []int{0, 1}, v, []int{1}, []int{0, 2}) // [B,KVH,Tq,G,hd]
	ctx = Mul(ctx, broadcastLast(Reciprocal(sumLast(e)), ctx.Shape().Dimensions))
	return a.outProj(ctx, []int{1, 3, 4}, L)
}

// outProj is the attention's output projection of ctx, whose axes (KVH, G, hd) are contracted
// with wo [D, H·hd] seen as [D,KVH,G,hd], plus its adapter if any.
func (a *llamaArch) outProj(ctx *Node, axes []int, L llamaLayerNodes) *Node {
	c := a.c
	wo4 := Reshape(L.o, c.DModel, c.KVHeads, c.Heads/c.KVHeads, c.HeadDim)
	y := DotGeneral(ctx, axes, nil, wo4, []int{1, 2, 3}, nil)
	ad, ok := L.lora["attn_output"]
	if !ok {
		return y
	}
	a4 := Reshape(ad.a, ad.a.Shape().Dimensions[0], c.KVHeads, c.Heads/c.KVHeads, c.HeadDim)
	return Add(y, ad.apply(DotGeneral(ctx, axes, nil, a4, []int{1, 2, 3}, nil)))
}

// causalBias is the additive attention bias [B,KVH,T,G,T] of a whole sequence: key j is visible
// to query i iff j ≤ i (padding sits at the end of a row, so real tokens never see it).
func (a *llamaArch) causalBias(g *Graph, bsz, t int, dtype dtypes.DType) *Node {
	tri := make([]float32, t*t)
	for i := range t {
		for j := i + 1; j < t; j++ {
			tri[i*t+j] = negInf
		}
	}
	group := a.c.Heads / a.c.KVHeads
	return ExpandAndBroadcast(ConvertDType(ConstTensor(g, tensors.FromFlatDataAndDimensions(tri, t, t)), dtype),
		[]int{bsz, a.c.KVHeads, t, group, t}, []int{0, 1, 3})
}

// forwardAt computes logits [B,Q,V] at the selected positions (all positions when at is nil:
// [B,T,V]); as in the transformer's forwardAt, the last block's queries, attention output, MLP,
// final norm and head run only at the selected positions.
func (a *llamaArch) forwardAt(theta []*Node, tokens *Node, at *queries) *Node {
	c, p, g := a.c, a.assemble(theta), tokens.Graph()
	bsz, t := tokens.Shape().Dimensions[0], tokens.Shape().Dimensions[1]
	hd, kvh, group := c.HeadDim, c.KVHeads, c.Heads/c.KVHeads
	x := Gather(p.tok, InsertAxes(tokens, -1)) // [B,T,D]
	cos, sin := a.ropeTables(g, t, x.DType())
	var mask *Node // built on first use: with one block and selected queries it is not needed
	for l, L := range p.layers {
		n := rmsNorm(x, L.attnNorm, c.NormEps)
		k := rope(Reshape(L.proj(n, "attn_k"), bsz, t, kvh, hd), cos, sin, 0, 2)
		v := Reshape(L.proj(n, "attn_v"), bsz, t, kvh, hd)
		qCos, qSin, qAxes := cos, sin, []int{0, 2}
		var bias *Node
		if l == len(p.layers)-1 && at != nil {
			x, n = Gather(x, at.idx), Gather(n, at.idx)
			pos := Slice(at.idx, AxisRange(), AxisRange(), AxisElem(1)) // [B,Q,1]
			qCos, qSin, qAxes = Gather(cos, pos), Gather(sin, pos), []int{2}
			nq := at.idx.Shape().Dimensions[1]
			bias = ExpandAndBroadcast(Reshape(at.bias, bsz, nq, t), []int{bsz, kvh, nq, group, t}, []int{1, 3})
		} else {
			if mask == nil {
				mask = a.causalBias(g, bsz, t, x.DType())
			}
			bias = mask
		}
		tq := x.Shape().Dimensions[1]
		q := rope(Reshape(L.proj(n, "attn_q"), bsz, tq, c.Heads, hd), qCos, qSin, qAxes...)
		x = Add(x, a.attention(Reshape(q, bsz, tq, kvh, group, hd), k, v, bias, L))
		x = Add(x, swiGLU(rmsNorm(x, L.ffnNorm, c.NormEps), L))
	}
	return linear(rmsNorm(x, p.norm, c.NormEps), p.tok)
}

// cacheShapes are K and V per layer, [B,KVH,maxLen,hd]: one entry per KV head, not per query head.
func (a *llamaArch) cacheShapes(batch, maxLen int) []shapes.Shape {
	out := make([]shapes.Shape, 2*a.c.Layers)
	for i := range out {
		out[i] = shapes.Make(dtypes.Float32, batch, a.c.KVHeads, maxLen, a.c.HeadDim)
	}
	return out
}

// decodeStep runs one incremental step (see the transformer's decodeStep): each row b feeds
// tokens[b] at position pos[b], its key and value are written into the caches at pos[b] with a
// one-hot blend, and its query attends to the cached positions ≤ pos[b].
func (a *llamaArch) decodeStep(theta []*Node, tokens, pos *Node, caches []*Node) (*Node, []*Node) {
	c, p, g := a.c, a.assemble(theta), tokens.Graph()
	bsz, tmax := tokens.Shape().Dimensions[0], caches[0].Shape().Dimensions[2]
	hd, kvh, group := c.HeadDim, c.KVHeads, c.Heads/c.KVHeads
	x := Gather(p.tok, InsertAxes(tokens, -1)) // [B,D]
	cosT, sinT := a.ropeTables(g, tmax, dtypes.Float32)
	cos, sin := Gather(cosT, InsertAxes(pos, -1)), Gather(sinT, InsertAxes(pos, -1)) // [B,hd]

	slot := Reshape(OneHot(pos, tmax, dtypes.Float32), bsz, 1, tmax, 1) // where to write
	keep := OneMinus(slot)
	keyIdx := Iota(g, shapes.Make(dtypes.Int32, bsz, tmax), 1)
	visible := LessOrEqual(keyIdx, BroadcastToDims(InsertAxes(pos, 1), bsz, tmax))
	bias := ExpandAndBroadcast(Where(visible, ScalarZero(g, dtypes.Float32), Const(g, float32(negInf))),
		[]int{bsz, kvh, group, tmax}, []int{1, 2})

	out := make([]*Node, 0, len(caches))
	for l, L := range p.layers {
		n := rmsNorm(x, L.attnNorm, c.NormEps)
		q := Reshape(rope(Reshape(L.proj(n, "attn_q"), bsz, c.Heads, hd), cos, sin, 1), bsz, kvh, group, hd)
		k := Reshape(rope(Reshape(L.proj(n, "attn_k"), bsz, kvh, hd), cos, sin, 1), bsz, kvh, 1, hd)
		v := Reshape(L.proj(n, "attn_v"), bsz, kvh, 1, hd)
		kc := Add(Mul(caches[2*l], keep), Mul(slot, k)) // [B,KVH,Tmax,hd]
		vc := Add(Mul(caches[2*l+1], keep), Mul(slot, v))
		out = append(out, kc, vc)
		scores := Add(DotGeneral(q, []int{3}, []int{0, 1}, kc, []int{3}, []int{0, 1}), bias) // [B,KVH,G,Tmax]
		peak := StopGradient(ReduceMax(scores, -1))
		e := Exp(Sub(scores, broadcastLast(peak, scores.Shape().Dimensions)))
		ctxv := DotGeneral(e, []int{3}, []int{0, 1}, vc, []int{2}, []int{0, 1}) // [B,KVH,G,hd]
		ctxv = Mul(ctxv, broadcastLast(Reciprocal(sumLast(e)), ctxv.Shape().Dimensions))
		x = Add(x, a.outProj(ctxv, []int{1, 2, 3}, L)) // [B,D]
		x = Add(x, swiGLU(rmsNorm(x, L.ffnNorm, c.NormEps), L))
	}
	return linear(rmsNorm(x, p.norm, c.NormEps), p.tok), out
}
