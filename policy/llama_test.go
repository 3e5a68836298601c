package policy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/graftrl/graftrl/internal/gradcheck"
	"github.com/graftrl/graftrl/modelfile"
	"github.com/graftrl/graftrl/policy/host"
	"github.com/graftrl/graftrl/policy/pretrained"
	"github.com/graftrl/graftrl/policy/spec"
	"github.com/graftrl/graftrl/tokens/bpe"
)

// tinyLlamaConfig is a random two-layer decoder with two query heads per KV head.
func tinyLlamaConfig() pretrained.Config {
	return pretrained.Config{Layers: 2, DModel: 16, Hidden: 24, Heads: 4, KVHeads: 2, HeadDim: 4, Vocab: 30,
		RopeBase: 10000, NormEps: 1e-5}
}

// tinyLlamaWeights draws c's weights from N(0, 0.3²) (norm gains around 1), large enough that
// attention is far from uniform.
func tinyLlamaWeights(c pretrained.Config, seed uint64) pretrained.Weights {
	rng := rand.New(rand.NewPCG(seed, 4))
	var w [][]float32
	for _, s := range spec.LlamaParams(c) {
		v := make([]float32, s.Size())
		for i := range v {
			v[i] = float32(rng.NormFloat64() * 0.3)
			if s.Init == spec.InitOnes {
				v[i]++
			}
		}
		w = append(w, v)
	}
	out, err := spec.LlamaWeights(c, w)
	if err != nil {
		panic(err)
	}
	return out
}

// llamaOptions are the options of a pretrained policy of c with weights w and at most maxLen tokens.
func llamaOptions(c pretrained.Config, w pretrained.Weights, maxLen int, l LossConfig) Options {
	return Options{Model: Config{MaxLen: maxLen}, Loss: l, Optim: spec.DefaultOptimConfig(),
		Pretrained: &Pretrained{Config: c, Weights: w}}
}

// newTinyLlama builds the tiny Llama as a policy on the go backend and as policy/host's decoder.
func newTinyLlama(t testing.TB, l LossConfig) (*Policy, *host.Llama) {
	t.Helper()
	c := tinyLlamaConfig()
	w := tinyLlamaWeights(c, 3)
	p, err := New(backendT(t), llamaOptions(c, w, 16, l))
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.NewLlama(c, w)
	if err != nil {
		t.Fatal(err)
	}
	return p, h
}

// hostLogits runs policy/host's Llama on each row of tokens [rows, length] and returns the
// logits [rows·length·vocab] of the first n[r] positions of row r (0 elsewhere).
func hostLogits(t testing.TB, h *host.Llama, tokens []int32, rows, length int, n []int) []float32 {
	t.Helper()
	v := h.Config().Vocab
	out := make([]float32, rows*length*v)
	for r := range rows {
		lg, err := h.Forward(tokens[r*length : r*length+n[r]])
		if err != nil {
			t.Fatal(err)
		}
		for i, row := range lg {
			copy(out[(r*length+i)*v:], row)
		}
	}
	return out
}

// maxDiffAt is max |a−b| over the first n[r] positions of each row of [rows, length, vocab] arrays.
func maxDiffAt(a, b []float32, length, vocab int, n []int) float64 {
	var d float64
	for r, nr := range n {
		for i := r * length * vocab; i < (r*length+nr)*vocab; i++ {
			d = math.Max(d, math.Abs(float64(a[i])-float64(b[i])))
		}
	}
	return d
}

// full is n copies of length (every position of every row is real).
func full(rows, length int) []int {
	n := make([]int, rows)
	for i := range n {
		n[i] = length
	}
	return n
}

// The tiny Llama on GoMLX computes policy/host's function: Logits (the full forward pass), the
// log-probs of LogProbs and RefLogProbs, those Update reports (the last block at the selected
// positions only) and the KV-cache decoder all agree with host.Llama's float32 forward pass
// within 1e-5.
func TestLlamaMatchesHost(t *testing.T) {
	c := tinyLlamaConfig()
	l := spec.DefaultLossConfig()
	l.KL = spec.KLk3
	p, h := newTinyLlama(t, l)
	const rows, length = 3, 11
	tb := SyntheticBatch(p.Config(), rows, length, 5)
	want := hostLogits(t, h, tb.Tokens, rows, length, full(rows, length))
	got, err := p.Logits(rows, length, tb.Tokens)
	if err != nil {
		t.Fatal(err)
	}
	d := maxDiffAt(got, want, length, c.Vocab, full(rows, length))
	t.Logf("Logits: max |GoMLX − host| = %.3g", d)
	if d > 1e-5 {
		t.Errorf("Logits: max |GoMLX − host| = %.3g, want ≤ 1e-5", d)
	}
	wantLogp := make([]float32, rows*length)
	for i, target := range tb.Targets {
		row := want[i*c.Vocab : (i+1)*c.Vocab]
		var z float64
		for _, v := range row {
			z += math.Exp(float64(v))
		}
		wantLogp[i] = float32(float64(row[target]) - math.Log(z))
	}
	lp, _, err := p.LogProbs(tb)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := maxDiff(lp, wantLogp, nil); d > 1e-5 {
		t.Errorf("LogProbs: max |GoMLX − host| = %.3g, want ≤ 1e-5", d)
	}
	ref, err := p.RefLogProbs(tb)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ref, lp) {
		t.Error("RefLogProbs differ from LogProbs before any update")
	}
	tb.RefLogp = ref
	st, err := p.Update(tb, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d, n := maxDiff(st.LogProbs, wantLogp, tb.Weight); d > 1e-5 || n == 0 {
		t.Errorf("Update's log-probs at %d selected positions: max |GoMLX − host| = %.3g, want ≤ 1e-5", n, d)
	}
	checkDecoder(t, p, tb.Tokens, rows, length, want)
}

// maxDiff is max |a−b| over the positions with weight > 0 (all when weight is nil), and their count.
func maxDiff(a, b, weight []float32) (float64, int) {
	var d float64
	n := 0
	for i := range b {
		if weight == nil || weight[i] > 0 {
			d, n = math.Max(d, math.Abs(float64(a[i])-float64(b[i]))), n+1
		}
	}
	return d, n
}

// checkDecoder feeds the rows token by token through the policy's decoder, row r starting r
// steps late, and compares each step's logits with want.
func checkDecoder(t *testing.T, p *Policy, tokens []int32, rows, length int, want []float32) {
	t.Helper()
	v := p.Config().Vocab
	d := p.NewDecoder(rows)
	var worst float64
	for step := range length + rows {
		tok, pos := make([]int32, rows), make([]int32, rows)
		for r := range rows {
			pos[r] = int32(length) // a scratch slot no active row reads
			if q := step - r; q >= 0 && q < length {
				tok[r], pos[r] = tokens[r*length+q], int32(q)
			}
		}
		lg, err := d.Step(tok, pos)
		if err != nil {
			t.Fatal(err)
		}
		for r := range rows {
			if int(pos[r]) < length {
				w := want[(r*length+int(pos[r]))*v:][:v]
				worst = math.Max(worst, maxDiffAt(lg[r*v:(r+1)*v], w, 0, v, []int{1}))
			}
		}
	}
	if worst > 1e-5 {
		t.Errorf("decoder: max |GoMLX − host| = %.3g, want ≤ 1e-5", worst)
	}
}

// The gradient of the Llama graph (RMSNorm, RoPE, grouped-query attention, SwiGLU, the tied
// embedding, the selected last block) agrees with central finite differences at every entry of
// every parameter, in float64.
func TestLlamaGradientFiniteDifferences(t *testing.T) {
	c := pretrained.Config{Layers: 2, DModel: 8, Hidden: 12, Heads: 4, KVHeads: 2, HeadDim: 2, Vocab: 7,
		RopeBase: 10, NormEps: 1e-5}
	a := newLlamaArch(c)
	b := backendT(t)
	rng := rand.New(rand.NewPCG(9, 10))
	var theta [][]float64
	for _, s := range a.specs {
		v := gradcheck.Normals(rng, s.Size())
		for i := range v {
			v[i] *= 0.5
			if s.Init == spec.InitOnes {
				v[i]++
			}
		}
		theta = append(theta, v)
	}
	const rows, length = 2, 5
	tb := SyntheticBatch(Config{Vocab: c.Vocab}, rows, length, 3)
	sel := selectPositions(tb, 2)
	bias := tensors.MustCopyFlatData[float32](sel.attentionBias(1))
	bias64 := make([]float64, len(bias))
	for i, v := range bias {
		bias64[i] = float64(v)
	}
	np := len(a.specs)
	lossOf := func(in []*graph.Node) *graph.Node {
		tokens := in[np]
		at := &queries{idx: in[np+1], bias: in[np+2]}
		return graph.Add(gradcheck.Weighted(a.forwardAt(in[:np], tokens, nil)), gradcheck.Weighted(a.forwardAt(in[:np], tokens, at)))
	}
	gradExec := graph.MustNewExec(b, func(in []*graph.Node) []*graph.Node {
		loss := lossOf(in)
		return append([]*graph.Node{loss}, graph.Gradient(loss, in[:np]...)...)
	})
	lossExec := graph.MustNewExec(b, func(in []*graph.Node) *graph.Node { return lossOf(in) })
	args := func() []any {
		out := make([]any, 0, np+3)
		for i, s := range a.specs {
			out = append(out, tensors.FromFlatDataAndDimensions(theta[i], s.Shape...))
		}
		return append(out, tensors.FromFlatDataAndDimensions(tb.Tokens, rows, length), sel.index(),
			tensors.FromFlatDataAndDimensions(bias64, rows, 1, sel.q, length))
	}
	grads := gradExec.MustExec(args()...)
	for i, s := range a.specs {
		if grads[1+i].DType() != dtypes.Float64 {
			t.Fatalf("%s: gradient of dtype %s", s.Name, grads[1+i].DType())
		}
		g := tensors.MustCopyFlatData[float64](grads[1+i])
		gradcheck.Compare(t, s.Name, theta[i], g, func([]float64) float64 {
			return tensors.ToScalar[float64](lossExec.MustExec(args()...)[0])
		})
	}
}

// A pretrained policy's options are checked: the architecture fields of Model must be unset, the
// vocabulary must be the model's, and the weights must fit its shapes.
func TestLlamaOptionsRefused(t *testing.T) {
	c := tinyLlamaConfig()
	w := tinyLlamaWeights(c, 1)
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"d_model", func(o *Options) { o.Model.DModel = 16 }, "d_model 16"},
		{"vocab", func(o *Options) { o.Model.Vocab = 31 }, "vocabulary of 31 tokens"},
		{"max_len", func(o *Options) { o.Model.MaxLen = 4 }, "policy.max_len: 4"},
		{"layers", func(o *Options) { o.Pretrained.Weights.Layers = o.Pretrained.Weights.Layers[:1] }, "weight arrays"},
		{"shape", func(o *Options) { o.Pretrained.Weights.OutputNorm = make([]float32, 3) }, "weight output_norm has 3 values"},
		{"init", func(o *Options) { o.Init = [][]float32{{1}} }, "1 weight arrays"},
	} {
		o := llamaOptions(c, w, 16, spec.DefaultLossConfig())
		pc := *o.Pretrained
		o.Pretrained = &pc
		tc.edit(&o)
		if _, err := New(backendT(t), o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	o := llamaOptions(c, w, 16, spec.DefaultLossConfig())
	o.Model.Vocab = c.Vocab
	if _, err := New(backendT(t), o); err != nil {
		t.Errorf("the model's own vocabulary is refused: %v", err)
	}
}

// A pretrained policy's checkpoint restores it exactly under its GGUF names, its weights read
// back start another policy (Init), and spec.LlamaWeights turns Weights into the host decoder's
// weights (the sampler's refresh after an update).
func TestLlamaCheckpoint(t *testing.T) {
	c := tinyLlamaConfig()
	p, _ := newTinyLlama(t, spec.DefaultLossConfig())
	tb := SyntheticBatch(p.Config(), 2, 9, 1)
	for range 2 {
		if _, err := p.Update(tb, 1e-2); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "ckpt")
	if err := p.Save(dir); err != nil {
		t.Fatal(err)
	}
	q, err := New(backendT(t), llamaOptions(c, tinyLlamaWeights(c, 8), 16, spec.DefaultLossConfig()))
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Load(dir); err != nil {
		t.Fatal(err)
	}
	wp, _ := p.Weights()
	wq, _ := q.Weights()
	if !reflect.DeepEqual(wp, wq) {
		t.Fatal("loaded weights differ from the saved ones")
	}
	sp, err := p.Update(tb, 1e-2)
	if err != nil {
		t.Fatal(err)
	}
	sq, err := q.Update(tb, 1e-2)
	if err != nil {
		t.Fatal(err)
	}
	if sp.Loss != sq.Loss || sp.GradNorm != sq.GradNorm {
		t.Fatalf("the next update differs after loading (loss %g vs %g)", sp.Loss, sq.Loss)
	}
	names := map[string]bool{}
	for v := range q.Context().IterVariables() {
		names[v.Scope()+"/"+v.Name()] = true
	}
	for _, name := range []string{"/policy/token_embd", "/policy/blk.1.attn_q", "/adam_v/blk.0.ffn_down", "/policy/output_norm"} {
		if !names[name] {
			t.Errorf("no variable %s", name)
		}
	}
	w, err := ReadCheckpointParams(dir, p.Params())
	if err != nil {
		t.Fatal(err)
	}
	o := llamaOptions(c, pretrained.Weights{}, 16, spec.DefaultLossConfig())
	o.Init = w
	r, err := New(backendT(t), o)
	if err != nil {
		t.Fatal(err)
	}
	checkHostCopy(t, r, tb)
	// A transformer's checkpoint is refused by name.
	tp := newTestPolicy(t, smallConfig(), spec.DefaultLossConfig())
	tdir := filepath.Join(t.TempDir(), "transformer")
	if err := tp.Save(tdir); err != nil {
		t.Fatal(err)
	}
	if err := q.Load(tdir); err == nil || !strings.Contains(err.Error(), "blk.0.attn_q") {
		t.Errorf("loading a transformer's checkpoint into a Llama policy: %v", err)
	}
}

// checkHostCopy builds policy/host's decoder from p's Weights and compares its logits with p's.
func checkHostCopy(t *testing.T, p *Policy, tb *TrainBatch) {
	t.Helper()
	c, ok := p.Llama()
	if !ok {
		t.Fatal("Llama() reports no pretrained architecture")
	}
	w, err := p.Weights()
	if err != nil {
		t.Fatal(err)
	}
	hw, err := spec.LlamaWeights(c, w)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.NewLlama(c, hw)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Logits(tb.Rows, tb.Len, tb.Tokens)
	if err != nil {
		t.Fatal(err)
	}
	n := full(tb.Rows, tb.Len)
	if d := maxDiffAt(got, hostLogits(t, h, tb.Tokens, tb.Rows, tb.Len, n), tb.Len, c.Vocab, n); d > 1e-5 {
		t.Errorf("host copy of the weights: max |GoMLX − host| = %.3g, want ≤ 1e-5", d)
	}
}

// smolLM2Env set to 1 makes the checks on the real model fail rather than skip when it is not
// installed (as in policy/host's tests).
const smolLM2Env = "GRAFTRL_SMOLLM2"

// smolLM2 is the installed SmolLM2-135M-Instruct, read once per test binary.
type smolLM2 struct {
	c   pretrained.Config
	w   pretrained.Weights
	tok *bpe.Tokenizer
}

var loadSmolLM2Once = sync.OnceValues(func() (*smolLM2, error) {
	path, err := modelfile.InstalledSmolLM2()
	if err != nil {
		return nil, err
	}
	g, err := modelfile.OpenGGUF(path)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	tok, err := bpe.FromGGUF(g)
	if err != nil {
		return nil, err
	}
	c, w, err := pretrained.FromGGUF(g)
	if err != nil {
		return nil, err
	}
	return &smolLM2{c: c, w: w, tok: tok}, nil
})

// loadSmolLM2 returns the installed model, skipping the test when it is absent (failing with
// GRAFTRL_SMOLLM2=1).
func loadSmolLM2(tb testing.TB) *smolLM2 {
	tb.Helper()
	m, err := loadSmolLM2Once()
	if err != nil {
		if os.Getenv(smolLM2Env) == "1" || !strings.Contains(err.Error(), "not installed") {
			tb.Fatalf("SmolLM2 (%s=1 makes a missing model a failure): %v", smolLM2Env, err)
		}
		tb.Skip(err)
	}
	return m
}

// chatPrompts are three ChatML prompts of 20–60 tokens, as rows of one batch padded with token 0
// at the end (causal attention: the padding changes no real position); n holds their lengths.
func chatPrompts(t testing.TB, m *smolLM2) (tokens []int32, rows, length int, n []int) {
	t.Helper()
	ct, err := m.tok.ChatTemplate()
	if err != nil {
		t.Fatal(err)
	}
	var ids [][]int32
	for _, turns := range [][]bpe.Message{
		{{Role: "user", Content: "What is the capital of France?"}},
		{{Role: "system", Content: "You are a maze solver. Answer with one move."},
			{Role: "user", Content: "You stand at (2,3); the exit is at (2,5). Walls: (2,4) is open."}},
		{{Role: "user", Content: "Name three prime numbers."}, {Role: "assistant", Content: "2, 3 and 5."},
			{Role: "user", Content: "And the next one?"}},
	} {
		p := m.tok.Encode(nil, ct.Render(turns, true))
		if len(p) < 20 || len(p) > 60 {
			t.Fatalf("prompt of %d tokens, want 20–60", len(p))
		}
		ids = append(ids, p)
		length = max(length, len(p))
	}
	tokens = make([]int32, len(ids)*length)
	for r, p := range ids {
		copy(tokens[r*length:], p)
		n = append(n, len(p))
	}
	return tokens, len(ids), length, n
}

// truncateRows keeps the first length positions of each of rows rows (of lengths n).
func truncateRows(tokens []int32, rows, width int, n []int, length int) ([]int32, int, []int) {
	out, nn := make([]int32, rows*length), make([]int, rows)
	for r := range rows {
		copy(out[r*length:(r+1)*length], tokens[r*width:])
		nn[r] = min(n[r], length)
	}
	return out, length, nn
}

// newSmolLM2Policy builds SmolLM2 as a policy on backend b (64 positions at most).
func newSmolLM2Policy(t testing.TB, b backends.Backend, m *smolLM2, l LossConfig) *Policy {
	t.Helper()
	p, err := New(b, llamaOptions(m.c, m.w, 64, l))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkSmolLM2Logits compares p's logits of the chat prompts with policy/host's SmolLM2 at
// every real position and every token: within 1e-3 (host matches numpy within 5.4e-5; the
// GoMLX graph sums in another order over 576 and 1536 terms per layer, 30 layers deep).
func checkSmolLM2Logits(t *testing.T, p *Policy, m *smolLM2) {
	t.Helper()
	tokens, rows, length, n := chatPrompts(t, m)
	got, err := p.Logits(rows, length, tokens)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.NewLlama(m.c, m.w)
	if err != nil {
		t.Fatal(err)
	}
	d := maxDiffAt(got, hostLogits(t, h, tokens, rows, length, n), length, m.c.Vocab, n)
	t.Logf("%s: max |GoMLX − host| over %v positions × %d tokens = %.3g", p.Backend().Name(), n, m.c.Vocab, d)
	if d > 1e-3 {
		t.Errorf("%s: SmolLM2 logits differ from policy/host's by %.3g, want ≤ 1e-3", p.Backend().Name(), d)
	}
}

// SmolLM2-135M-Instruct as a policy on the go backend gives policy/host's logits on three chat
// prompts.
func TestSmolLM2PolicyLogits(t *testing.T) {
	m := loadSmolLM2(t)
	checkSmolLM2Logits(t, newSmolLM2Policy(t, backendT(t), m, spec.DefaultLossConfig()), m)
}

// One cross-entropy update of SmolLM2 on a fixed batch (the chat prompts' first 24 next tokens) lowers
// that batch's loss, its reported loss is the one LogProbs gives before it, and a checkpoint
// restores the updated logits exactly.
func TestSmolLM2CrossEntropyUpdate(t *testing.T) {
	m := loadSmolLM2(t)
	l := spec.DefaultLossConfig()
	l.Objective = spec.ObjectiveCrossEntropy
	p := newSmolLM2Policy(t, backendT(t), m, l)
	tokens, rows, length, n := chatPrompts(t, m)
	tokens, length, n = truncateRows(tokens, rows, length, n, 24) // a short batch: the update is ~0.8 GFLOP a token
	tb := &TrainBatch{Rows: rows, Len: length, Tokens: tokens, Targets: make([]int32, len(tokens)),
		OldLogp: make([]float32, len(tokens)), Adv: make([]float32, len(tokens)), Weight: make([]float32, len(tokens))}
	for r, nr := range n {
		for i := r * length; i < r*length+nr-1; i++ {
			tb.Targets[i], tb.Weight[i] = tokens[i+1], 1/float32(nr-1)
		}
	}
	loss := func() float64 {
		lp, _, err := p.LogProbs(tb)
		if err != nil {
			t.Fatal(err)
		}
		var s float64
		for i, w := range tb.Weight {
			s -= float64(w) * float64(lp[i])
		}
		return s
	}
	before := loss()
	st, err := p.Update(tb, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	after := loss()
	t.Logf("cross-entropy %.5f → %.5f (update's own %.5f, gradient norm %.3g)", before, after, st.Loss, st.GradNorm)
	if st.Skipped || math.Abs(st.Loss-before) > 1e-4*math.Max(1, before) {
		t.Errorf("update reports loss %g (skipped %v), LogProbs gave %g", st.Loss, st.Skipped, before)
	}
	if !(after < before) {
		t.Errorf("one update did not lower the batch's loss: %g → %g", before, after)
	}
	want, err := p.Logits(rows, length, tokens)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ckpt")
	if err := p.Save(dir); err != nil {
		t.Fatal(err)
	}
	if err := p.Load(dir); err != nil {
		t.Fatal(err)
	}
	if got, err := p.Logits(rows, length, tokens); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("logits after Save → Load differ from before (err %v)", err)
	}
}

// BenchmarkLlamaTrainStep times one clipped policy-gradient update (forward, backward, Adam) of
// SmolLM2-135M on a synthetic batch of 2 rows × 64 tokens, every third an action token.
func BenchmarkLlamaTrainStep(b *testing.B) {
	m := loadSmolLM2(b)
	for _, shape := range []struct{ rows, length int }{{2, 64}} {
		b.Run(fmt.Sprintf("T%dxB%d", shape.length, shape.rows), func(b *testing.B) {
			p := newSmolLM2Policy(b, backendT(b), m, spec.DefaultLossConfig())
			tb := SyntheticBatch(p.Config(), shape.rows, shape.length, 1)
			if _, err := p.Update(tb, 1e-6); err != nil { // compile outside the timing
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if _, err := p.Update(tb, 1e-6); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(shape.rows*shape.length*b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// llamaXLABackend is the XLA backend of the conformance tests (xla_test.go): $GRAFTRL_XLA_BACKEND,
// else xla:cpu; the test is skipped when it does not load, and fails instead with
// GRAFTRL_XLA_CPU=1 or GRAFTRL_XLA_BACKEND set.
func llamaXLABackend(t *testing.T) backends.Backend {
	t.Helper()
	name := os.Getenv("GRAFTRL_XLA_BACKEND")
	if name == "" {
		name = "xla:cpu"
	}
	b, err := llamaXLA(name)
	if err != nil {
		if os.Getenv("GRAFTRL_XLA_CPU") == "1" || os.Getenv("GRAFTRL_XLA_BACKEND") != "" {
			t.Fatalf("GRAFTRL_XLA_CPU=1 or GRAFTRL_XLA_BACKEND set, but the %s backend does not load: %v", name, err)
		}
		t.Skipf("%s is not installed here (scripts/install-xla-cpu.sh installs it; GRAFTRL_XLA_CPU=1 makes this a failure): %v", name, err)
	}
	return b
}

// llamaXLA creates each XLA backend once per test binary.
var llamaXLA = func() func(name string) (backends.Backend, error) {
	var mu sync.Mutex
	made := map[string]func() (backends.Backend, error){}
	return func(name string) (backends.Backend, error) {
		mu.Lock()
		f, ok := made[name]
		if !ok {
			f = sync.OnceValues(func() (backends.Backend, error) { return NewBackend(BackendOptions{Name: name}) })
			made[name] = f
		}
		mu.Unlock()
		return f()
	}
}()

// The Llama graph on xla:cpu computes policy/host's function: the tiny Llama's logits and the
// log-probs an update reports within 1e-5, SmolLM2's logits of the chat prompts within 1e-3.
func TestXLACPULlama(t *testing.T) {
	b := llamaXLABackend(t)
	c := tinyLlamaConfig()
	w := tinyLlamaWeights(c, 3)
	p, err := New(b, llamaOptions(c, w, 16, spec.DefaultLossConfig()))
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.NewLlama(c, w)
	if err != nil {
		t.Fatal(err)
	}
	const rows, length = 3, 11
	tb := SyntheticBatch(p.Config(), rows, length, 5)
	want := hostLogits(t, h, tb.Tokens, rows, length, full(rows, length))
	got, err := p.Logits(rows, length, tb.Tokens)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxDiffAt(got, want, length, c.Vocab, full(rows, length)); d > 1e-5 {
		t.Errorf("tiny Llama on %s: max |logits − host| = %.3g, want ≤ 1e-5", b.Name(), d)
	}
	lp, _, err := p.LogProbs(tb)
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.Update(tb, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d, n := maxDiff(st.LogProbs, lp, tb.Weight); d > 1e-5 || n == 0 {
		t.Errorf("tiny Llama on %s: update's log-probs at %d positions differ from LogProbs by %.3g", b.Name(), n, d)
	}
	t.Run("SmolLM2", func(t *testing.T) {
		m := loadSmolLM2(t)
		checkSmolLM2Logits(t, newSmolLM2Policy(t, b, m, spec.DefaultLossConfig()), m)
	})
}

// TestSwapPairs checks swapPairs against the exchange itself, bit for bit, at head widths whose
// blocks are 2, 4, 8 and 16 entries wide.
func TestSwapPairs(t *testing.T) {
	b := backendT(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, hd := range []int{2, 6, 12, 24, 64} {
		x := make([]float32, 3*2*hd)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		exec := graph.MustNewExec(b, func(in *graph.Node) *graph.Node { return swapPairs(in) })
		got := tensors.MustCopyFlatData[float32](exec.MustExec(tensors.FromFlatDataAndDimensions(x, 3, 2, hd))[0])
		for i := range x {
			if got[i] != x[i^1] {
				t.Fatalf("hd %d (blocks of %d): entry %d = %v, want %v", hd, swapBlock(hd), i, got[i], x[i^1])
			}
		}
	}
}
