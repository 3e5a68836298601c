package host

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/graftrl/graftrl/policy/pretrained"
	"github.com/graftrl/graftrl/tokens/bpe"
)

// llamaReference is testdata/smollm2_logits.json, written by scripts/interop/llama_reference.py.
type llamaReference struct {
	Stride       int
	GreedyPrompt int `json:"greedy_prompt"`
	Greedy       []int32
	Prompts      []struct {
		Messages []struct{ Role, Content string }
		IDs      []int32
		TopIDs   []int32   `json:"top_ids"`
		TopLog   []float64 `json:"top_logits"`
		Strided  []float64 `json:"strided_logits"`
	}
}

// maxAbsDiff returns max_i |a[i] − b[i]| over the shorter length.
func maxAbsDiff(a, b []float32) float64 {
	var m float64
	for i := range min(len(a), len(b)) {
		m = max(m, math.Abs(float64(a[i])-float64(b[i])))
	}
	return m
}

// The installed SmolLM2-135M-Instruct against the numpy forward pass of
// scripts/interop/llama_reference.py: the prompts' ids are tokens/bpe's, the last position's
// logits agree within 1e-3 (the largest 20 and every stride-th), the KV-cache decoder agrees
// with the full forward pass within 1e-5, and greedy decoding picks the reference's 32 tokens.
func TestSmolLM2Llama(t *testing.T) {
	m, tok := loadSmolLM2(t)
	data, err := os.ReadFile(filepath.Join("testdata", "smollm2_logits.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref llamaReference
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	ct, err := tok.ChatTemplate()
	if err != nil {
		t.Fatal(err)
	}
	if len(ref.Prompts) == 0 || ref.Stride < 1 {
		t.Fatalf("reference has %d prompts, stride %d", len(ref.Prompts), ref.Stride)
	}
	var worst float64
	for i, p := range ref.Prompts {
		var msgs []bpe.Message
		for _, mm := range p.Messages {
			msgs = append(msgs, bpe.Message{Role: mm.Role, Content: mm.Content})
		}
		if ids := tok.Encode(nil, ct.Render(msgs, true)); !slices.Equal(ids, p.IDs) {
			t.Errorf("prompt %d: tokens/bpe gives %v, the reference used %v", i, ids, p.IDs)
		}
		rows, err := m.Forward(p.IDs)
		if err != nil {
			t.Fatal(err)
		}
		last := rows[len(rows)-1]
		for j, id := range p.TopIDs {
			worst = max(worst, math.Abs(float64(last[id])-p.TopLog[j]))
		}
		for j, want := range p.Strided {
			worst = max(worst, math.Abs(float64(last[j*ref.Stride])-want))
		}
		if best := slices.Index(last, slices.Max(last)); int32(best) != p.TopIDs[0] {
			t.Errorf("prompt %d: most likely next token %d, the reference's %d", i, best, p.TopIDs[0])
		}

		// The cache: prefill half the prompt, then step through the rest.
		half := len(p.IDs) / 2
		d := m.NewDecoder()
		got, err := d.Prefill(p.IDs[:half])
		for j := half; err == nil; j++ {
			if diff := maxAbsDiff(got, rows[j-1]); diff > 1e-5 {
				t.Errorf("prompt %d, position %d: cached decoder's logits %.3g from the full pass", i, j-1, diff)
			}
			if j == len(p.IDs) {
				break
			}
			got, err = d.Step(p.IDs[j])
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("max |Δlogit| against numpy: %.3g", worst)
	if worst > 1e-3 {
		t.Errorf("max |Δlogit| %.3g against the numpy reference; want ≤ 1e-3", worst)
	}
	got, err := m.Greedy(ref.Prompts[ref.GreedyPrompt].IDs, len(ref.Greedy), -1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, ref.Greedy) {
		t.Errorf("greedy continuation %v (%q), the reference's %v (%q)", got, tok.Decode(got), ref.Greedy, tok.Decode(ref.Greedy))
	}
}

// tinyLlama is a random two-layer decoder with two query heads per KV head, and its weights.
func tinyLlama(t *testing.T) (*Llama, pretrained.Weights) {
	c := pretrained.Config{Layers: 2, DModel: 16, Hidden: 24, Heads: 4, KVHeads: 2, HeadDim: 4, Vocab: 30, RopeBase: 10000, NormEps: 1e-5}
	rng := rand.New(rand.NewPCG(3, 4))
	r := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * 0.3)
		}
		return v
	}
	w := pretrained.Weights{TokenEmbd: r(c.Vocab * c.DModel), OutputNorm: r(c.DModel)}
	for range c.Layers {
		w.Layers = append(w.Layers, pretrained.LayerWeights{
			AttnNorm: r(16), Q: r(16 * 16), K: r(8 * 16), V: r(8 * 16), O: r(16 * 16),
			FFNNorm: r(16), Gate: r(24 * 16), Up: r(24 * 16), Down: r(16 * 24),
		})
	}
	m, err := NewLlama(c, w)
	if err != nil {
		t.Fatal(err)
	}
	return m, w
}

// firstPosition computes by hand, in float64, the logits after a single token: at position 0
// RoPE is the identity and attention returns the token's own value vector, so each block is
// x += O·(V·n(x) for each query head's KV head) and x += Down(silu(Gate·n(x))·Up·n(x)).
func firstPosition(c pretrained.Config, w pretrained.Weights, token int) []float64 {
	mv := func(m []float32, x []float64) []float64 { // m is [len(m)/len(x), len(x)]
		y := make([]float64, len(m)/len(x))
		for i := range y {
			for j, xj := range x {
				y[i] += float64(m[i*len(x)+j]) * xj
			}
		}
		return y
	}
	norm := func(x []float64, g []float32) []float64 {
		var sq float64
		for _, v := range x {
			sq += v * v
		}
		y := make([]float64, len(x))
		for i, v := range x {
			y[i] = float64(g[i]) * v / math.Sqrt(sq/float64(len(x))+c.NormEps)
		}
		return y
	}
	x := make([]float64, c.DModel)
	for i := range x {
		x[i] = float64(w.TokenEmbd[token*c.DModel+i])
	}
	for _, L := range w.Layers {
		v := mv(L.V, norm(x, L.AttnNorm))
		var att []float64
		for h := range c.Heads {
			kv := h / (c.Heads / c.KVHeads)
			att = append(att, v[kv*c.HeadDim:(kv+1)*c.HeadDim]...)
		}
		for i, o := range mv(L.O, att) {
			x[i] += o
		}
		n := norm(x, L.FFNNorm)
		g, u := mv(L.Gate, n), mv(L.Up, n)
		for i := range g {
			g[i] = g[i] / (1 + math.Exp(-g[i])) * u[i]
		}
		for i, o := range mv(L.Down, g) {
			x[i] += o
		}
	}
	return mv(w.TokenEmbd, norm(x, w.OutputNorm))
}

// Without the model: the cached decoder reproduces every row of the full forward pass, and the
// first position, which attends only to itself, equals a hand-written single-token pass.
func TestLlamaCacheMatchesForward(t *testing.T) {
	m, w := tinyLlama(t)
	tokens := []int32{3, 17, 0, 29, 5, 5, 12, 8}
	rows, err := m.Forward(tokens)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range firstPosition(m.Config(), w, int(tokens[0])) {
		if math.Abs(float64(rows[0][i])-want) > 1e-5 {
			t.Errorf("first position, logit %d: %v, by hand %v", i, rows[0][i], want)
		}
	}
	d := m.NewDecoder()
	got, err := d.Prefill(tokens[:3])
	if err != nil {
		t.Fatal(err)
	}
	for j := 3; ; j++ {
		if diff := maxAbsDiff(got, rows[j-1]); diff > 1e-5 || len(got) != 30 {
			t.Errorf("position %d: %d cached logits, %.3g from the full pass", j-1, len(got), diff)
		}
		if j == len(tokens) {
			break
		}
		if got, err = d.Step(tokens[j]); err != nil {
			t.Fatal(err)
		}
	}
	if d.Len() != len(tokens) {
		t.Errorf("cache holds %d positions, want %d", d.Len(), len(tokens))
	}
	if _, err := d.Step(30); err == nil {
		t.Error("token 30 of a 30-token vocabulary was accepted")
	}
}

// BenchmarkLlamaSmolLM2 times SmolLM2-135M-Instruct on the host: the prefill of a 100-token
// prompt (prefill-100, tokens/s counts its 100 tokens) and one decode step at batch 1 after a
// 100-token prompt (decode, each op one new token; the cache is reset every 32 steps so that
// the attention length stays near 100–132). Skipped without the model.
func BenchmarkLlamaSmolLM2(b *testing.B) {
	m, _ := loadSmolLM2(b)
	prompt := make([]int32, 100)
	for i := range prompt {
		prompt[i] = int32(1000 + 37*i)
	}
	b.Run("prefill-100", func(b *testing.B) {
		for range b.N {
			if _, err := m.NewDecoder().Prefill(prompt); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(prompt)*b.N)/b.Elapsed().Seconds(), "tokens/s")
	})
	b.Run("decode", func(b *testing.B) {
		var d *LlamaDecoder
		for i := range b.N {
			if i%32 == 0 {
				b.StopTimer()
				d = m.NewDecoder()
				if _, err := d.Prefill(prompt); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			if _, err := d.Step(int32(500 + i%32)); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
	})
}
