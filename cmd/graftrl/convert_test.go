package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/internal/limits"
	"github.com/graftrl/graftrl/modelfile"
	"github.com/graftrl/graftrl/policy/pretrained"
)

// chatML is SmolLM2's chat template, which tokens/bpe renders.
const chatML = "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"

// tinyLlama is a one-block llama small enough to write in a test, with every width a multiple of
// 4 as the host decoder wants.
func tinyLlama() (pretrained.Config, pretrained.Weights) {
	c := pretrained.Config{Layers: 1, DModel: 8, Hidden: 8, Heads: 2, KVHeads: 1, HeadDim: 4, Vocab: 8, RopeBase: 10000, NormEps: float64(float32(1e-5))}
	next := float32(0)
	v := func(n int) []float32 {
		out := make([]float32, n)
		for i := range out {
			next += 0.37
			out[i] = next - float32(int(next)) - 0.5
		}
		return out
	}
	w := pretrained.Weights{TokenEmbd: v(8 * 8), OutputNorm: v(8)}
	w.Layers = []pretrained.LayerWeights{{AttnNorm: v(8), Q: v(64), K: v(32), V: v(32), O: v(64), FFNNorm: v(8), Gate: v(64), Up: v(64), Down: v(64)}}
	return c, w
}

// tinyTokenizerMeta is a byte-level BPE vocabulary of 8 tokens, the ChatML specials among them.
func tinyTokenizerMeta(merges []string) []modelfile.KV {
	meta := []modelfile.KV{
		{Key: "general.name", Value: "tiny"}, {Key: "llama.context_length", Value: uint32(64)},
		{Key: "tokenizer.ggml.model", Value: "gpt2"}, {Key: "tokenizer.ggml.pre", Value: "smollm"},
		{Key: "tokenizer.ggml.tokens", Value: []string{"a", "b", "ab", "Ġ", "c", "<|im_start|>", "<|im_end|>", "<|endoftext|>"}},
		{Key: "tokenizer.ggml.token_type", Value: []int32{1, 1, 1, 1, 1, 3, 3, 3}},
		{Key: "tokenizer.ggml.bos_token_id", Value: uint32(5)}, {Key: "tokenizer.ggml.eos_token_id", Value: uint32(6)},
		{Key: "tokenizer.chat_template", Value: chatML},
	}
	if merges != nil {
		meta = append(meta, modelfile.KV{Key: "tokenizer.ggml.merges", Value: merges})
	}
	return meta
}

// writeTinyGGUF writes the tiny llama with its tokenizer (merges as given; nil for none).
func writeTinyGGUF(t *testing.T, path string, merges []string) string {
	t.Helper()
	c, w := tinyLlama()
	if err := pretrained.WriteGGUF(path, c, w, tinyTokenizerMeta(merges)); err != nil {
		t.Fatal(err)
	}
	return path
}

// handTensor is a tensor of handGGUF: its dims in ggml's order, type, offset and data.
type handTensor struct {
	name   string
	dims   []uint64
	typ    modelfile.TensorType
	offset uint64
	data   []byte
}

// handGGUF writes a GGUF v3 byte by byte: string and uint32 metadata, the tensors' directory as
// given (offsets included, so that a test can point one past the end) and their data after the
// directory aligned to 32.
func handGGUF(t *testing.T, path string, meta [][2]any, tensors []handTensor) string {
	t.Helper()
	le := binary.LittleEndian
	b := []byte("GGUF")
	b = le.AppendUint32(b, 3)
	b = le.AppendUint64(b, uint64(len(tensors)))
	b = le.AppendUint64(b, uint64(len(meta)))
	str := func(s string) { b = le.AppendUint64(b, uint64(len(s))); b = append(b, s...) }
	for _, kv := range meta {
		str(kv[0].(string))
		switch v := kv[1].(type) {
		case string:
			b = le.AppendUint32(b, uint32(modelfile.TypeString))
			str(v)
		case uint32:
			b = le.AppendUint32(b, uint32(modelfile.TypeUint32))
			b = le.AppendUint32(b, v)
		}
	}
	for _, ts := range tensors {
		str(ts.name)
		b = le.AppendUint32(b, uint32(len(ts.dims)))
		for _, d := range ts.dims {
			b = le.AppendUint64(b, d)
		}
		b = le.AppendUint32(b, uint32(ts.typ))
		b = le.AppendUint64(b, ts.offset)
	}
	for len(b)%32 != 0 {
		b = append(b, 0)
	}
	for _, ts := range tensors {
		b = append(b, ts.data...)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// convertTo runs graftrl convert and fails the test on an error.
func convertTo(t *testing.T, in, out string) {
	t.Helper()
	if _, stderr, err := cliErr(t, "convert", "--in", in, "--out", out); err != nil {
		t.Fatalf("convert %s → %s: %v (%s)", in, out, err, stderr)
	}
}

// TestConvertRoundTrip: the tiny GGUF through a Hugging Face directory, an F32 GGUF and a
// Hugging Face directory again: the weights and config stay bit for bit, the two directories'
// files are byte for byte the same, and chat answers from the directory.
func TestConvertRoundTrip(t *testing.T) {
	dir := t.TempDir()
	src := writeTinyGGUF(t, filepath.Join(dir, "tiny.gguf"), []string{"a b"})
	hf, f32, hf2 := filepath.Join(dir, "hf"), filepath.Join(dir, "again.gguf"), filepath.Join(dir, "hf2")
	convertTo(t, src, hf)
	convertTo(t, hf, f32)
	convertTo(t, f32, hf2)
	c, w := tinyLlama()
	hc, hw, err := pretrained.FromHF(hf)
	if err != nil || hc != c {
		t.Fatalf("FromHF: %+v (%v), want %+v", hc, err, c)
	}
	if !sameWeights(hw, w) {
		t.Error("weights through the Hugging Face directory differ")
	}
	for _, name := range []string{"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} {
		a, _ := os.ReadFile(filepath.Join(hf, name))
		b, _ := os.ReadFile(filepath.Join(hf2, name))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs after GGUF → HF → GGUF → HF", name)
		}
	}
	var cfg map[string]any
	b, _ := os.ReadFile(filepath.Join(hf, "config.json"))
	if json.Unmarshal(b, &cfg) != nil || cfg["max_position_embeddings"] != 64.0 || cfg["eos_token_id"] != 6.0 {
		t.Errorf("config.json lacks the GGUF's context length or eos: %s", b)
	}
	for _, model := range []string{hf, f32} {
		out, stderr, code := cli(t, "chat", "--model", model, "--prompt", "ab", "--max-tokens", "3")
		if code != 0 || out == "" {
			t.Errorf("chat --model %s: status %d, %q %s", model, code, out, stderr)
		}
	}
}

func sameWeights(a, b pretrained.Weights) bool {
	var fa, fb []float32
	for _, w := range []pretrained.Weights{a, b} {
		all := append([]float32(nil), w.TokenEmbd...)
		for _, L := range w.Layers {
			for _, s := range [][]float32{L.AttnNorm, L.Q, L.K, L.V, L.O, L.FFNNorm, L.Gate, L.Up, L.Down} {
				all = append(all, s...)
			}
		}
		all = append(all, w.OutputNorm...)
		if fa == nil {
			fa = all
		} else {
			fb = all
		}
	}
	if len(fa) != len(fb) {
		return false
	}
	for i := range fa {
		if fa[i] != fb[i] {
			return false
		}
	}
	return true
}

// TestConvertFlagsRefused: missing or bad flags, and an --out that exists, are refused with
// status 2 before anything is read.
func TestConvertFlagsRefused(t *testing.T) {
	dir := t.TempDir()
	src := writeTinyGGUF(t, filepath.Join(dir, "tiny.gguf"), []string{"a b"})
	full := filepath.Join(dir, "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(full, "x"), nil, 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--out", filepath.Join(dir, "o")}, "--in MODEL is required"},
		{[]string{"--in", src}, "--out PATH is required"},
		{[]string{"--in", src, "--out", filepath.Join(dir, "o"), "--to", "onnx"}, `--to "onnx": allowed: hf, gguf`},
		{[]string{"--in", src, "--out", src}, "exists; give a new path"},
		{[]string{"--in", src, "--out", full}, "a directory that is not empty"},
		{[]string{"--in", src, "--out", filepath.Join(dir, "no", "o")}, "does not exist"},
		{[]string{"--in", filepath.Join(dir, "none.gguf"), "--out", filepath.Join(dir, "o")}, "none.gguf: no such file or directory"},
	} {
		_, _, err := cliErr(t, append([]string{"convert"}, c.args...)...)
		if exitStatus(err) != exitConfig || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("convert %v: status %d, %v; want 2 and %q", c.args, exitStatus(err), err, c.want)
		}
	}
}

// editFile rewrites a file through edit.
func editFile(t *testing.T, path string, edit func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, edit(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tinyHF writes the tiny model as a Hugging Face directory in dir/name.
func tinyHF(t *testing.T, dir, name string) string {
	t.Helper()
	src := writeTinyGGUF(t, filepath.Join(dir, name+".gguf"), []string{"a b"})
	out := filepath.Join(dir, name)
	convertTo(t, src, out)
	return out
}

// badModel is a case of TestModelInputRefused: a model written at path (less its extension),
// and what its refusal must say.
type badModel struct {
	name  string
	env   string // GRAFTRL_MAX_MODEL_BYTES for the case
	model func(path string) string
	want  []string
}

// badModels are the models TestModelInputRefused expects refused, written in dir.
func badModels(t *testing.T, dir string) []badModel {
	q5k := handTensor{"blk.0.attn_q.weight", []uint64{256}, modelfile.Q5_K, 0, make([]byte, 176)}
	return []badModel{
		{"truncated GGUF", "", func(p string) string {
			writeTinyGGUF(t, p+".gguf", []string{"a b"})
			editFile(t, p+".gguf", func(b []byte) []byte { return b[:len(b)-100] })
			return p + ".gguf"
		}, []string{`tensor "blk.0.ffn_down.weight": its 256 bytes at offset 1600 end past the data section`}},
		{"bad magic", "", func(p string) string {
			writeTinyGGUF(t, p+".gguf", []string{"a b"})
			editFile(t, p+".gguf", func(b []byte) []byte { return append([]byte("GGML"), b[4:]...) })
			return p + ".gguf"
		}, []string{`magic is "GGML", not "GGUF": not a GGUF file`}},
		{"offset past the end", "", func(p string) string {
			return handGGUF(t, p+".gguf", [][2]any{{"general.architecture", "llama"}}, []handTensor{{"token_embd.weight", []uint64{8}, modelfile.F32, 4096, make([]byte, 32)}})
		}, []string{`tensor "token_embd.weight": its 32 bytes at offset 4096 end past the data section`}},
		{"unknown architecture", "", func(p string) string {
			return handGGUF(t, p+".gguf", [][2]any{{"general.architecture", "gpt2"}}, nil)
		}, []string{`general.architecture is "gpt2"; only llama is read`}},
		{"Q5_K", "", func(p string) string {
			return handGGUF(t, p+".gguf", [][2]any{{"general.architecture", "llama"}}, []handTensor{q5k})
		}, []string{"tensor blk.0.attn_q.weight is Q5_K, a type that is not dequantised (F32, F16, BF16, Q8_0, Q4_0 and Q4_1 are)"}},
		{"no merges", "", func(p string) string { return writeTinyGGUF(t, p+".gguf", nil) },
			[]string{`metadata key "tokenizer.ggml.merges" is not in the file`}},
		{"empty merges", "", func(p string) string { return writeTinyGGUF(t, p+".gguf", []string{}) },
			[]string{"tokenizer.ggml.merges is empty; a byte-level BPE tokenizer needs its merges"}},
		{"GGUF over the limit as float32", "128KiB", func(p string) string {
			// 64 rows of 1024 Q4_0 values: 36 KiB in the file, 256 KiB as float32.
			q4 := handTensor{"token_embd.weight", []uint64{1024, 64}, modelfile.Q4_0, 0, make([]byte, 64*32*18)}
			return handGGUF(t, p+".gguf", [][2]any{{"general.architecture", "llama"}}, []handTensor{q4})
		}, []string{"as float32 weights is 256KiB, over 128KiB, the limit for a model file (raise it with GRAFTRL_MAX_MODEL_BYTES"}},
		{"HF over the limit", "", func(p string) string {
			return hugeHF(t, dir, p)
		}, []string{"as float32 weights is", "over 8GiB, the limit for a model file"}},
		{"HF truncated safetensors", "", func(p string) string {
			out := tinyHF(t, dir, filepath.Base(p))
			editFile(t, filepath.Join(out, "model.safetensors"), func(b []byte) []byte { return b[:len(b)-10] })
			return out
		}, []string{"model.safetensors", `tensor "model.norm.weight": its data`, "ends past the end of the file", "truncated"}},
		{"HF bad header", "", func(p string) string {
			out := tinyHF(t, dir, filepath.Base(p))
			editFile(t, filepath.Join(out, "model.safetensors"), func(b []byte) []byte {
				return append(binary.LittleEndian.AppendUint64(nil, 1<<40), b[8:]...)
			})
			return out
		}, []string{"model.safetensors: header length 1099511627776 is past the end of the file"}},
		{"HF I32 tensor", "", func(p string) string {
			out := tinyHF(t, dir, filepath.Base(p))
			editFile(t, filepath.Join(out, "model.safetensors"), func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"model.norm.weight":{"dtype":"F32"`), []byte(`"model.norm.weight":{"dtype":"I32"`), 1)
			})
			return out
		}, []string{"tensor model.norm.weight in model.safetensors is I32; only F32, F16, BF16 are read"}},
		{"HF missing tensor", "", func(p string) string {
			out := tinyHF(t, dir, filepath.Base(p))
			editFile(t, filepath.Join(out, "model.safetensors"), func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"model.norm.weight"`), []byte(`"model.norm.weighX"`), 1)
			})
			return out
		}, []string{"missing tensor model.norm.weight"}},
		{"HF architecture", "", func(p string) string {
			out := tinyHF(t, dir, filepath.Base(p))
			editFile(t, filepath.Join(out, "config.json"), func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"model_type": "llama"`), []byte(`"model_type": "gpt2"`), 1)
			})
			return out
		}, []string{`config.json: model_type is "gpt2"; only "llama" is read`}},
		{"HF tokenizer without merges", "", func(p string) string {
			out := tinyHF(t, dir, filepath.Base(p))
			editFile(t, filepath.Join(out, "tokenizer.json"), func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"merges":["a b"]`), []byte(`"merges":[]`), 1)
			})
			return out
		}, []string{"tokenizer.json: model.merges is missing or empty; a byte-level BPE tokenizer needs its merges"}},
		{"not a model directory", "", func(p string) string {
			os.MkdirAll(p, 0o755)
			return p
		}, []string{"no config.json: not a Hugging Face model directory"}},
	}
}

// TestModelInputRefused: every bad model is refused with status 2 before anything is written,
// the message naming the file and what was wrong, by convert and by chat.
func TestModelInputRefused(t *testing.T) {
	dir := t.TempDir()
	for _, c := range badModels(t, dir) {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			if c.env != "" {
				t.Setenv(limits.Model.Env(), c.env)
			}
			path := c.model(filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")))
			out := filepath.Join(t.TempDir(), "out")
			for _, args := range [][]string{{"convert", "--in", path, "--out", out}, {"chat", "--model", path, "--prompt", "hi"}} {
				_, _, err := cliErr(t, args...)
				if exitStatus(err) != exitConfig || err == nil {
					t.Fatalf("%s: status %d (%v), want %d", args[0], exitStatus(err), err, exitConfig)
				}
				for _, w := range append([]string{path}, c.want...) {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s: error %q lacks %q", args[0], err, w)
					}
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("convert wrote %s for a refused model", out)
			}
		})
	}
}

// hugeHF is the tiny directory with a config.json that claims 110 TB of float32 weights.
func hugeHF(t *testing.T, dir, p string) string {
	t.Helper()
	out := tinyHF(t, dir, filepath.Base(p))
	editFile(t, filepath.Join(out, "config.json"), func(b []byte) []byte {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		for k, v := range map[string]int{"hidden_size": 65536, "intermediate_size": 65536, "num_hidden_layers": 1000,
			"num_attention_heads": 64, "num_key_value_heads": 64, "head_dim": 1024} {
			m[k] = v
		}
		b, _ = json.Marshal(m)
		return b
	})
	return out
}

// TestModelLargerThanMemory: with the model limit raised past it, a model claiming more than the
// memory available is refused against MemAvailable (where /proc/meminfo exists).
func TestModelLargerThanMemory(t *testing.T) {
	if _, err := os.Stat("/proc/meminfo"); err != nil {
		t.Skip("no /proc/meminfo: the memory check does not apply")
	}
	t.Setenv(limits.Model.Env(), "1048576GiB")
	dir := t.TempDir()
	path := hugeHF(t, dir, filepath.Join(dir, "huge"))
	for _, args := range [][]string{{"convert", "--in", path, "--out", filepath.Join(dir, "out")}, {"chat", "--model", path, "--prompt", "hi"}} {
		_, _, err := cliErr(t, args...)
		if exitStatus(err) != exitConfig || err == nil || !strings.Contains(err.Error(), path+" needs about") ||
			!strings.Contains(err.Error(), "available (MemAvailable in /proc/meminfo); free memory or use a smaller model") {
			t.Errorf("%s: status %d, %v", args[0], exitStatus(err), err)
		}
	}
}
