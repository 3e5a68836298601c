package policy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/context/checkpoints"

	"github.com/graftrl/graftrl/internal/gradcheck"
	"github.com/graftrl/graftrl/policy/pretrained"
	"github.com/graftrl/graftrl/policy/spec"
)

// newTinyLoRA builds the tiny Llama with adapters l (seed draws A) on the go backend.
func newTinyLoRA(t testing.TB, l spec.LoRA, loss LossConfig, seed uint64) *Policy {
	t.Helper()
	c := tinyLlamaConfig()
	o := llamaOptions(c, tinyLlamaWeights(c, 3), 16, loss)
	o.LoRA, o.Seed = &l, seed
	p, err := New(backendT(t), o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// klLoss is the default loss with the k3 KL to the reference on.
func klLoss() LossConfig {
	l := spec.DefaultLossConfig()
	l.KL = spec.KLk3
	return l
}

// A LoRA policy starts as its base exactly (B = 0): logits, log-probs, the reference's
// log-probs, the decoder and Weights are bit for bit the base policy's, while A is drawn from
// U(−1/√in, 1/√in) and Adam's moments exist for the adapters only.
func TestLoRAInitIsBase(t *testing.T) {
	base, _ := newTinyLlama(t, klLoss())
	p := newTinyLoRA(t, spec.DefaultLoRA(), klLoss(), 5)
	const rows, length = 3, 11
	tb := SyntheticBatch(p.Config(), rows, length, 5)
	want, err := base.Logits(rows, length, tb.Tokens)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Logits(rows, length, tb.Tokens)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Error("LoRA at init: logits differ from the base policy's")
	}
	wantLp, _, _ := base.LogProbs(tb)
	lp, _, err := p.LogProbs(tb)
	if err != nil || !reflect.DeepEqual(lp, wantLp) {
		t.Errorf("LoRA at init: log-probs differ from the base policy's (err %v)", err)
	}
	ref, err := p.RefLogProbs(tb)
	if err != nil || !reflect.DeepEqual(ref, wantLp) {
		t.Errorf("LoRA at init: reference log-probs differ from the base policy's (err %v)", err)
	}
	wb, _ := base.Weights()
	wl, err := p.Weights()
	if err != nil || !reflect.DeepEqual(wb, wl) {
		t.Errorf("LoRA at init: Weights differ from the base's (err %v)", err)
	}
	checkDecoder(t, p, tb.Tokens, rows, length, want)
	if len(p.Params()) != len(base.Params()) || !reflect.DeepEqual(p.Params(), base.Params()) {
		t.Error("Params of a LoRA policy are not the Llama's")
	}
	if l, ok := p.LoRA(); !ok || !reflect.DeepEqual(l, spec.DefaultLoRA()) {
		t.Errorf("LoRA() = %+v, %v", l, ok)
	}
	if _, ok := base.LoRA(); ok || !reflect.DeepEqual(base.Trainable(), base.Params()) {
		t.Error("a policy trained in full reports LoRA, or Trainable is not Params")
	}
	c := tinyLlamaConfig()
	if !reflect.DeepEqual(p.Trainable(), spec.LoRAParams(c, spec.DefaultLoRA())) {
		t.Error("Trainable is not spec.LoRAParams")
	}
	for i, s := range p.Trainable() {
		v := variableValues(t, p.adapters[i])
		bound := 1 / math.Sqrt(float64(s.Shape[1]))
		for _, x := range v {
			if s.Init == spec.InitZeros && x != 0 || s.Init == spec.InitUniformFanIn && (x == 0 || math.Abs(float64(x)) > bound) {
				t.Fatalf("%s: value %g, want %s", s.Name, x, map[bool]string{true: "0", false: "in ±1/√in, not 0"}[s.Init == spec.InitZeros])
			}
		}
	}
	moments := 0
	for v := range p.Context().IterVariables() {
		if strings.HasPrefix(v.Scope(), "/adam_") {
			moments++
			if !strings.Contains(v.Name(), ".lora_") {
				t.Errorf("Adam moment %s/%s of a frozen weight", v.Scope(), v.Name())
			}
		}
		if v.Scope() == "/reference" {
			t.Errorf("a second copy of the base: %s/%s", v.Scope(), v.Name())
		}
	}
	if moments != 2*len(p.Trainable()) {
		t.Errorf("%d Adam moments, want %d", moments, 2*len(p.Trainable()))
	}
}

// variableValues is a host copy of v's value.
func variableValues(t testing.TB, v *context.Variable) []float32 {
	t.Helper()
	x, err := v.Value()
	if err != nil {
		t.Fatal(err)
	}
	return tensors.MustCopyFlatData[float32](x)
}

// The gradient of the adapters (A and B of every target, B ≠ 0, the query's adapter sharing the
// attention scale) through the Llama graph agrees with central finite differences at every
// entry, in float64.
func TestLoRAGradientFiniteDifferences(t *testing.T) {
	c := pretrained.Config{Layers: 2, DModel: 8, Hidden: 12, Heads: 4, KVHeads: 2, HeadDim: 2, Vocab: 7,
		RopeBase: 10, NormEps: 1e-5}
	l := spec.LoRA{Rank: 2, Alpha: 3, Targets: spec.LoRATargets}
	a := newLlamaArch(c)
	a.lora = &l
	specs := append(append([]spec.Param(nil), a.specs...), spec.LoRAParams(c, l)...)
	nb, np := len(a.specs), len(specs)
	rng := rand.New(rand.NewPCG(9, 11))
	theta := make([][]float64, np)
	for i, s := range specs {
		theta[i] = gradcheck.Normals(rng, s.Size())
		for j := range theta[i] {
			theta[i][j] *= 0.5
			if s.Init == spec.InitOnes {
				theta[i][j]++
			}
		}
	}
	const rows, length = 2, 5
	tb := SyntheticBatch(Config{Vocab: c.Vocab}, rows, length, 3)
	sel := selectPositions(tb, 2)
	bias := tensors.MustCopyFlatData[float32](sel.attentionBias(1))
	bias64 := make([]float64, len(bias))
	for i, v := range bias {
		bias64[i] = float64(v)
	}
	lossOf := func(in []*graph.Node) *graph.Node {
		tokens, at := in[np], &queries{idx: in[np+1], bias: in[np+2]}
		return graph.Add(gradcheck.Weighted(a.forwardAt(in[:np], tokens, nil)), gradcheck.Weighted(a.forwardAt(in[:np], tokens, at)))
	}
	b := backendT(t)
	gradExec := graph.MustNewExec(b, func(in []*graph.Node) []*graph.Node {
		loss := lossOf(in)
		return append([]*graph.Node{loss}, graph.Gradient(loss, in[nb:np]...)...)
	})
	lossExec := graph.MustNewExec(b, func(in []*graph.Node) *graph.Node { return lossOf(in) })
	args := func() []any {
		out := make([]any, 0, np+3)
		for i, s := range specs {
			out = append(out, tensors.FromFlatDataAndDimensions(theta[i], s.Shape...))
		}
		return append(out, tensors.FromFlatDataAndDimensions(tb.Tokens, rows, length), sel.index(),
			tensors.FromFlatDataAndDimensions(bias64, rows, 1, sel.q, length))
	}
	grads := gradExec.MustExec(args()...)
	for i := nb; i < np; i++ {
		g := grads[1+i-nb]
		if g.DType() != dtypes.Float64 {
			t.Fatalf("%s: gradient of dtype %s", specs[i].Name, g.DType())
		}
		gradcheck.Compare(t, specs[i].Name, theta[i], tensors.MustCopyFlatData[float64](g), func([]float64) float64 {
			return tensors.ToScalar[float64](lossExec.MustExec(args()...)[0])
		})
	}
}

// Updates with the KL on change every adapter and no base weight; Weights is W + (α/r)·B·A
// computed on the host; the reference stays the base; the decoder and policy/host's decoder of
// Weights give the policy's logits.
func TestLoRAUpdate(t *testing.T) {
	l := spec.LoRA{Rank: 4, Alpha: 6, Targets: []string{"attn_q", "attn_output", "ffn_down", "attn_v"}}
	p := newTinyLoRA(t, l, klLoss(), 2)
	base, _ := newTinyLlama(t, klLoss())
	tb := SyntheticBatch(p.Config(), 2, 9, 1)
	ref, _ := p.RefLogProbs(tb)
	tb.RefLogp = ref
	before := make([][]float32, len(p.adapters))
	for i, v := range p.adapters {
		before[i] = variableValues(t, v)
	}
	for range 2 { // the first update moves B only (A's gradient is 0 while B = 0)
		st, err := p.Update(tb, 1e-2)
		if err != nil || st.Skipped {
			t.Fatalf("update: %v (skipped %v)", err, st.Skipped)
		}
	}
	for i, v := range p.adapters {
		if reflect.DeepEqual(variableValues(t, v), before[i]) {
			t.Errorf("adapter %s did not change", p.adapterSpecs[i].Name)
		}
	}
	w0 := spec.LlamaFlat(tinyLlamaWeights(tinyLlamaConfig(), 3))
	for i, v := range p.theta {
		if !reflect.DeepEqual(variableValues(t, v), w0[i]) {
			t.Errorf("base weight %s changed", p.Params()[i].Name)
		}
	}
	w, err := p.Weights()
	if err != nil {
		t.Fatal(err)
	}
	want := hostMerge(t, p, w0)
	for i, s := range p.Params() {
		var d float64
		for j := range w[i] {
			d = math.Max(d, math.Abs(float64(w[i][j])-want[i][j]))
		}
		if d > 1e-6 {
			t.Errorf("Weights %s: max |merged − host W + (α/r)·B·A| = %.3g, want ≤ 1e-6", s.Name, d)
		}
	}
	lp, _, _ := base.LogProbs(tb)
	if ref, err := p.RefLogProbs(tb); err != nil || !reflect.DeepEqual(ref, lp) {
		t.Errorf("the reference after updates is not the base (err %v)", err)
	}
	if now, _, _ := p.LogProbs(tb); reflect.DeepEqual(now, lp) {
		t.Error("the updates did not change the policy")
	}
	lg, err := p.Logits(tb.Rows, tb.Len, tb.Tokens)
	if err != nil {
		t.Fatal(err)
	}
	checkDecoder(t, p, tb.Tokens, tb.Rows, tb.Len, lg)
	checkHostCopy(t, p, tb)
}

// hostMerge is W + (α/r)·B·A of every adapted matrix of p in float64 on the host, from p's
// adapters and the base weights w0 (the others as w0).
func hostMerge(t *testing.T, p *Policy, w0 [][]float32) [][]float64 {
	t.Helper()
	l, _ := p.LoRA()
	index := map[string]int{}
	out := make([][]float64, len(w0))
	for i, s := range p.Params() {
		index[s.Name] = i
		out[i] = make([]float64, len(w0[i]))
		for j, x := range w0[i] {
			out[i][j] = float64(x)
		}
	}
	for i := 0; i < len(p.adapters); i += 2 {
		sa := p.adapterSpecs[i]
		a, b := variableValues(t, p.adapters[i]), variableValues(t, p.adapters[i+1])
		r, in := sa.Shape[0], sa.Shape[1]
		w := out[index[strings.TrimSuffix(sa.Name, ".lora_a")]]
		for o := range len(w) / in {
			for j := range in {
				var s float64
				for k := range r {
					s += float64(b[o*r+k]) * float64(a[k*in+j])
				}
				w[o*in+j] += l.Alpha / float64(l.Rank) * s
			}
		}
	}
	return out
}

// A LoRA checkpoint restores the policy exactly (logits, then the next update) and holds the
// adapters, their moments and the steps only; a full checkpoint and a LoRA one are refused by
// the other kind of policy, naming policy.lora.
func TestLoRACheckpoint(t *testing.T) {
	l := spec.DefaultLoRA()
	p := newTinyLoRA(t, l, spec.DefaultLossConfig(), 1)
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
	q := newTinyLoRA(t, l, spec.DefaultLossConfig(), 99) // another draw of A
	if err := q.Load(dir); err != nil {
		t.Fatal(err)
	}
	lp, _ := p.Logits(tb.Rows, tb.Len, tb.Tokens)
	lq, err := q.Logits(tb.Rows, tb.Len, tb.Tokens)
	if err != nil || !reflect.DeepEqual(lp, lq) {
		t.Fatalf("logits after Load differ from the saved policy's (err %v)", err)
	}
	sp, _ := p.Update(tb, 1e-2)
	sq, err := q.Update(tb, 1e-2)
	if err != nil || sp.Loss != sq.Loss || sp.GradNorm != sq.GradNorm {
		t.Fatalf("the next update differs after loading: loss %g vs %g, grad norm %g vs %g (err %v)", sp.Loss, sq.Loss, sp.GradNorm, sq.GradNorm, err)
	}
	wp, _ := p.Weights()
	wq, _ := q.Weights()
	if !reflect.DeepEqual(wp, wq) {
		t.Error("weights after the next update differ")
	}
	checkLoRACheckpointFiles(t, p, dir)

	full, _ := newTinyLlama(t, spec.DefaultLossConfig())
	fdir := filepath.Join(t.TempDir(), "full")
	if err := full.Save(fdir); err != nil {
		t.Fatal(err)
	}
	if err := q.Load(fdir); err == nil || !strings.Contains(err.Error(), "policy.lora") || !strings.Contains(err.Error(), "trained in full") {
		t.Errorf("a full checkpoint into a LoRA policy: %v", err)
	}
	if err := full.Load(dir); err == nil || !strings.Contains(err.Error(), "holds LoRA adapters") {
		t.Errorf("a LoRA checkpoint into a policy trained in full: %v", err)
	}
	if _, err := ReadCheckpointParams(dir, p.Params()); err == nil || !strings.Contains(err.Error(), "LoRA adapters only") {
		t.Errorf("ReadCheckpointParams of a LoRA checkpoint: %v", err)
	}
}

// checkLoRACheckpointFiles checks that the checkpoint in dir holds no base tensor by name, and
// that its files are no larger than the adapters with two moments each plus the steps and
// the metadata.
func checkLoRACheckpointFiles(t *testing.T, p *Policy, dir string) {
	t.Helper()
	scratch := context.New()
	if _, err := checkpoints.Load(scratch).Dir(dir).Immediate().Done(); err != nil {
		t.Fatal(err)
	}
	base := map[string]bool{}
	for _, s := range p.Params() {
		base[s.Name] = true
	}
	n := 0
	for v := range scratch.IterVariables() {
		n++
		if base[v.Name()] {
			t.Errorf("checkpoint holds base tensor %s/%s", v.Scope(), v.Name())
		}
	}
	if want := 3*len(p.adapters) + 2; n != want { // A, B and their moments; Adam's step; the global step
		t.Errorf("checkpoint of %d variables, want %d", n, want)
	}
	values := 0
	for _, s := range p.Trainable() {
		values += s.Size()
	}
	var size int64
	files, _ := os.ReadDir(dir)
	for _, f := range files {
		info, err := f.Info()
		if err != nil {
			t.Fatal(err)
		}
		size += info.Size()
	}
	if limit := int64(3*4*values + 64<<10); size > limit {
		t.Errorf("checkpoint of %d bytes, want ≤ %d (adapters and moments: %d float32s)", size, limit, 3*values)
	}
}

// Bad LoRA settings are refused by New, each error naming its key.
func TestLoRAOptionsRefused(t *testing.T) {
	c := tinyLlamaConfig()
	w := tinyLlamaWeights(c, 1)
	for _, tc := range []struct {
		name string
		edit func(*spec.LoRA)
		want string
	}{
		{"rank 0", func(l *spec.LoRA) { l.Rank = 0 }, "policy.lora.rank: 0"},
		{"rank -1", func(l *spec.LoRA) { l.Rank = -1 }, "policy.lora.rank: -1"},
		{"rank 9", func(l *spec.LoRA) { l.Rank = 9 }, "policy.lora.rank: 9 exceeds min(out, in) = 8 of attn_k"},
		{"alpha 0", func(l *spec.LoRA) { l.Alpha = 0 }, "policy.lora.alpha: 0"},
		{"attn_x", func(l *spec.LoRA) { l.Targets = []string{"attn_x"} }, `policy.lora.targets: "attn_x"`},
		{"duplicate", func(l *spec.LoRA) { l.Targets = []string{"ffn_up", "ffn_up"} }, `policy.lora.targets: "ffn_up" given twice`},
	} {
		l := spec.DefaultLoRA()
		tc.edit(&l)
		o := llamaOptions(c, w, 16, spec.DefaultLossConfig())
		o.LoRA = &l
		if _, err := New(backendT(t), o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	l := spec.DefaultLoRA()
	o := Options{Model: smallConfig(), Loss: spec.DefaultLossConfig(), Optim: spec.DefaultOptimConfig(), LoRA: &l}
	if _, err := New(backendT(t), o); err == nil || !strings.Contains(err.Error(), "policy.lora:") {
		t.Errorf("LoRA without a pretrained model: %v", err)
	}
}

// One update of SmolLM2-135M with LoRA (rank 8, every target) on 2 rows × 64 tokens: it runs,
// changes the policy and leaves the base alone; the time of the update, of Weights (the merge)
// and of a checkpoint, the checkpoint's size and the Go heap and peak RSS are logged for the
// notes (nothing about speed is asserted).
func TestSmolLM2LoRAUpdate(t *testing.T) {
	m := loadSmolLM2(t)
	l := spec.DefaultLoRA()
	o := llamaOptions(m.c, m.w, 64, spec.DefaultLossConfig())
	o.LoRA = &l
	p, err := New(backendT(t), o)
	if err != nil {
		t.Fatal(err)
	}
	tb := SyntheticBatch(p.Config(), 2, 64, 1)
	for i := range 2 {
		t0 := time.Now()
		st, err := p.Update(tb, 1e-4)
		if err != nil || st.Skipped {
			t.Fatalf("update: %v (skipped %v)", err, st.Skipped)
		}
		t.Logf("update %d (T64×B2, LoRA rank 8, 7 targets): %v (loss %.4f, grad norm %.3g)", i+1, time.Since(t0), st.Loss, st.GradNorm)
	}
	t.Logf("after the updates: %s", memory())
	var w [][]float32
	for i := range 2 { // the first compiles the merge graph
		t0 := time.Now()
		if w, err = p.Weights(); err != nil {
			t.Fatal(err)
		}
		t.Logf("Weights %d (merge of %d matrices, copy of all %d): %v", i+1, len(p.adapters)/2, len(w), time.Since(t0))
	}
	flat := spec.LlamaFlat(m.w)
	if !reflect.DeepEqual(variableValues(t, p.theta[1]), flat[1]) || reflect.DeepEqual(w[2], flat[2]) {
		t.Error("the update changed a base weight, or the merged weights are the base's")
	}
	dir := filepath.Join(t.TempDir(), "ckpt")
	t0 := time.Now()
	if err := p.Save(dir); err != nil {
		t.Fatal(err)
	}
	var size int64
	files, _ := os.ReadDir(dir)
	for _, f := range files {
		if info, err := f.Info(); err == nil {
			size += info.Size()
		}
	}
	values := 0
	for _, s := range p.Trainable() {
		values += s.Size()
	}
	t.Logf("checkpoint: %d bytes in %v (%d adapter values)", size, time.Since(t0), values)
	t.Logf("at the end: %s", memory())
}

// memory reports the Go heap in use (after a collection) and the process's peak resident set
// (from /proc: Linux only).
func memory() string {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	peak := "unknown"
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				peak = strings.TrimSpace(v)
			}
		}
	}
	return fmt.Sprintf("Go heap in use %.0f MiB, peak RSS %s", float64(ms.HeapInuse)/(1<<20), peak)
}
