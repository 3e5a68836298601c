package modelfile

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// smolLM2Env set to 1 makes the checks on the real model fail rather than skip when it is not
// installed; .ci/run installs it first (scripts/install-smollm2.sh), so CI cannot skip them.
const smolLM2Env = "GRAFTRL_SMOLLM2"

// smolLM2Path is where scripts/install-smollm2.sh keeps the model; the test is skipped when it is
// not there (failed with GRAFTRL_SMOLLM2=1).
func smolLM2Path(t *testing.T) string {
	t.Helper()
	path, err := InstalledSmolLM2()
	if err != nil {
		if os.Getenv(smolLM2Env) == "1" {
			t.Fatalf("%s=1: %v", smolLM2Env, err)
		}
		t.Skip(err)
	}
	return path
}

// The installed SmolLM2-135M-Instruct: its metadata as its model card states it, its tensors by
// type, and rows of its tensors equal, bit for bit, to the Python gguf package's dequantize
// (testdata/smollm2_reference.json, written by scripts/interop/gguf_reference.py).
func TestSmolLM2(t *testing.T) {
	g, err := OpenGGUF(smolLM2Path(t))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if g.Version != 3 || g.Alignment != 32 {
		t.Errorf("version %d, alignment %d; want 3 and 32", g.Version, g.Alignment)
	}
	for key, want := range map[string]string{"general.architecture": "llama", "tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "smollm"} {
		if got, err := g.String(key); err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", key, got, err, want)
		}
	}
	for key, want := range map[string]uint32{
		"llama.block_count": 30, "llama.embedding_length": 576, "llama.feed_forward_length": 1536,
		"llama.attention.head_count": 9, "llama.attention.head_count_kv": 3, "llama.vocab_size": 49152,
		"llama.rope.dimension_count": 64, "tokenizer.ggml.bos_token_id": 1, "tokenizer.ggml.eos_token_id": 2,
	} {
		if got, err := g.Uint32(key); err != nil || got != want {
			t.Errorf("%s = %d, %v; want %d", key, got, err, want)
		}
	}
	for key, want := range map[string]float32{"llama.rope.freq_base": 100000, "llama.attention.layer_norm_rms_epsilon": 1e-5} {
		if got, err := g.Float32(key); err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", key, got, err, want)
		}
	}
	tokens, err := g.Strings("tokenizer.ggml.tokens")
	if err != nil || len(tokens) != 49152 {
		t.Errorf("tokens: %d, %v; want 49152", len(tokens), err)
	}
	if types, err := g.Int32s("tokenizer.ggml.token_type"); err != nil || len(types) != 49152 {
		t.Errorf("token types: %d, %v; want 49152", len(types), err)
	}
	if merges, err := g.Strings("tokenizer.ggml.merges"); err != nil || len(merges) != 48900 {
		t.Errorf("merges: %d, %v; want 48900", len(merges), err)
	}
	tmpl, err := g.String("tokenizer.chat_template")
	if err != nil || !strings.HasPrefix(tmpl, "{% for message in messages %}") ||
		!strings.Contains(tmpl, "'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>'") {
		t.Errorf("chat template is not ChatML's (%v): %q", err, tmpl)
	}

	byType := map[TensorType]int{}
	for _, ti := range g.Tensors {
		byType[ti.Type]++
	}
	if len(g.Tensors) != 272 || byType[Q4_1] != 210 || byType[F32] != 61 || byType[Q8_0] != 1 {
		t.Errorf("%d tensors by type %v; want 272: 210 Q4_1, 61 F32, 1 Q8_0", len(g.Tensors), byType)
	}
	if e, _ := g.TensorInfo("token_embd.weight"); e.Type != Q8_0 || len(e.Dims) != 2 || e.Dims[0] != 576 || e.Dims[1] != 49152 {
		t.Errorf("token_embd.weight: %+v; want Q8_0 [576 49152]", e)
	}

	checkReference(t, g)
}

func checkReference(t *testing.T, g *GGUF) {
	data, err := os.ReadFile(filepath.Join("testdata", "smollm2_reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Cols int
		Rows []struct {
			Tensor string
			Type   string
			Dims   []int64
			Row    int64
			Values []float64
		}
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	for _, r := range ref.Rows {
		info, _ := g.TensorInfo(r.Tensor)
		if info.Type.String() != r.Type || len(info.Dims) != len(r.Dims) {
			t.Errorf("%s: %s %v in the file, %s %v in the reference", r.Tensor, info.Type, info.Dims, r.Type, r.Dims)
			continue
		}
		got, err := g.TensorRows(r.Tensor, r.Row, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Values) != ref.Cols {
			t.Fatalf("%s row %d: %d reference values, want %d", r.Tensor, r.Row, len(r.Values), ref.Cols)
		}
		for j, want := range r.Values {
			// Exact: each reference value is a float32 written as the float64 equal to it.
			if math.Float32bits(got[j]) != math.Float32bits(float32(want)) {
				t.Errorf("%s (%s) row %d, column %d: %v, gguf's dequantize gives %v", r.Tensor, r.Type, r.Row, j, got[j], want)
				break
			}
		}
	}
}
