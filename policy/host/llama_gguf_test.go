package host

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/graftrl/graftrl/modelfile"
	"github.com/graftrl/graftrl/tokens/bpe"
)

// smolLM2Env set to 1 makes the checks on the real model fail rather than skip when it is not
// installed (as in modelfile's tests; .ci/run installs the model first).
const smolLM2Env = "GRAFTRL_SMOLLM2"

// smolLM2Path is where scripts/install-smollm2.sh keeps the model (modelfile's smolLM2Path).
func smolLM2Path(tb testing.TB) string {
	tb.Helper()
	skip := tb.Skipf
	if os.Getenv(smolLM2Env) == "1" {
		skip = tb.Fatalf
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			skip("no home directory (%v): run scripts/install-smollm2.sh", err)
		}
		cache = filepath.Join(home, ".cache")
	}
	path := filepath.Join(cache, "graftrl", "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
	if _, err := os.Stat(path); err != nil {
		skip("SmolLM2-135M-Instruct is not installed at %s: run scripts/install-smollm2.sh", path)
	}
	return path
}

// llamaFromGGUF reads a llama GGUF's architecture from its metadata and its tensors, dequantised
// to float32, in LlamaWeights' layouts (GGUF's own: its dims are PyTorch's reversed, so a
// tensor's rows are nn.Linear's output rows, and q/k are already in RoPE's adjacent-pair order).
func llamaFromGGUF(g *modelfile.GGUF) (LlamaConfig, LlamaWeights, error) {
	var c LlamaConfig
	var w LlamaWeights
	u := func(key string, dst *int) error {
		v, err := g.Uint32("llama." + key)
		*dst = int(v)
		return err
	}
	for key, dst := range map[string]*int{
		"block_count": &c.Layers, "embedding_length": &c.DModel, "feed_forward_length": &c.Hidden,
		"attention.head_count": &c.Heads, "attention.head_count_kv": &c.KVHeads, "vocab_size": &c.Vocab,
		"rope.dimension_count": &c.HeadDim,
	} {
		if err := u(key, dst); err != nil {
			return c, w, err
		}
	}
	base, err := g.Float32("llama.rope.freq_base")
	if err != nil {
		return c, w, err
	}
	eps, err := g.Float32("llama.attention.layer_norm_rms_epsilon")
	if err != nil {
		return c, w, err
	}
	c.RopeBase, c.NormEps = float64(base), float64(eps)
	get := func(name string) []float32 {
		if err != nil {
			return nil
		}
		var v []float32
		v, err = g.Tensor(name)
		return v
	}
	w.TokenEmbd, w.OutputNorm = get("token_embd.weight"), get("output_norm.weight")
	for l := range c.Layers {
		b := func(s string) []float32 { return get("blk." + strconv.Itoa(l) + "." + s + ".weight") }
		w.Layers = append(w.Layers, LlamaLayerWeights{
			AttnNorm: b("attn_norm"), Q: b("attn_q"), K: b("attn_k"), V: b("attn_v"), O: b("attn_output"),
			FFNNorm: b("ffn_norm"), Gate: b("ffn_gate"), Up: b("ffn_up"), Down: b("ffn_down"),
		})
	}
	return c, w, err
}

// loadSmolLM2 builds the installed SmolLM2-135M-Instruct and its tokenizer.
func loadSmolLM2(tb testing.TB) (*Llama, *bpe.Tokenizer) {
	tb.Helper()
	g, err := modelfile.OpenGGUF(smolLM2Path(tb))
	if err != nil {
		tb.Fatal(err)
	}
	defer g.Close()
	tok, err := bpe.FromGGUF(g)
	if err != nil {
		tb.Fatal(err)
	}
	c, w, err := llamaFromGGUF(g)
	if err != nil {
		tb.Fatal(err)
	}
	m, err := NewLlama(c, w)
	if err != nil {
		tb.Fatal(err)
	}
	return m, tok
}
