package pretrained

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/graftrl/graftrl/internal/limits"
	"github.com/graftrl/graftrl/modelfile"
)

// HFConfigFile is the name of a Hugging Face model directory's architecture file.
const HFConfigFile = "config.json"

// HFArchitectures lists the transformers architectures FromHF reads (config.json's
// "architectures"; model_type "llama").
func HFArchitectures() []string { return []string{"LlamaForCausalLM"} }

// hfConfig is config.json as FromHF reads it: the keys it needs, and whether the model ties its
// output layer to the token embedding.
type hfConfig struct {
	Config
	tied bool
}

// ReadHFConfig reads a Llama architecture from dir/config.json, as transformers' LlamaConfig
// reads it: hidden_size, intermediate_size, num_hidden_layers, num_attention_heads and
// vocab_size are required; num_key_value_heads defaults to the heads, head_dim to
// hidden_size/heads, rms_norm_eps to 1e-6 and rope_theta to 10000 (LlamaConfig's defaults). What
// graftrl's Llama does not compute is refused naming the key and its value: another
// architecture or model_type, rope_scaling other than null (or rope_parameters other than
// "default"), an activation other than silu, attention or MLP biases.
func ReadHFConfig(dir string) (Config, error) {
	h, err := readHFConfig(dir)
	return h.Config, err
}

func readHFConfig(dir string) (hfConfig, error) {
	m, err := readHFConfigMap(dir)
	if err != nil {
		return hfConfig{}, err
	}
	h, err := parseHFConfig(m)
	if err != nil {
		return hfConfig{}, fmt.Errorf("%s: %w", filepath.Join(dir, HFConfigFile), err)
	}
	return h, nil
}

// readHFConfigMap reads dir/config.json as a JSON object, its numbers kept as written.
func readHFConfigMap(dir string) (map[string]any, error) {
	path := filepath.Join(dir, HFConfigFile)
	b, err := limits.Model.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: no %s: not a Hugging Face model directory", dir, HFConfigFile)
	}
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, fmt.Errorf("%s: %v (want a JSON object)", path, err)
	}
	return m, nil
}

// parseHFConfig checks config.json's keys against what graftrl's Llama computes.
func parseHFConfig(m map[string]any) (hfConfig, error) {
	var h hfConfig
	if mt, _ := m["model_type"].(string); mt != "llama" {
		return h, fmt.Errorf("model_type is %s; only \"llama\" is read (architectures: %s)", jsonText(m["model_type"]), strings.Join(HFArchitectures(), ", "))
	}
	if a, ok := m["architectures"]; ok && a != nil {
		list, _ := a.([]any)
		if len(list) != 1 || !slices.Contains(HFArchitectures(), fmt.Sprint(list[0])) {
			return h, fmt.Errorf("architectures is %s; only %s is read", jsonText(a), jsonText(HFArchitectures()))
		}
	}
	for _, k := range []struct {
		key string
		dst *int
	}{
		{"hidden_size", &h.DModel}, {"intermediate_size", &h.Hidden}, {"num_hidden_layers", &h.Layers},
		{"num_attention_heads", &h.Heads}, {"vocab_size", &h.Vocab},
	} {
		v, err := hfInt(m, k.key, -1)
		if err != nil {
			return h, err
		}
		*k.dst = v
	}
	var err error
	if h.KVHeads, err = hfInt(m, "num_key_value_heads", h.Heads); err != nil {
		return h, err
	}
	if h.Heads < 1 {
		return h, fmt.Errorf("num_attention_heads is %d, want at least 1", h.Heads)
	}
	if h.HeadDim, err = hfInt(m, "head_dim", h.DModel/h.Heads); err != nil {
		return h, err
	}
	if h.NormEps, err = hfFloat(m, "rms_norm_eps", 1e-6); err != nil {
		return h, err
	}
	if h.RopeBase, err = hfRope(m); err != nil {
		return h, err
	}
	if act, ok := m["hidden_act"]; ok && act != "silu" {
		return h, fmt.Errorf("hidden_act is %s; only \"silu\" (SwiGLU) is computed", jsonText(act))
	}
	for _, key := range []string{"attention_bias", "mlp_bias"} {
		if v, ok := m[key]; ok && v != false {
			return h, fmt.Errorf("%s is %s; only false is computed (graftrl's Llama has no biases)", key, jsonText(v))
		}
	}
	if v, ok := m["tie_word_embeddings"]; ok {
		b, isBool := v.(bool)
		if !isBool {
			return h, fmt.Errorf("tie_word_embeddings is %s, not true or false", jsonText(v))
		}
		h.tied = b
	}
	return h, h.Validate()
}

// hfRope is RoPE's base: rope_theta with rope_scaling null (transformers 4), or
// rope_parameters {"rope_type": "default", "rope_theta": …} (transformers 5).
func hfRope(m map[string]any) (float64, error) {
	if s, ok := m["rope_scaling"]; ok && s != nil {
		return 0, fmt.Errorf("rope_scaling is %s; only null (plain RoPE) is computed", jsonText(s))
	}
	if p, ok := m["rope_parameters"]; ok && p != nil {
		pm, isObj := p.(map[string]any)
		if !isObj || (pm["rope_type"] != nil && pm["rope_type"] != "default") {
			return 0, fmt.Errorf("rope_parameters is %s; only rope_type \"default\" (plain RoPE) is computed", jsonText(p))
		}
		if _, ok := pm["rope_theta"]; ok {
			v, err := hfFloat(pm, "rope_theta", 0)
			if err != nil {
				return 0, fmt.Errorf("rope_parameters: %w", err)
			}
			return v, nil
		}
	}
	return hfFloat(m, "rope_theta", 10000)
}

// hfInt is the whole number at key; def < 0 makes the key required, else def is its value when
// the key is absent or null.
func hfInt(m map[string]any, key string, def int) (int, error) {
	v, ok := m[key]
	if !ok || v == nil {
		if def < 0 {
			return 0, fmt.Errorf("%s is missing; it is required", key)
		}
		return def, nil
	}
	n, isNum := v.(json.Number)
	i, err := strconv.ParseInt(string(n), 10, 32)
	if !isNum || err != nil || i < 0 {
		return 0, fmt.Errorf("%s is %s, not a whole number from 0 to 2^31-1", key, jsonText(v))
	}
	return int(i), nil
}

// hfFloat is the number at key, def when it is absent or null.
func hfFloat(m map[string]any, key string, def float64) (float64, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return def, nil
	}
	n, isNum := v.(json.Number)
	f, err := n.Float64()
	if !isNum || err != nil || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%s is %s, not a number", key, jsonText(v))
	}
	return f, nil
}

// jsonText is v as JSON, for messages.
func jsonText(v any) string {
	if v == nil {
		return "missing"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// HF is an open Hugging Face Llama directory: its architecture, read from config.json, and its
// safetensors weights, every tensor FromHF reads checked (present, its shape, a dtype that is
// read) before any is read.
type HF struct {
	Config Config
	dir    string
	tied   bool
	st     *modelfile.SafetensorsDir
}

// hfTensor is one tensor FromHF reads: its transformers name and PyTorch shape.
type hfTensor struct {
	name  string
	shape []int64
}

// hfTensors lists the tensors of c in transformers' names (modeling_llama.py), with their
// shapes: each nn.Linear's [out, in].
func hfTensors(c Config) []hfTensor {
	d, f, v := int64(c.DModel), int64(c.Hidden), int64(c.Vocab)
	q, k := int64(c.Heads*c.HeadDim), int64(c.KVHeads*c.HeadDim)
	ts := []hfTensor{{"model.embed_tokens.weight", []int64{v, d}}}
	for l := range c.Layers {
		p := "model.layers." + strconv.Itoa(l) + "."
		ts = append(ts,
			hfTensor{p + "input_layernorm.weight", []int64{d}},
			hfTensor{p + "self_attn.q_proj.weight", []int64{q, d}},
			hfTensor{p + "self_attn.k_proj.weight", []int64{k, d}},
			hfTensor{p + "self_attn.v_proj.weight", []int64{k, d}},
			hfTensor{p + "self_attn.o_proj.weight", []int64{d, q}},
			hfTensor{p + "post_attention_layernorm.weight", []int64{d}},
			hfTensor{p + "mlp.gate_proj.weight", []int64{f, d}},
			hfTensor{p + "mlp.up_proj.weight", []int64{f, d}},
			hfTensor{p + "mlp.down_proj.weight", []int64{d, f}},
		)
	}
	return append(ts, hfTensor{"model.norm.weight", []int64{d}})
}

// hfLMHead is the untied output layer's name in transformers.
const hfLMHead = "lm_head.weight"

// OpenHF opens the Llama in the Hugging Face directory dir: config.json (ReadHFConfig) and its
// safetensors weights (model.safetensors, or the shards of model.safetensors.index.json). Every
// tensor is checked before any is read: present, of its shape, F32, F16 or BF16; a bias of a
// projection is refused. The output layer must be the token embedding: with
// tie_word_embeddings true lm_head.weight is not read; with false (LlamaConfig's default) it must
// be there, and Weights refuses it unless it equals model.embed_tokens.weight. Close it when done.
func OpenHF(dir string) (*HF, error) {
	hc, err := readHFConfig(dir)
	if err != nil {
		return nil, err
	}
	st, err := modelfile.OpenSafetensorsDir(dir)
	if err != nil {
		return nil, err
	}
	h := &HF{Config: hc.Config, dir: dir, tied: hc.tied, st: st}
	if err := h.check(); err != nil {
		st.Close()
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return h, nil
}

// check checks every tensor the weights are read from, without reading them.
func (h *HF) check() error {
	for _, n := range h.st.Names() {
		if strings.HasSuffix(n, "_proj.bias") {
			return fmt.Errorf("tensor %s: graftrl's Llama has no biases in its projections", n)
		}
	}
	want := hfTensors(h.Config)
	if !h.tied {
		want = append(want, hfTensor{hfLMHead, []int64{int64(h.Config.Vocab), int64(h.Config.DModel)}})
	}
	for _, t := range want {
		info, file, ok := h.st.TensorInfo(t.name)
		if !ok {
			if t.name == hfLMHead {
				return fmt.Errorf("%s has tie_word_embeddings false (or absent: LlamaConfig's default) but no tensor %s; graftrl's Llama ties the output layer to the token embedding", HFConfigFile, hfLMHead)
			}
			return fmt.Errorf("missing tensor %s (the checkpoint has %d tensors)", t.name, len(h.st.Names()))
		}
		if !slices.Equal(info.Shape, t.shape) {
			return fmt.Errorf("tensor %s in %s has shape %v, want %v from %s", t.name, filepath.Base(file), info.Shape, t.shape, HFConfigFile)
		}
		if !slices.Contains(modelfile.SafetensorsReadable(), info.DType) {
			return fmt.Errorf("tensor %s in %s is %s; only %s are read", t.name, filepath.Base(file), info.DType, strings.Join(modelfile.SafetensorsReadable(), ", "))
		}
	}
	return nil
}

// Close closes the weights' files.
func (h *HF) Close() error { return h.st.Close() }

// Weights reads the weights as float32 in Weights' layouts: q and k moved from transformers'
// half-split RoPE order into GGUF's adjacent pairs (ropeToGGUF).
func (h *HF) Weights() (Weights, error) {
	var w Weights
	var err error
	get := func(name string) []float32 {
		if err != nil {
			return nil
		}
		var v []float32
		v, err = h.st.Tensor(name)
		return v
	}
	c := h.Config
	w.TokenEmbd = get("model.embed_tokens.weight")
	for l := range c.Layers {
		p := "model.layers." + strconv.Itoa(l) + "."
		w.Layers = append(w.Layers, LayerWeights{
			AttnNorm: get(p + "input_layernorm.weight"),
			Q:        get(p + "self_attn.q_proj.weight"), K: get(p + "self_attn.k_proj.weight"),
			V: get(p + "self_attn.v_proj.weight"), O: get(p + "self_attn.o_proj.weight"),
			FFNNorm: get(p + "post_attention_layernorm.weight"),
			Gate:    get(p + "mlp.gate_proj.weight"), Up: get(p + "mlp.up_proj.weight"),
			Down: get(p + "mlp.down_proj.weight"),
		})
		if err == nil {
			L := &w.Layers[l]
			L.Q, L.K = ropeToGGUF(L.Q, c.Heads, c.HeadDim), ropeToGGUF(L.K, c.KVHeads, c.HeadDim)
		}
	}
	w.OutputNorm = get("model.norm.weight")
	if err != nil {
		return Weights{}, err
	}
	if !h.tied {
		head := get(hfLMHead)
		if err != nil {
			return Weights{}, err
		}
		if i := firstDifference(head, w.TokenEmbd); i >= 0 {
			return Weights{}, fmt.Errorf("%s: %s differs from model.embed_tokens.weight (element %d: %v, not %v): an untied output layer, which graftrl's Llama does not have (tie_word_embeddings true is required)", h.dir, hfLMHead, i, head[i], w.TokenEmbd[i])
		}
	}
	return w, nil
}

// firstDifference is the first index where a and b differ bit for bit, -1 where none does.
func firstDifference(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

// FromHF reads the Llama in the Hugging Face directory dir (OpenHF, then its Weights).
func FromHF(dir string) (Config, Weights, error) {
	h, err := OpenHF(dir)
	if err != nil {
		return Config{}, Weights{}, err
	}
	defer h.Close()
	w, err := h.Weights()
	return h.Config, w, err
}

// ropeToGGUF moves the rows of a q or k projection ([heads·hd, cols]) from transformers' RoPE
// order into GGUF's. transformers rotates the pairs (i, i+hd/2) of each head (rotate_half);
// llama.cpp's converter (convert_hf_to_gguf.py, permute: reshape(heads, 2, hd/2, cols),
// swapaxes(1, 2)) puts each pair on adjacent rows, so GGUF row 2i+s of a head is transformers'
// row s·hd/2+i.
func ropeToGGUF(w []float32, heads, hd int) []float32 {
	return permuteRoPE(w, heads, hd, true)
}

// ropeToHF is ropeToGGUF's inverse: transformers' row s·hd/2+i of a head is GGUF's row 2i+s.
func ropeToHF(w []float32, heads, hd int) []float32 {
	return permuteRoPE(w, heads, hd, false)
}

func permuteRoPE(w []float32, heads, hd int, toGGUF bool) []float32 {
	cols := len(w) / (heads * hd)
	out := make([]float32, len(w))
	for h := range heads {
		for i := range hd / 2 {
			for s := range 2 {
				gguf, hf := h*hd+2*i+s, h*hd+s*hd/2+i
				dst, src := gguf, hf
				if !toGGUF {
					dst, src = hf, gguf
				}
				copy(out[dst*cols:(dst+1)*cols], w[src*cols:(src+1)*cols])
			}
		}
	}
	return out
}
