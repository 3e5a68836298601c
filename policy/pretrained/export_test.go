package pretrained

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/modelfile"
)

// tinyMeta is a source file's metadata: a stale architecture value that WriteGGUF must replace,
// tokenizer-like arrays, values of several other types, and general.alignment.
var tinyMeta = []modelfile.KV{
	{Key: "general.architecture", Value: "llama"},
	{Key: "general.name", Value: "tiny"},
	{Key: "general.alignment", Value: uint32(64)},
	{Key: "llama.block_count", Value: uint32(99)},
	{Key: "llama.context_length", Value: uint32(128)},
	{Key: "general.file_type", Value: uint32(3)},
	{Key: "tokenizer.ggml.tokens", Value: []string{"a", "b", "<|im_end|>"}},
	{Key: "tokenizer.ggml.token_type", Value: []int32{1, 1, 3}},
	{Key: "tokenizer.ggml.scores", Value: []float32{0.5, -1, 0}},
	{Key: "tokenizer.ggml.add_bos_token", Value: false},
	{Key: "tokenizer.ggml.bos_token_id", Value: uint32(1)},
	{Key: "x.i64", Value: int64(-5)},
	{Key: "x.f64", Value: 0.25},
	{Key: "x.u8s", Value: []uint8{1, 2, 3}},
}

// TestGGUFRoundTrip: a tiny model written as an F32 GGUF reads back bit for bit through FromGGUF,
// with the source's metadata kept in order and the architecture's written from the config; a
// copy of that file through GGUFMetadata is the same file.
func TestGGUFRoundTrip(t *testing.T) {
	c, w := tinyConfig(), tinyWeights(tinyConfig(), 3)
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := WriteGGUF(path, c, w, tinyMeta); err != nil {
		t.Fatal(err)
	}
	g, err := modelfile.OpenGGUF(path)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	gc, gw, err := FromGGUF(g)
	if err != nil {
		t.Fatal(err)
	}
	if gc != c {
		t.Errorf("config %+v, want %+v", gc, c)
	}
	checkSameWeights(t, gw, w)
	if g.Alignment != 64 || g.DataOffset%64 != 0 {
		t.Errorf("alignment %d, data at %d: want the source's 64", g.Alignment, g.DataOffset)
	}
	for _, ti := range g.Tensors {
		if ti.Type != modelfile.F32 || ti.Offset%64 != 0 {
			t.Errorf("tensor %s: %s at %d, want F32 aligned to 64", ti.Name, ti.Type, ti.Offset)
		}
	}
	want := map[string]any{
		"general.name": "tiny", "llama.block_count": uint32(2), "llama.context_length": uint32(128), "general.file_type": uint32(0),
		"tokenizer.ggml.tokens": []string{"a", "b", "<|im_end|>"}, "tokenizer.ggml.token_type": []int32{1, 1, 3},
		"tokenizer.ggml.scores": []float32{0.5, -1, 0}, "tokenizer.ggml.add_bos_token": false, "x.i64": int64(-5), "x.f64": 0.25,
		"x.u8s": []uint8{1, 2, 3}, "llama.attention.head_count_kv": uint32(2), "llama.rope.dimension_count": uint32(4),
		"llama.attention.layer_norm_rms_epsilon": float32(1e-5), "llama.vocab_size": uint32(10),
	}
	for k, v := range want {
		got, ok := g.Value(k)
		if !ok || !reflect.DeepEqual(got.Any(), v) {
			t.Errorf("%s = %#v, want %#v", k, got.Any(), v)
		}
	}
	keys := g.Keys()
	if keys[0] != "general.architecture" || keys[3] != "llama.block_count" || keys[13] != "x.u8s" || len(keys) != len(tinyMeta)+8 {
		t.Errorf("keys %v: want the source's order, the new architecture keys after them", keys)
	}
	// A GGUF copied through GGUFMetadata is the same file, byte for byte.
	again := filepath.Join(t.TempDir(), "again.gguf")
	if err := WriteGGUF(again, gc, gw, GGUFMetadata(g)); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(path)
	b, _ := os.ReadFile(again)
	if !reflect.DeepEqual(a, b) {
		t.Error("a GGUF written from its own metadata and weights differs from the original")
	}
	if ex := HFConfigExtras(g); !reflect.DeepEqual(ex, map[string]any{"max_position_embeddings": uint32(128), "bos_token_id": uint32(1)}) {
		t.Errorf("config extras %v", ex)
	}
}

// TestGGUFToHF: the tiny model's GGUF through a Hugging Face directory and back to a GGUF gives
// the same weights and config at each step.
func TestGGUFToHF(t *testing.T) {
	c, w := tinyConfig(), tinyWeights(tinyConfig(), 4)
	dir := t.TempDir()
	src := filepath.Join(dir, "src.gguf")
	if err := WriteGGUF(src, c, w, tinyMeta); err != nil {
		t.Fatal(err)
	}
	g, err := modelfile.OpenGGUF(src)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	gc, gw, err := FromGGUF(g)
	if err != nil {
		t.Fatal(err)
	}
	hf := filepath.Join(dir, "hf")
	if err := WriteHF(hf, gc, gw, HFConfigExtras(g), nil); err != nil {
		t.Fatal(err)
	}
	hc, hw, err := FromHF(hf)
	if err != nil {
		t.Fatal(err)
	}
	if hc != c {
		t.Errorf("config through HF %+v, want %+v", hc, c)
	}
	checkSameWeights(t, hw, w)
}

func TestWriteRefusesMismatch(t *testing.T) {
	c, w := tinyConfig(), tinyWeights(tinyConfig(), 5)
	w.Layers[1].Up = w.Layers[1].Up[1:]
	if err := WriteGGUF(filepath.Join(t.TempDir(), "x.gguf"), c, w, nil); err == nil {
		t.Error("a short tensor was written as GGUF")
	}
	if err := WriteHF(t.TempDir(), c, w, nil, nil); err == nil {
		t.Error("a short tensor was written as HF")
	}
	w = tinyWeights(c, 5)
	if err := WriteHF(t.TempDir(), c, w, map[string]any{"vocab_size": 3}, nil); err == nil {
		t.Error("an extra key replaced the architecture's")
	}
	if err := WriteHF(t.TempDir(), c, w, nil, map[string][]byte{"../x": nil}); err == nil {
		t.Error("an extra file outside the directory was accepted")
	}
	// A general.alignment the reader refuses is refused, and no file is left.
	dir := t.TempDir()
	bad := []modelfile.KV{{Key: "general.alignment", Value: uint32(48)}}
	if err := WriteGGUF(filepath.Join(dir, "x.gguf"), c, w, bad); err == nil || !strings.Contains(err.Error(), "general.alignment is 48") {
		t.Errorf("general.alignment 48: %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("a refused GGUF left %v", left)
	}
}

// smolLM2 opens the installed model; the test is skipped without it (failed with
// GRAFTRL_SMOLLM2=1, as CI installs it).
func smolLM2(t *testing.T) *modelfile.GGUF {
	t.Helper()
	path, err := modelfile.InstalledSmolLM2()
	if err != nil {
		if os.Getenv("GRAFTRL_SMOLLM2") == "1" {
			t.Fatalf("GRAFTRL_SMOLLM2=1: %v", err)
		}
		t.Skip(err)
	}
	g, err := modelfile.OpenGGUF(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// TestSmolLM2Convert: SmolLM2-135M-Instruct's weights through an F32 GGUF and through a Hugging
// Face directory read back bit for bit, and the F32 GGUF keeps every metadata entry of the
// original but general.file_type.
func TestSmolLM2Convert(t *testing.T) {
	g := smolLM2(t)
	c, w, err := FromGGUF(g)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f32 := filepath.Join(dir, "f32.gguf")
	if err := WriteGGUF(f32, c, w, GGUFMetadata(g)); err != nil {
		t.Fatal(err)
	}
	g2, err := modelfile.OpenGGUF(f32)
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	c2, w2, err := FromGGUF(g2)
	if err != nil {
		t.Fatal(err)
	}
	if c2 != c {
		t.Errorf("F32 GGUF config %+v, want %+v", c2, c)
	}
	checkSameWeights(t, w2, w)
	if !reflect.DeepEqual(g2.Keys(), g.Keys()) {
		t.Errorf("F32 GGUF keys %v, want %v", g2.Keys(), g.Keys())
	}
	for _, k := range g.Keys() {
		a, _ := g.Value(k)
		b, _ := g2.Value(k)
		if k != "general.file_type" && !reflect.DeepEqual(a.Any(), b.Any()) {
			t.Errorf("metadata %s changed", k)
		}
	}
	if len(g2.Tensors) != len(g.Tensors) {
		t.Errorf("%d tensors, want %d", len(g2.Tensors), len(g.Tensors))
	}
	hf := filepath.Join(dir, "hf")
	if err := WriteHF(hf, c, w, HFConfigExtras(g), nil); err != nil {
		t.Fatal(err)
	}
	c3, w3, err := FromHF(hf)
	if err != nil {
		t.Fatal(err)
	}
	if c3 != c {
		t.Errorf("HF config %+v, want %+v", c3, c)
	}
	checkSameWeights(t, w3, w)
}
