package pretrained

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/graftrl/graftrl/modelfile"
)

// checkWeights checks that w has the lengths c gives every tensor.
func checkWeights(c Config, w Weights) error {
	if err := c.Validate(); err != nil {
		return err
	}
	d, f, q, k := c.DModel, c.Hidden, c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	if len(w.TokenEmbd) != c.Vocab*d || len(w.OutputNorm) != d || len(w.Layers) != c.Layers {
		return fmt.Errorf("pretrained: weights have an embedding of %d values, an output norm of %d and %d layers; the config wants %d, %d and %d",
			len(w.TokenEmbd), len(w.OutputNorm), len(w.Layers), c.Vocab*d, d, c.Layers)
	}
	for l, L := range w.Layers {
		got := []int{len(L.AttnNorm), len(L.Q), len(L.K), len(L.V), len(L.O), len(L.FFNNorm), len(L.Gate), len(L.Up), len(L.Down)}
		want := []int{d, q * d, k * d, k * d, d * q, d, f * d, f * d, d * f}
		if !slices.Equal(got, want) {
			return fmt.Errorf("pretrained: layer %d's tensors have %v values (attn norm, q, k, v, o, ffn norm, gate, up, down); the config wants %v", l, got, want)
		}
	}
	return nil
}

// WriteHF writes c and w as a Hugging Face Llama directory that transformers'
// LlamaForCausalLM.from_pretrained loads: config.json (with the keys of extra added, such as
// max_position_embeddings or bos_token_id), model.safetensors (F32, in transformers' names, q
// and k moved back to its half-split RoPE order, the output layer tied to the embedding), and
// each of files (name → content, such as tokenizer.json) as it is. dir is created; files in it
// are replaced.
func WriteHF(dir string, c Config, w Weights, extra map[string]any, files map[string][]byte) error {
	if err := checkWeights(c, w); err != nil {
		return err
	}
	cfg := map[string]any{
		"architectures": HFArchitectures(), "model_type": "llama",
		"hidden_size": c.DModel, "intermediate_size": c.Hidden, "num_hidden_layers": c.Layers,
		"num_attention_heads": c.Heads, "num_key_value_heads": c.KVHeads, "head_dim": c.HeadDim,
		"vocab_size": c.Vocab, "rms_norm_eps": c.NormEps, "rope_theta": c.RopeBase, "rope_scaling": nil,
		"hidden_act": "silu", "attention_bias": false, "mlp_bias": false, "tie_word_embeddings": true,
		"torch_dtype": "float32",
	}
	for k, v := range extra {
		if _, taken := cfg[k]; taken {
			return fmt.Errorf("pretrained: extra config.json key %q is written from the architecture", k)
		}
		cfg[k] = v
	}
	for name := range files {
		if name != filepath.Base(name) || name == HFConfigFile || name == modelfile.SafetensorsFile || name == "." || name == ".." {
			return fmt.Errorf("pretrained: extra file %q: want a file name other than %s and %s", name, HFConfigFile, modelfile.SafetensorsFile)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, HFConfigFile), append(b, '\n'), 0o644); err != nil {
		return err
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			return err
		}
	}
	return writeFile(filepath.Join(dir, modelfile.SafetensorsFile), func(f io.Writer) error {
		return modelfile.WriteSafetensors(f, hfExport(c, w), map[string]string{"format": "pt"})
	})
}

// hfExport lists w's tensors in transformers' names and order (hfTensors).
func hfExport(c Config, w Weights) []modelfile.SafetensorsTensor {
	var data [][]float32
	data = append(data, w.TokenEmbd)
	for _, L := range w.Layers {
		data = append(data, L.AttnNorm, ropeToHF(L.Q, c.Heads, c.HeadDim), ropeToHF(L.K, c.KVHeads, c.HeadDim),
			L.V, L.O, L.FFNNorm, L.Gate, L.Up, L.Down)
	}
	data = append(data, w.OutputNorm)
	var out []modelfile.SafetensorsTensor
	for i, t := range hfTensors(c) {
		out = append(out, modelfile.SafetensorsTensor{Name: t.name, Shape: t.shape, Data: data[i]})
	}
	return out
}

// writeFile writes path through write, to a temporary file renamed into place once complete,
// so that a failed write leaves no file that looks whole.
func writeFile(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	// CreateTemp's 0600 is for the temporary name only.
	if err := errors.Join(write(tmp), tmp.Chmod(0o644), tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// GGUFMetadata is every metadata entry of g, in its order, for WriteGGUF.
func GGUFMetadata(g *modelfile.GGUF) []modelfile.KV {
	var out []modelfile.KV
	for _, k := range g.Keys() {
		v, _ := g.Value(k)
		out = append(out, modelfile.KV{Key: k, Value: v})
	}
	return out
}

// HFConfigExtras are the config.json keys a GGUF's metadata gives beside the architecture:
// max_position_embeddings (its context length) and the bos, eos and pad token ids.
func HFConfigExtras(g *modelfile.GGUF) map[string]any {
	out := map[string]any{}
	arch, _ := g.String("general.architecture")
	for key, hf := range map[string]string{
		arch + ".context_length": "max_position_embeddings", "tokenizer.ggml.bos_token_id": "bos_token_id",
		"tokenizer.ggml.eos_token_id": "eos_token_id", "tokenizer.ggml.padding_token_id": "pad_token_id",
	} {
		if v, err := g.Uint32(key); err == nil {
			out[hf] = v
		}
	}
	return out
}

// ggufArchKeys are the metadata entries WriteGGUF writes from the config, replacing the
// source's: llama.cpp's names and types for a llama.
func ggufArchKeys(c Config) []modelfile.KV {
	kv := func(key string, v any) modelfile.KV { return modelfile.KV{Key: key, Value: v} }
	return []modelfile.KV{
		kv("general.architecture", "llama"),
		kv("llama.block_count", uint32(c.Layers)), kv("llama.embedding_length", uint32(c.DModel)),
		kv("llama.feed_forward_length", uint32(c.Hidden)), kv("llama.attention.head_count", uint32(c.Heads)),
		kv("llama.attention.head_count_kv", uint32(c.KVHeads)), kv("llama.rope.freq_base", float32(c.RopeBase)),
		kv("llama.attention.layer_norm_rms_epsilon", float32(c.NormEps)),
		kv("llama.rope.dimension_count", uint32(c.HeadDim)), kv("llama.vocab_size", uint32(c.Vocab)),
		// LLAMA_FTYPE_ALL_F32: every tensor is written as F32.
		kv("general.file_type", uint32(0)),
	}
}

// WriteGGUF writes c and w as a GGUF (version 3) with every tensor F32, in llama.cpp's names,
// so that llama.cpp loads it: meta's entries in their order (a source file's, GGUFMetadata),
// the architecture's (general.architecture, llama.block_count, …, general.file_type 0) written
// from c in place of the source's, or after them where it has none. q and k stay in GGUF's
// RoPE order, as Weights holds them; the output layer is the token embedding (no output.weight).
// The source's general.alignment, when it has one, is kept, and the data aligned to it.
func WriteGGUF(path string, c Config, w Weights, meta []modelfile.KV) error {
	if err := checkWeights(c, w); err != nil {
		return err
	}
	kvs := slices.Clone(meta)
	for _, a := range ggufArchKeys(c) {
		i := slices.IndexFunc(kvs, func(m modelfile.KV) bool { return m.Key == a.Key })
		if i >= 0 {
			kvs[i] = a
		} else {
			kvs = append(kvs, a)
		}
	}
	return writeFile(path, func(f io.Writer) error { return modelfile.WriteGGUF(f, kvs, ggufExport(c, w)) })
}

// ggufExport lists w's tensors in llama.cpp's names and order, dims in ggml's order (the row
// length first).
func ggufExport(c Config, w Weights) []modelfile.GGUFTensor {
	d, f, q, k := int64(c.DModel), int64(c.Hidden), int64(c.Heads*c.HeadDim), int64(c.KVHeads*c.HeadDim)
	t := func(name string, data []float32, dims ...int64) modelfile.GGUFTensor {
		return modelfile.GGUFTensor{Name: name, Dims: dims, Data: data}
	}
	ts := []modelfile.GGUFTensor{t("token_embd.weight", w.TokenEmbd, d, int64(c.Vocab))}
	for l, L := range w.Layers {
		p := "blk." + strconv.Itoa(l) + "."
		ts = append(ts,
			t(p+"attn_norm.weight", L.AttnNorm, d), t(p+"attn_q.weight", L.Q, d, q),
			t(p+"attn_k.weight", L.K, d, k), t(p+"attn_v.weight", L.V, d, k),
			t(p+"attn_output.weight", L.O, q, d), t(p+"ffn_norm.weight", L.FFNNorm, d),
			t(p+"ffn_gate.weight", L.Gate, d, f), t(p+"ffn_up.weight", L.Up, d, f),
			t(p+"ffn_down.weight", L.Down, f, d))
	}
	return append(ts, t("output_norm.weight", w.OutputNorm, d))
}

// HFConfigExtrasOf are the keys of dir/config.json beside the architecture that WriteHF should
// carry to a copy: max_position_embeddings and the bos, eos and pad token ids, where present.
func HFConfigExtrasOf(dir string) (map[string]any, error) {
	m, err := readHFConfigMap(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, k := range []string{"max_position_embeddings", "bos_token_id", "eos_token_id", "pad_token_id"} {
		if v, ok := m[k]; ok && v != nil {
			out[k] = v
		}
	}
	return out, nil
}

// HFGGUFMetadata are the GGUF metadata entries a Hugging Face directory gives beside its
// architecture and tokenizer: general.name (the directory's name) and llama.context_length
// (max_position_embeddings, or LlamaConfig's default of 2048), which llama.cpp requires.
func HFGGUFMetadata(dir string) ([]modelfile.KV, error) {
	m, err := readHFConfigMap(dir)
	if err != nil {
		return nil, err
	}
	ctx, err := hfInt(m, "max_position_embeddings", 2048)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, HFConfigFile), err)
	}
	name, _ := filepath.Abs(dir)
	return []modelfile.KV{
		{Key: "general.architecture", Value: "llama"}, {Key: "general.type", Value: "model"},
		{Key: "general.name", Value: filepath.Base(name)}, {Key: "llama.context_length", Value: uint32(ctx)},
	}, nil
}
