package pretrained

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/graftrl/graftrl/modelfile"
)

// Architectures lists the GGUF architectures FromGGUF reads: the ones whose metadata and
// tensors follow llama's names and layouts.
func Architectures() []string { return []string{"llama"} }

// FromGGUF reads a llama GGUF's architecture (GGUFConfig) and its tensors dequantised to
// float32 in Weights' layouts. GGUF's dims are PyTorch's reversed, so a tensor's rows are
// nn.Linear's output rows as Weights wants, and q/k already are in RoPE's adjacent-pair order. A
// missing tensor or one of the wrong shape is refused, naming it.
func FromGGUF(g *modelfile.GGUF) (Config, Weights, error) {
	var w Weights
	c, err := GGUFConfig(g)
	if err != nil {
		return c, w, err
	}
	return c, w, c.readGGUF(g, &w)
}

// GGUFConfig reads a llama GGUF's architecture from its metadata alone (general.architecture,
// llama.block_count, llama.embedding_length, …), no tensor read: what a loader checks before it
// commits memory. A file of another architecture or a missing key is refused, naming it.
func GGUFConfig(g *modelfile.GGUF) (Config, error) {
	var c Config
	arch, err := g.String("general.architecture")
	if err != nil {
		return c, fmt.Errorf("pretrained: llama GGUF: %w (want one of %s)", err, strings.Join(Architectures(), ", "))
	}
	if !slices.Contains(Architectures(), arch) {
		return c, fmt.Errorf("general.architecture is %q; only %s is read", arch, strings.Join(Architectures(), ", "))
	}
	for _, k := range []struct {
		key string
		dst *int
	}{
		{"block_count", &c.Layers}, {"embedding_length", &c.DModel}, {"feed_forward_length", &c.Hidden},
		{"attention.head_count", &c.Heads}, {"attention.head_count_kv", &c.KVHeads},
	} {
		v, err := g.Uint32(arch + "." + k.key)
		if err != nil {
			return c, fmt.Errorf("pretrained: llama GGUF: %w", err)
		}
		*k.dst = int(v)
	}
	if c.Heads < 1 {
		return c, fmt.Errorf("pretrained: llama GGUF: %s.attention.head_count is %d, want at least 1", arch, c.Heads)
	}
	// Both keys are optional in llama GGUFs: the head width defaults to DModel/Heads and the
	// vocabulary to the token embedding's rows.
	c.HeadDim = c.DModel / c.Heads
	if v, err := g.Uint32(arch + ".rope.dimension_count"); err == nil {
		c.HeadDim = int(v)
	}
	emb, ok := g.TensorInfo("token_embd.weight")
	if !ok {
		return c, fmt.Errorf("pretrained: llama GGUF: missing tensor token_embd.weight")
	}
	if len(emb.Dims) == 2 {
		c.Vocab = int(emb.Dims[1])
	}
	if v, err := g.Uint32(arch + ".vocab_size"); err == nil {
		c.Vocab = int(v)
	}
	base, err := g.Float32(arch + ".rope.freq_base")
	if err != nil {
		return c, fmt.Errorf("pretrained: llama GGUF: %w", err)
	}
	eps, err := g.Float32(arch + ".attention.layer_norm_rms_epsilon")
	if err != nil {
		return c, fmt.Errorf("pretrained: llama GGUF: %w", err)
	}
	c.RopeBase, c.NormEps = float64(base), float64(eps)
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("pretrained: llama GGUF: %w", err)
	}
	return c, nil
}

// readGGUF reads c's tensors of g into w, each after checking its shape.
func (c Config) readGGUF(g *modelfile.GGUF, w *Weights) error {
	var err error
	qd, kd := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	// get reads a tensor after checking its shape: ggml's dims, the row length first.
	get := func(name string, dims ...int) []float32 {
		if err != nil {
			return nil
		}
		info, ok := g.TensorInfo(name)
		if !ok {
			err = fmt.Errorf("pretrained: llama GGUF: missing tensor %s", name)
			return nil
		}
		want := make([]int64, len(dims))
		for i, d := range dims {
			want[i] = int64(d)
		}
		if !slices.Equal(info.Dims, want) {
			err = fmt.Errorf("pretrained: llama GGUF: tensor %s has shape %v, want %v (ggml order, row length first)", name, info.Dims, want)
			return nil
		}
		var v []float32
		v, err = g.Tensor(name)
		return v
	}
	d, f := c.DModel, c.Hidden
	w.TokenEmbd, w.OutputNorm = get("token_embd.weight", d, c.Vocab), get("output_norm.weight", d)
	for l := range c.Layers {
		b := func(s string, dims ...int) []float32 {
			return get("blk."+strconv.Itoa(l)+"."+s+".weight", dims...)
		}
		w.Layers = append(w.Layers, LayerWeights{
			AttnNorm: b("attn_norm", d), Q: b("attn_q", d, qd), K: b("attn_k", d, kd), V: b("attn_v", d, kd),
			O: b("attn_output", qd, d), FFNNorm: b("ffn_norm", d), Gate: b("ffn_gate", d, f),
			Up: b("ffn_up", d, f), Down: b("ffn_down", f, d),
		})
	}
	return err
}
