package pretrained

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
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

// MetaKV is one metadata entry of a GGUF file to write: Value is a modelfile.Value (from a file
// read), or a Go scalar (uint8 … float64, bool, string) or slice of one.
type MetaKV struct {
	Key   string
	Value any
}

// GGUFMetadata is every metadata entry of g, in its order, for WriteGGUF.
func GGUFMetadata(g *modelfile.GGUF) []MetaKV {
	var out []MetaKV
	for _, k := range g.Keys() {
		v, _ := g.Value(k)
		out = append(out, MetaKV{k, v})
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
func ggufArchKeys(c Config) []MetaKV {
	return []MetaKV{
		{"general.architecture", "llama"},
		{"llama.block_count", uint32(c.Layers)}, {"llama.embedding_length", uint32(c.DModel)},
		{"llama.feed_forward_length", uint32(c.Hidden)}, {"llama.attention.head_count", uint32(c.Heads)},
		{"llama.attention.head_count_kv", uint32(c.KVHeads)}, {"llama.rope.freq_base", float32(c.RopeBase)},
		{"llama.attention.layer_norm_rms_epsilon", float32(c.NormEps)},
		{"llama.rope.dimension_count", uint32(c.HeadDim)}, {"llama.vocab_size", uint32(c.Vocab)},
		// LLAMA_FTYPE_ALL_F32: every tensor is written as F32.
		{"general.file_type", uint32(0)},
	}
}

// WriteGGUF writes c and w as a GGUF (version 3) with every tensor F32, in llama.cpp's names,
// so that llama.cpp loads it: meta's entries in their order (a source file's, GGUFMetadata),
// the architecture's (general.architecture, llama.block_count, …, general.file_type 0) written
// from c in place of the source's, or after them where it has none. q and k stay in GGUF's
// RoPE order, as Weights holds them; the output layer is the token embedding (no output.weight).
func WriteGGUF(path string, c Config, w Weights, meta []MetaKV) error {
	if err := checkWeights(c, w); err != nil {
		return err
	}
	kvs := slices.Clone(meta)
	for _, a := range ggufArchKeys(c) {
		i := slices.IndexFunc(kvs, func(m MetaKV) bool { return m.Key == a.Key })
		if i >= 0 {
			kvs[i] = a
		} else {
			kvs = append(kvs, a)
		}
	}
	align := int64(modelfile.DefaultAlignment)
	for _, m := range kvs {
		if m.Key == "general.alignment" {
			if v, ok := plainValue(m.Value).(uint32); ok && v > 0 && v&(v-1) == 0 {
				align = int64(v)
			}
		}
	}
	return writeFile(path, func(f io.Writer) error { return encodeGGUF(f, kvs, ggufExport(c, w), align) })
}

// ggufTensor is a float32 tensor to write, with its dims in ggml's order (the row length first).
type ggufTensor struct {
	name string
	dims []int64
	data []float32
}

func ggufExport(c Config, w Weights) []ggufTensor {
	d, f, q, k := int64(c.DModel), int64(c.Hidden), int64(c.Heads*c.HeadDim), int64(c.KVHeads*c.HeadDim)
	ts := []ggufTensor{{"token_embd.weight", []int64{d, int64(c.Vocab)}, w.TokenEmbd}}
	for l, L := range w.Layers {
		p := "blk." + strconv.Itoa(l) + "."
		ts = append(ts,
			ggufTensor{p + "attn_norm.weight", []int64{d}, L.AttnNorm}, ggufTensor{p + "attn_q.weight", []int64{d, q}, L.Q},
			ggufTensor{p + "attn_k.weight", []int64{d, k}, L.K}, ggufTensor{p + "attn_v.weight", []int64{d, k}, L.V},
			ggufTensor{p + "attn_output.weight", []int64{q, d}, L.O}, ggufTensor{p + "ffn_norm.weight", []int64{d}, L.FFNNorm},
			ggufTensor{p + "ffn_gate.weight", []int64{d, f}, L.Gate}, ggufTensor{p + "ffn_up.weight", []int64{d, f}, L.Up},
			ggufTensor{p + "ffn_down.weight", []int64{f, d}, L.Down})
	}
	return append(ts, ggufTensor{"output_norm.weight", []int64{d}, w.OutputNorm})
}

// ggufWriter writes GGUF's little-endian fields.
type ggufWriter struct {
	w   *bufio.Writer
	n   int64
	err error
}

func (e *ggufWriter) bytes(b []byte) {
	if e.err == nil {
		var n int
		n, e.err = e.w.Write(b)
		e.n += int64(n)
	}
}
func (e *ggufWriter) u32(v uint32) { e.bytes(binary.LittleEndian.AppendUint32(nil, v)) }
func (e *ggufWriter) u64(v uint64) { e.bytes(binary.LittleEndian.AppendUint64(nil, v)) }
func (e *ggufWriter) str(s string) { e.u64(uint64(len(s))); e.bytes([]byte(s)) }
func (e *ggufWriter) pad(align int64) {
	e.bytes(make([]byte, (align-e.n%align)%align))
}

// encodeGGUF writes the header, metadata, tensor directory and F32 data, each tensor's data at
// a multiple of align from the data section's start.
func encodeGGUF(w io.Writer, kvs []MetaKV, tensors []ggufTensor, align int64) error {
	e := &ggufWriter{w: bufio.NewWriterSize(w, 1<<16)}
	e.bytes([]byte("GGUF"))
	e.u32(3)
	e.u64(uint64(len(tensors)))
	e.u64(uint64(len(kvs)))
	for _, m := range kvs {
		e.str(m.Key)
		if err := e.value(m.Value); err != nil {
			return fmt.Errorf("metadata key %q: %w", m.Key, err)
		}
	}
	var off int64
	for _, t := range tensors {
		e.str(t.name)
		e.u32(uint32(len(t.dims)))
		for _, d := range t.dims {
			e.u64(uint64(d))
		}
		e.u32(uint32(modelfile.F32))
		e.u64(uint64(off))
		off += (4*int64(len(t.data)) + align - 1) / align * align
	}
	e.pad(align)
	buf := make([]byte, 0, 1<<16)
	for _, t := range tensors {
		for i, v := range t.data {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			if len(buf) == cap(buf) || i == len(t.data)-1 {
				e.bytes(buf)
				buf = buf[:0]
			}
		}
		e.pad(align)
	}
	if e.err != nil {
		return e.err
	}
	return e.w.Flush()
}

// plainValue is v's Go value: a modelfile.Value's Any, else v.
func plainValue(v any) any {
	if mv, ok := v.(modelfile.Value); ok {
		return mv.Any()
	}
	return v
}

// value writes a metadata value's type and payload.
func (e *ggufWriter) value(v any) error {
	if mv, ok := v.(modelfile.Value); ok {
		e.u32(uint32(mv.Type()))
		return e.payload(mv.Type(), mv.ElemType(), mv.Any())
	}
	typ, elem, ok := goType(v)
	if !ok {
		return fmt.Errorf("a Go value of type %T has no GGUF type", v)
	}
	e.u32(uint32(typ))
	return e.payload(typ, elem, v)
}

// goType is the GGUF type of a Go scalar or slice (and its elements' type).
func goType(v any) (typ, elem modelfile.ValueType, ok bool) {
	scalar := func(v any) (modelfile.ValueType, bool) {
		switch v.(type) {
		case uint8:
			return modelfile.TypeUint8, true
		case int8:
			return modelfile.TypeInt8, true
		case uint16:
			return modelfile.TypeUint16, true
		case int16:
			return modelfile.TypeInt16, true
		case uint32:
			return modelfile.TypeUint32, true
		case int32:
			return modelfile.TypeInt32, true
		case float32:
			return modelfile.TypeFloat32, true
		case bool:
			return modelfile.TypeBool, true
		case string:
			return modelfile.TypeString, true
		case uint64:
			return modelfile.TypeUint64, true
		case int64:
			return modelfile.TypeInt64, true
		case float64:
			return modelfile.TypeFloat64, true
		}
		return 0, false
	}
	if t, ok := scalar(v); ok {
		return t, t, true
	}
	var first any
	switch v.(type) {
	case []uint8:
		first = uint8(0)
	case []int8:
		first = int8(0)
	case []uint16:
		first = uint16(0)
	case []int16:
		first = int16(0)
	case []uint32:
		first = uint32(0)
	case []int32:
		first = int32(0)
	case []float32:
		first = float32(0)
	case []bool:
		first = false
	case []string:
		first = ""
	case []uint64:
		first = uint64(0)
	case []int64:
		first = int64(0)
	case []float64:
		first = float64(0)
	default:
		return 0, 0, false
	}
	t, _ := scalar(first)
	return modelfile.TypeArray, t, true
}

// payload writes a value of type typ (elements of type elem for an array) without its type.
func (e *ggufWriter) payload(typ, elem modelfile.ValueType, v any) error {
	le := binary.LittleEndian
	switch x := v.(type) {
	case uint8:
		e.bytes([]byte{x})
	case int8:
		e.bytes([]byte{byte(x)})
	case uint16:
		e.bytes(le.AppendUint16(nil, x))
	case int16:
		e.bytes(le.AppendUint16(nil, uint16(x)))
	case uint32:
		e.u32(x)
	case int32:
		e.u32(uint32(x))
	case float32:
		e.u32(math.Float32bits(x))
	case bool:
		b := byte(0)
		if x {
			b = 1
		}
		e.bytes([]byte{b})
	case string:
		e.str(x)
	case uint64:
		e.u64(x)
	case int64:
		e.u64(uint64(x))
	case float64:
		e.u64(math.Float64bits(x))
	case []modelfile.Value: // an array of arrays
		e.u32(uint32(elem))
		e.u64(uint64(len(x)))
		for _, a := range x {
			if err := e.payload(a.Type(), a.ElemType(), a.Any()); err != nil {
				return err
			}
		}
	default:
		if typ != modelfile.TypeArray {
			return fmt.Errorf("a Go value of type %T is not a GGUF %s", v, typ)
		}
		return e.array(elem, v)
	}
	return e.err
}

// array writes a slice of scalars: the element type, the count, the elements.
func (e *ggufWriter) array(elem modelfile.ValueType, v any) error {
	write := func(n int, at func(int) any) error {
		e.u32(uint32(elem))
		e.u64(uint64(n))
		for i := range n {
			if err := e.payload(elem, elem, at(i)); err != nil {
				return err
			}
		}
		return e.err
	}
	switch s := v.(type) {
	case []uint8:
		return write(len(s), func(i int) any { return s[i] })
	case []int8:
		return write(len(s), func(i int) any { return s[i] })
	case []uint16:
		return write(len(s), func(i int) any { return s[i] })
	case []int16:
		return write(len(s), func(i int) any { return s[i] })
	case []uint32:
		return write(len(s), func(i int) any { return s[i] })
	case []int32:
		return write(len(s), func(i int) any { return s[i] })
	case []float32:
		return write(len(s), func(i int) any { return s[i] })
	case []bool:
		return write(len(s), func(i int) any { return s[i] })
	case []string:
		return write(len(s), func(i int) any { return s[i] })
	case []uint64:
		return write(len(s), func(i int) any { return s[i] })
	case []int64:
		return write(len(s), func(i int) any { return s[i] })
	case []float64:
		return write(len(s), func(i int) any { return s[i] })
	}
	return fmt.Errorf("a Go value of type %T is not a GGUF array", v)
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
func HFGGUFMetadata(dir string) ([]MetaKV, error) {
	m, err := readHFConfigMap(dir)
	if err != nil {
		return nil, err
	}
	ctx, err := hfInt(m, "max_position_embeddings", 2048)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, HFConfigFile), err)
	}
	name, _ := filepath.Abs(dir)
	return []MetaKV{
		{"general.architecture", "llama"}, {"general.type", "model"}, {"general.name", filepath.Base(name)},
		{"llama.context_length", uint32(ctx)},
	}, nil
}
