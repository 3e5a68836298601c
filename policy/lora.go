package policy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/graftrl/graftrl/policy/pretrained"
	"github.com/graftrl/graftrl/policy/spec"
)

// LoRA (Options.LoRA) trains low-rank adapters on a pretrained policy's projections with the
// base weights frozen: each targeted W [out, in] computes W·x + (α/r)·B·(A·x). The base weights
// get no gradient and no Adam moments; Adam updates A and B only; the KL reference is the base
// itself (the adapters left out of the graph); Params and Weights stay the full Llama's, Weights
// merged (W + (α/r)·B·A); checkpoints hold the adapters and their optimiser state only.

// loraNodes are one projection's adapter in a graph: A [r, in], B [out, r] and the factor its
// output is scaled by (α/r, times the query's 1/√hd on attn_q).
type loraNodes struct {
	a, b  *Node
	scale float64
}

// apply is B·(scale·h) for h = A·x [..., r]: the scale is applied on the rank-r side, the
// narrowest.
func (ad loraNodes) apply(h *Node) *Node { return linear(MulScalar(h, ad.scale), ad.b) }

// proj is the projection target of x: W·x, plus the adapter's (α/r)·B·(A·x) when it has one.
func (L *llamaLayerNodes) proj(x *Node, target string) *Node {
	var w *Node
	switch target {
	case "attn_q":
		w = L.q
	case "attn_k":
		w = L.k
	case "attn_v":
		w = L.v
	case "ffn_gate":
		w = L.gate
	case "ffn_up":
		w = L.up
	case "ffn_down":
		w = L.down
	default:
		panic("policy: no projection " + target) // callers name the projections they have
	}
	y := linear(x, w)
	if ad, ok := L.lora[target]; ok {
		y = Add(y, ad.apply(linear(x, ad.a)))
	}
	return y
}

// attachLoRA gives each block of p its adapters, the nodes ad in spec.LoRAParams order; qScale
// is the attention scale folded into the query projection, which its adapter shares.
func (a *llamaArch) attachLoRA(p *llamaNodes, ad []*Node, qScale float64) {
	per := 2 * len(a.lora.Targets)
	for l := range p.layers {
		p.layers[l].lora = map[string]loraNodes{}
		for j, t := range a.lora.Targets {
			s := a.lora.Scale()
			if t == "attn_q" {
				s *= qScale
			}
			p.layers[l].lora[t] = loraNodes{a: ad[l*per+2*j], b: ad[l*per+2*j+1], scale: s}
		}
	}
}

// checkLoRA checks Options.LoRA against the pretrained model c; errors name the key.
func checkLoRA(c pretrained.Config, l spec.LoRA) error {
	if err := l.Validate(); err != nil {
		return err
	}
	return spec.CheckLoRAFits(c, l)
}

// loraInit draws the adapters' starting values from seed: A ~ U(−1/√in, 1/√in) (PEFT's
// Kaiming-uniform with a = √5), B = 0, so that the starting policy is the base exactly.
func loraInit(specs []spec.Param, seed uint64) [][]float32 {
	rng := rand.New(rand.NewPCG(seed, 0x4c6f5241)) // a stream of its own: "LoRA"
	out := make([][]float32, len(specs))
	for i, s := range specs {
		v := make([]float32, s.Size())
		if s.Init == spec.InitUniformFanIn {
			bound := 1 / math.Sqrt(float64(s.Shape[1]))
			for j := range v {
				v[j] = float32((2*rng.Float64() - 1) * bound)
			}
		}
		out[i] = v
	}
	return out
}

// addLoRAVariables creates a LoRA policy's variables: the frozen base (init, in the order of
// the arch's params) under policy/, then the adapters under policy/ with their Adam moments,
// which are the trainable variables.
func (p *Policy) addLoRAVariables(root *context.Context, init [][]float32, seed uint64) {
	for i, s := range p.arch.params() {
		val := tensors.FromFlatDataAndDimensions(init[i], s.Shape...)
		p.theta = append(p.theta, root.In("policy").VariableWithValue(s.Name, val).SetTrainable(false))
	}
	p.adapterSpecs = spec.LoRAParams(*p.llama, *p.lora)
	for i, v := range loraInit(p.adapterSpecs, seed) {
		s := p.adapterSpecs[i]
		val := tensors.FromFlatDataAndDimensions(v, s.Shape...)
		p.adapters = append(p.adapters, root.In("policy").VariableWithValue(s.Name, val))
		p.m = append(p.m, root.In("adam_m").VariableWithValue(s.Name, tensors.FromShape(val.Shape())).SetTrainable(false))
		p.v = append(p.v, root.In("adam_v").VariableWithValue(s.Name, tensors.FromShape(val.Shape())).SetTrainable(false))
	}
	p.trainable = p.adapters
}

// LoRA returns the adapters' settings, and false for a policy trained in full.
func (p *Policy) LoRA() (spec.LoRA, bool) {
	if p.lora == nil {
		return spec.LoRA{}, false
	}
	l := *p.lora
	l.Targets = slices.Clone(l.Targets)
	return l, true
}

// Trainable lists the parameters Adam updates, in the order of their moments and gradients:
// the adapters (spec.LoRAParams) with LoRA, else Params.
func (p *Policy) Trainable() []spec.Param {
	if p.lora != nil {
		return p.adapterSpecs
	}
	return p.Params()
}

// mergeGraph outputs W + (α/r)·B·A of every adapted matrix, in the order of the adapters.
func (p *Policy) mergeGraph(_ *context.Context, g *Graph) []*Node {
	var out []*Node
	for _, j := range p.adaptedBase() {
		w := p.theta[j.base].ValueGraph(g)
		a, b := p.adapters[j.adapter].ValueGraph(g), p.adapters[j.adapter+1].ValueGraph(g)
		ba := DotGeneral(b, []int{1}, nil, a, []int{0}, nil) // [out, in]
		out = append(out, Add(w, MulScalar(ba, p.lora.Scale())))
	}
	return out
}

// adaptedPair pairs an adapted matrix (its index in Params) with its adapter (the index of its
// A in the adapters; B follows).
type adaptedPair struct{ base, adapter int }

// adaptedBase lists the adapted matrices in the order of the adapters.
func (p *Policy) adaptedBase() []adaptedPair {
	index := map[string]int{}
	for i, s := range p.arch.params() {
		index[s.Name] = i
	}
	var out []adaptedPair
	for i := 0; i < len(p.adapterSpecs); i += 2 {
		name := p.adapterSpecs[i].Name
		out = append(out, adaptedPair{base: index[name[:len(name)-len(".lora_a")]], adapter: i})
	}
	return out
}

// mergedWeights is Weights of a LoRA policy: the base's values, each adapted matrix merged
// with its adapter in one graph on the backend.
func (p *Policy) mergedWeights() ([][]float32, error) {
	out := make([][]float32, len(p.theta))
	merged, err := p.exec("merge", p.merge)
	if err != nil {
		return nil, fmt.Errorf("policy: merge the LoRA adapters: %w", err)
	}
	for k, j := range p.adaptedBase() {
		out[j.base] = tensors.MustCopyFlatData[float32](merged[k])
		merged[k].FinalizeAll()
	}
	for i, v := range p.theta {
		if out[i] != nil {
			continue
		}
		t, err := v.Value()
		if err != nil {
			return nil, fmt.Errorf("policy: read %s: %w", v.Name(), err)
		}
		out[i] = tensors.MustCopyFlatData[float32](t)
	}
	return out, nil
}
