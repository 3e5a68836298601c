package spec

import (
	"fmt"
	"strconv"

	"github.com/graftrl/graftrl/policy/pretrained"
)

// LlamaParams lists the parameters of a Llama decoder (a pretrained policy) in their fixed order:
// the token embedding (also the output layer), per block the attention norm, the q, k, v and
// output projections, the MLP norm and its gate, up and down projections, then the output norm.
// Each is named after its GGUF tensor without the ".weight" suffix ("blk.3.attn_q") and shaped as
// in pretrained.Weights (matrices [out, in], q and k in GGUF's RoPE order). Init says what a
// fresh draw would use; a pretrained policy starts from the model's weights.
func LlamaParams(c pretrained.Config) []Param {
	d, f, qd, kd := c.DModel, c.Hidden, c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	specs := []Param{{"token_embd", []int{c.Vocab, d}, InitNormal}}
	for l := range c.Layers {
		b := "blk." + strconv.Itoa(l) + "."
		specs = append(specs,
			Param{b + "attn_norm", []int{d}, InitOnes},
			Param{b + "attn_q", []int{qd, d}, InitNormal},
			Param{b + "attn_k", []int{kd, d}, InitNormal},
			Param{b + "attn_v", []int{kd, d}, InitNormal},
			Param{b + "attn_output", []int{d, qd}, InitNormalProj},
			Param{b + "ffn_norm", []int{d}, InitOnes},
			Param{b + "ffn_gate", []int{f, d}, InitNormal},
			Param{b + "ffn_up", []int{f, d}, InitNormal},
			Param{b + "ffn_down", []int{d, f}, InitNormalProj},
		)
	}
	return append(specs, Param{"output_norm", []int{d}, InitOnes})
}

// llamaPerLayer is the number of parameters of one decoder block in LlamaParams.
const llamaPerLayer = 9

// LlamaFlat lists w's arrays in the order of LlamaParams, sharing them (no copy). Its lengths
// are not checked: CheckParamWeights(LlamaParams(c), LlamaFlat(w)) does that.
func LlamaFlat(w pretrained.Weights) [][]float32 {
	out := [][]float32{w.TokenEmbd}
	for _, L := range w.Layers {
		out = append(out, L.AttnNorm, L.Q, L.K, L.V, L.O, L.FFNNorm, L.Gate, L.Up, L.Down)
	}
	return append(out, w.OutputNorm)
}

// LlamaWeights is the inverse of LlamaFlat: arrays in the order of LlamaParams(c) (as a pretrained
// policy's Weights returns them) as pretrained.Weights, sharing them, for the host's Llama
// decoder (host.NewLlama). Errors name the first array that does not fit c.
func LlamaWeights(c pretrained.Config, w [][]float32) (pretrained.Weights, error) {
	if err := CheckParamWeights(LlamaParams(c), w); err != nil {
		return pretrained.Weights{}, fmt.Errorf("llama weights: %w", err)
	}
	out := pretrained.Weights{TokenEmbd: w[0], OutputNorm: w[len(w)-1]}
	for l := range c.Layers {
		n := w[1+l*llamaPerLayer : 1+(l+1)*llamaPerLayer]
		out.Layers = append(out.Layers, pretrained.LayerWeights{AttnNorm: n[0], Q: n[1], K: n[2], V: n[3], O: n[4],
			FFNNorm: n[5], Gate: n[6], Up: n[7], Down: n[8]})
	}
	return out, nil
}
