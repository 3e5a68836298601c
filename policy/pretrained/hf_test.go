package pretrained

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/modelfile"
)

// tinyConfig has a head width (4) other than DModel/Heads (2) and two query heads per KV head,
// so that head_dim and the two permutations' head counts are exercised.
func tinyConfig() Config {
	return Config{Layers: 2, DModel: 8, Hidden: 12, Heads: 4, KVHeads: 2, HeadDim: 4, Vocab: 10,
		RopeBase: 10000, NormEps: float64(float32(1e-5))}
}

// tinyWeights are seeded random weights of c, every value distinct.
func tinyWeights(c Config, seed uint64) Weights {
	r := rand.New(rand.NewPCG(seed, 1))
	v := func(n int) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = float32(r.NormFloat64())
		}
		return out
	}
	d, f, q, k := c.DModel, c.Hidden, c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	w := Weights{TokenEmbd: v(c.Vocab * d), OutputNorm: v(d)}
	for range c.Layers {
		w.Layers = append(w.Layers, LayerWeights{AttnNorm: v(d), Q: v(q * d), K: v(k * d), V: v(k * d), O: v(d * q),
			FFNNorm: v(d), Gate: v(f * d), Up: v(f * d), Down: v(d * f)})
	}
	return w
}

// sameBits reports whether a and b are equal float32 for float32, bit for bit.
func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	return firstDifference(a, b) < 0
}

// checkSameWeights fails the test at the first tensor of got that is not want's bit for bit.
func checkSameWeights(t *testing.T, got, want Weights) {
	t.Helper()
	if !sameBits(got.TokenEmbd, want.TokenEmbd) || !sameBits(got.OutputNorm, want.OutputNorm) || len(got.Layers) != len(want.Layers) {
		t.Fatalf("embedding, output norm or layer count differ")
	}
	for l := range want.Layers {
		g, w := reflect.ValueOf(got.Layers[l]), reflect.ValueOf(want.Layers[l])
		for i := range g.NumField() {
			if !sameBits(g.Field(i).Interface().([]float32), w.Field(i).Interface().([]float32)) {
				t.Fatalf("layer %d: %s differs", l, g.Type().Field(i).Name)
			}
		}
	}
}

// TestRoPEPermutation: two heads of width 4 in transformers' order, rows numbered 0..7. In a
// head transformers pairs rows (0, 2) and (1, 3) (i and i+hd/2); llama.cpp's permute puts each
// pair on adjacent rows: 0, 2, 1, 3. Worked out by hand for one and two columns.
func TestRoPEPermutation(t *testing.T) {
	hf := []float32{0, 1, 2, 3, 4, 5, 6, 7}
	want := []float32{0, 2, 1, 3, 4, 6, 5, 7}
	if got := ropeToGGUF(hf, 2, 4); !reflect.DeepEqual(got, want) {
		t.Errorf("to GGUF: %v, want %v", got, want)
	}
	if got := ropeToHF(want, 2, 4); !reflect.DeepEqual(got, hf) {
		t.Errorf("to HF: %v, want %v", got, hf)
	}
	// Two columns: whole rows move.
	hf2 := []float32{0, 10, 1, 11, 2, 12, 3, 13, 4, 14, 5, 15, 6, 16, 7, 17}
	want2 := []float32{0, 10, 2, 12, 1, 11, 3, 13, 4, 14, 6, 16, 5, 15, 7, 17}
	if got := ropeToGGUF(hf2, 2, 4); !reflect.DeepEqual(got, want2) {
		t.Errorf("two columns to GGUF: %v, want %v", got, want2)
	}
	// Width 6: pairs (0,3) (1,4) (2,5) become rows 0..5 as 0, 3, 1, 4, 2, 5.
	if got := ropeToGGUF([]float32{0, 1, 2, 3, 4, 5}, 1, 6); !reflect.DeepEqual(got, []float32{0, 3, 1, 4, 2, 5}) {
		t.Errorf("width 6: %v", got)
	}
}

// TestRoPEPermutationAttention derives the permutation's meaning: transformers' rotate_half RoPE
// on q = Wx and k = W'x gives the same attention score as llama.cpp's adjacent-pair RoPE on the
// permuted matrices, at every pair of positions.
func TestRoPEPermutationAttention(t *testing.T) {
	const hd, cols, base = 8, 5, 10000.0
	r := rand.New(rand.NewPCG(3, 4))
	randv := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = r.NormFloat64()
		}
		return v
	}
	wq, wk, x, y := randv(hd*cols), randv(hd*cols), randv(cols), randv(cols)
	f32 := func(v []float64) []float32 {
		out := make([]float32, len(v))
		for i := range v {
			out[i] = float32(v[i])
		}
		return out
	}
	f64 := func(v []float32) []float64 {
		out := make([]float64, len(v))
		for i := range v {
			out[i] = float64(v[i])
		}
		return out
	}
	mul := func(w, x []float64) []float64 {
		out := make([]float64, hd)
		for i := range out {
			for j := range cols {
				out[i] += w[i*cols+j] * x[j]
			}
		}
		return out
	}
	// rotateHalf is modeling_llama.py's apply_rotary_pos_emb on one head: pairs (i, i+hd/2).
	rotateHalf := func(v []float64, pos int) []float64 {
		out := make([]float64, hd)
		for i := range hd / 2 {
			a := float64(pos) * math.Pow(base, -float64(2*i)/hd)
			out[i] = v[i]*math.Cos(a) - v[i+hd/2]*math.Sin(a)
			out[i+hd/2] = v[i+hd/2]*math.Cos(a) + v[i]*math.Sin(a)
		}
		return out
	}
	// adjacent is llama.cpp's RoPE (rope_f32, normal mode): pairs (2i, 2i+1).
	adjacent := func(v []float64, pos int) []float64 {
		out := make([]float64, hd)
		for i := range hd / 2 {
			a := float64(pos) * math.Pow(base, -float64(2*i)/hd)
			out[2*i] = v[2*i]*math.Cos(a) - v[2*i+1]*math.Sin(a)
			out[2*i+1] = v[2*i+1]*math.Cos(a) + v[2*i]*math.Sin(a)
		}
		return out
	}
	dot := func(a, b []float64) float64 {
		s := 0.0
		for i := range a {
			s += a[i] * b[i]
		}
		return s
	}
	gq, gk := f64(ropeToGGUF(f32(wq), 1, hd)), f64(ropeToGGUF(f32(wk), 1, hd))
	wq, wk = f64(f32(wq)), f64(f32(wk))
	for _, pos := range [][2]int{{0, 0}, {3, 1}, {7, 7}, {100, 2}} {
		hf := dot(rotateHalf(mul(wq, x), pos[0]), rotateHalf(mul(wk, y), pos[1]))
		gg := dot(adjacent(mul(gq, x), pos[0]), adjacent(mul(gk, y), pos[1]))
		if math.Abs(hf-gg) > 1e-9*max(1, math.Abs(hf)) {
			t.Errorf("positions %v: score %v in transformers' layout, %v in GGUF's", pos, hf, gg)
		}
	}
}

// TestHFRoundTrip: a tiny model written as a Hugging Face directory reads back bit for bit, its
// config.json says what transformers needs, and its q rows are in transformers' order.
func TestHFRoundTrip(t *testing.T) {
	c, w := tinyConfig(), tinyWeights(tinyConfig(), 1)
	dir := filepath.Join(t.TempDir(), "hf")
	files := map[string][]byte{"tokenizer.json": []byte(`{"x":1}`)}
	if err := WriteHF(dir, c, w, map[string]any{"max_position_embeddings": 64}, files); err != nil {
		t.Fatal(err)
	}
	gc, gw, err := FromHF(dir)
	if err != nil {
		t.Fatal(err)
	}
	if gc != c {
		t.Errorf("config %+v, want %+v", gc, c)
	}
	checkSameWeights(t, gw, w)
	if b, _ := os.ReadFile(filepath.Join(dir, "tokenizer.json")); string(b) != `{"x":1}` {
		t.Errorf("tokenizer.json is %q", b)
	}
	var cfg map[string]any
	b, _ := os.ReadFile(filepath.Join(dir, HFConfigFile))
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"model_type": "llama", "head_dim": 4.0, "num_key_value_heads": 2.0, "tie_word_embeddings": true,
		"max_position_embeddings": 64.0, "rope_scaling": nil, "architectures": []any{"LlamaForCausalLM"}} {
		if !reflect.DeepEqual(cfg[k], want) {
			t.Errorf("config.json %s = %v, want %v", k, cfg[k], want)
		}
	}
	st, err := modelfile.OpenSafetensors(filepath.Join(dir, modelfile.SafetensorsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.Metadata["format"] != "pt" {
		t.Errorf("metadata %v: transformers wants format pt", st.Metadata)
	}
	if _, ok := st.TensorInfo(hfLMHead); ok {
		t.Error("lm_head.weight written for a tied model")
	}
	// Head 1's transformers row s·hd/2+i is Weights' row 2i+s: row 4+2+1 (s 1, i 1) is row 4+3.
	q, _ := st.Tensor("model.layers.1.self_attn.q_proj.weight")
	d := c.DModel
	if !sameBits(q[7*d:8*d], w.Layers[1].Q[7*d:8*d]) || !sameBits(q[6*d:7*d], w.Layers[1].Q[5*d:6*d]) || !sameBits(q[5*d:6*d], w.Layers[1].Q[6*d:7*d]) {
		t.Error("q_proj's rows are not in transformers' order")
	}
}

// writeTinyHF writes the tiny model and then edits its config.json through edit.
func writeTinyHF(t *testing.T, edit func(map[string]any)) string {
	t.Helper()
	dir := t.TempDir()
	if err := WriteHF(dir, tinyConfig(), tinyWeights(tinyConfig(), 2), nil, nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, HFConfigFile)
	b, _ := os.ReadFile(path)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, _ = json.Marshal(m)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestHFConfigRefused: every key graftrl's Llama cannot honour is refused, naming it.
func TestHFConfigRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(map[string]any)
		want string
	}{
		{"mistral", func(m map[string]any) { m["model_type"] = "mistral" }, `model_type is "mistral"; only "llama" is read`},
		{"no model_type", func(m map[string]any) { delete(m, "model_type") }, "model_type is missing"},
		{"architecture", func(m map[string]any) { m["architectures"] = []string{"LlamaForSequenceClassification"} }, `architectures is ["LlamaForSequenceClassification"]; only ["LlamaForCausalLM"] is read`},
		{"rope scaling", func(m map[string]any) { m["rope_scaling"] = map[string]any{"type": "linear", "factor": 2} }, `rope_scaling is {"factor":2,"type":"linear"}; only null`},
		{"rope parameters", func(m map[string]any) { m["rope_parameters"] = map[string]any{"rope_type": "yarn"} }, `rope_parameters is {"rope_type":"yarn"}; only rope_type "default"`},
		{"gelu", func(m map[string]any) { m["hidden_act"] = "gelu" }, `hidden_act is "gelu"; only "silu"`},
		{"bias", func(m map[string]any) { m["attention_bias"] = true }, "attention_bias is true; only false"},
		{"no hidden size", func(m map[string]any) { delete(m, "hidden_size") }, "hidden_size is missing; it is required"},
		{"fraction", func(m map[string]any) { m["num_hidden_layers"] = 2.5 }, "num_hidden_layers is 2.5, not a whole number"},
		{"odd head", func(m map[string]any) { m["head_dim"] = 3 }, "head dim 3 must be even"},
		{"heads", func(m map[string]any) { m["num_key_value_heads"] = 3 }, "heads 4 must be a positive multiple of the KV heads 3"},
		{"untied, no head", func(m map[string]any) { m["tie_word_embeddings"] = false }, "tie_word_embeddings false (or absent: LlamaConfig's default) but no tensor lm_head.weight"},
		{"tie absent", func(m map[string]any) { delete(m, "tie_word_embeddings") }, "no tensor lm_head.weight"},
		{"shape", func(m map[string]any) { m["intermediate_size"] = 16 }, "tensor model.layers.0.mlp.gate_proj.weight in model.safetensors has shape [12 8], want [16 8] from config.json"},
		{"layers", func(m map[string]any) { m["num_hidden_layers"] = 3 }, "missing tensor model.layers.2.input_layernorm.weight"},
	} {
		dir := writeTinyHF(t, c.edit)
		_, _, err := FromHF(dir)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if _, _, err := FromHF(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no config.json: not a Hugging Face model directory") {
		t.Errorf("empty dir: %v", err)
	}
	// transformers 5's rope_parameters carry the base.
	dir := writeTinyHF(t, func(m map[string]any) {
		delete(m, "rope_theta")
		m["rope_parameters"] = map[string]any{"rope_type": "default", "rope_theta": 500000}
	})
	if c, _, err := FromHF(dir); err != nil || c.RopeBase != 500000 {
		t.Errorf("rope_parameters: base %v (%v), want 500000", c.RopeBase, err)
	}
}

// writeHFTensors writes dir/model.safetensors with the tiny model's tensors, changed by edit.
func writeHFTensors(t *testing.T, dir string, edit func([]modelfile.SafetensorsTensor) []modelfile.SafetensorsTensor) {
	t.Helper()
	ts := edit(hfExport(tinyConfig(), tinyWeights(tinyConfig(), 2)))
	var b bytes.Buffer
	if err := modelfile.WriteSafetensors(&b, ts, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, modelfile.SafetensorsFile), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHFUntiedHead: tie_word_embeddings false is read when lm_head.weight equals the embedding
// bit for bit, and refused, naming the first difference, when it does not.
func TestHFUntiedHead(t *testing.T) {
	dir := writeTinyHF(t, func(m map[string]any) { m["tie_word_embeddings"] = false })
	emb := tinyWeights(tinyConfig(), 2).TokenEmbd
	head := func(v []float32) func([]modelfile.SafetensorsTensor) []modelfile.SafetensorsTensor {
		return func(ts []modelfile.SafetensorsTensor) []modelfile.SafetensorsTensor {
			return append(ts, modelfile.SafetensorsTensor{Name: hfLMHead, Shape: []int64{10, 8}, Data: v})
		}
	}
	writeHFTensors(t, dir, head(emb))
	if _, w, err := FromHF(dir); err != nil || !sameBits(w.TokenEmbd, emb) {
		t.Errorf("equal head: %v", err)
	}
	other := append([]float32(nil), emb...)
	other[5] = 42
	writeHFTensors(t, dir, head(other))
	if _, _, err := FromHF(dir); err == nil || !strings.Contains(err.Error(), "lm_head.weight differs from model.embed_tokens.weight (element 5: 42,") {
		t.Errorf("different head: %v", err)
	}
}

// TestHFTensorsRefused: a bias, a missing tensor and a dtype that is not read are refused
// before any tensor is read, naming the tensor.
func TestHFTensorsRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func([]modelfile.SafetensorsTensor) []modelfile.SafetensorsTensor
		want string
	}{
		{"bias", func(ts []modelfile.SafetensorsTensor) []modelfile.SafetensorsTensor {
			return append(ts, modelfile.SafetensorsTensor{Name: "model.layers.0.self_attn.q_proj.bias", Shape: []int64{16}, Data: make([]float32, 16)})
		}, "tensor model.layers.0.self_attn.q_proj.bias: graftrl's Llama has no biases"},
		{"missing", func(ts []modelfile.SafetensorsTensor) []modelfile.SafetensorsTensor { return ts[:len(ts)-1] }, "missing tensor model.norm.weight"},
	} {
		dir := writeTinyHF(t, func(map[string]any) {})
		writeHFTensors(t, dir, c.edit)
		if _, _, err := FromHF(dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// An I32 norm, written by hand: 8 int32 values.
	dir := writeTinyHF(t, func(map[string]any) {})
	var b bytes.Buffer
	if err := modelfile.WriteSafetensors(&b, hfExport(tinyConfig(), tinyWeights(tinyConfig(), 2)), nil); err != nil {
		t.Fatal(err)
	}
	raw := bytes.Replace(b.Bytes(), []byte(`"model.norm.weight":{"dtype":"F32"`), []byte(`"model.norm.weight":{"dtype":"I32"`), 1)
	if err := os.WriteFile(filepath.Join(dir, modelfile.SafetensorsFile), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := FromHF(dir); err == nil || !strings.Contains(err.Error(), "tensor model.norm.weight in model.safetensors is I32; only F32, F16, BF16 are read") {
		t.Errorf("I32: %v", err)
	}
}
