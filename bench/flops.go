package bench

import (
	"github.com/graftrl/graftrl/policy"
	"github.com/graftrl/graftrl/policy/pretrained"
	"github.com/graftrl/graftrl/policy/spec"
)

// TrainStepFLOPs is the model FLOP count of one train step (forward + backward) on a rows × length
// minibatch: the matrix products of the full forward pass,
//
//	2·N·(layers·(4·d² + 2·d·d_ff) + d·vocab) + layers·4·rows·length²·d,   N = rows·length,
//
// times 3 for the backward pass (two products per forward product). Embedding lookups,
// elementwise work and Adam are not counted, nor is work an implementation skips (graftrl runs
// the last block only at action positions, a causal kernel may skip masked scores): both
// implementations are credited the same FLOPs, so GFLOP/s compare like times.
func TrainStepFLOPs(c policy.Config, rows, length int) float64 {
	n := float64(rows * length)
	d, f, v, l := float64(c.DModel), float64(c.Hidden()), float64(c.Vocab), float64(c.Layers)
	fwd := 2*n*(l*(4*d*d+2*d*f)+d*v) + l*4*float64(rows)*float64(length)*float64(length)*d
	return 3 * fwd
}

// DecodeTokenFLOPs is the model FLOP count of decoding one token at position t (attending to t+1
// cached positions): 2·(layers·(4·d² + 2·d·d_ff) + d·vocab) + layers·4·(t+1)·d.
func DecodeTokenFLOPs(c policy.Config, t int) float64 {
	d, f, v, l := float64(c.DModel), float64(c.Hidden()), float64(c.Vocab), float64(c.Layers)
	return 2*(l*(4*d*d+2*d*f)+d*v) + l*4*float64(t+1)*d
}

// llamaSpanFLOPs is the model FLOP count of running a Llama decoder over positions start ..
// start+n−1 with a KV cache: per token at position t, 2·(layers·(d·(q+2k) + q·d + 3·d·f) + d·vocab)
// for the products (q and k the query and key widths, f the MLP width) plus layers·4·(t+1)·q for
// the attention scores and their weighted sum.
func llamaSpanFLOPs(c pretrained.Config, start, n int) float64 {
	d, f, v, l := float64(c.DModel), float64(c.Hidden), float64(c.Vocab), float64(c.Layers)
	q, k := float64(c.Heads*c.HeadDim), float64(c.KVHeads*c.HeadDim)
	perToken := 2 * (l*(d*(q+2*k)+q*d+3*d*f) + d*v)
	var att float64
	for t := start; t < start+n; t++ {
		att += l * 4 * float64(t+1) * q
	}
	return float64(n)*perToken + att
}

// llamaTrainFLOPs is the model FLOP count of one update of a Llama decoder on rows × length
// tokens whose output layer runs at outPositions positions a row (SyntheticBatch's action
// positions, as graftrl and scripts/bench/lm_train_torch.py both compute it). Trained in full
// (lora nil) every product costs three times its forward FLOPs (forward, the input's gradient,
// the weight's); with adapters the frozen weights' gradients are not computed, so the blocks'
// and the output layer's products cost twice, attention (no weights) three times, and each
// adapter, 2·r·(in+out) a token forward, three times that. With q, k the query and key widths
// and f the MLP width, a token's block products are 2·layers·(d·(q+2k) + q·d + 3·d·f), the
// attention at position t 4·layers·(t+1)·q, the output layer 2·d·vocab a position.
func llamaTrainFLOPs(c pretrained.Config, rows, length, outPositions int, lora *spec.LoRA) float64 {
	d, f, v, l := float64(c.DModel), float64(c.Hidden), float64(c.Vocab), float64(c.Layers)
	q, k := float64(c.Heads*c.HeadDim), float64(c.KVHeads*c.HeadDim)
	blocks := float64(length) * 2 * l * (d*(q+2*k) + q*d + 3*d*f)
	var att float64
	for t := range length {
		att += 4 * l * float64(t+1) * q
	}
	out := float64(outPositions) * 2 * d * v
	if lora == nil {
		return float64(rows) * 3 * (blocks + att + out)
	}
	var adapters float64
	for _, target := range lora.Targets {
		o, in, err := spec.LoRAShape(c, target)
		if err == nil {
			adapters += 2 * float64(lora.Rank*(in+o))
		}
	}
	return float64(rows) * (2*blocks + 3*att + 2*out + 3*float64(length)*l*adapters)
}
