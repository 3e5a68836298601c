package policy_test

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/graftrl/graftrl/policy"
	"github.com/graftrl/graftrl/policy/host"
	"github.com/graftrl/graftrl/policy/spec"
)

// xlaCPUEnv set to 1 turns the skip of the xla:cpu conformance tests into a failure, so that CI,
// which installs the plugin first (scripts/install-xla-cpu.sh), cannot skip them silently.
const xlaCPUEnv = "GRAFTRL_XLA_CPU"

// Conformance of xla:cpu with the go backend. Both run the same graph in float32, so they differ
// only in the order of floating-point operations: XLA fuses and reorders reductions (the
// softmaxes, LayerNorms and the matmuls' sums over d_model and d_ff). A sum of n float32 terms of
// magnitude ≤ 1 reordered moves by at most ~n·2⁻²⁴·Σ|x| and in practice ~√n·2⁻²⁴: for the ≤ 256
// terms here 10⁻⁶–10⁻⁵ of the result. The bound is 10⁻⁵: absolute on logits of
// magnitude ≤ ~10, relative on the loss and on each gradient tensor (to its largest entry).
const xlaTol = 1e-5

// xlaBackendEnv names the XLA backend the conformance tests hold against the go backend
// (default xla:cpu); scripts/gpu-check.sh sets it to xla:cuda. Set, it also makes a backend that
// does not load a failure rather than a skip.
const xlaBackendEnv = "GRAFTRL_XLA_BACKEND"

// xlaName is the XLA backend under test: $GRAFTRL_XLA_BACKEND, else xla:cpu.
func xlaName() string {
	if v := os.Getenv(xlaBackendEnv); v != "" {
		return v
	}
	return "xla:cpu"
}

var xlaBackend = sync.OnceValues(func() (backends.Backend, error) {
	return policy.NewBackend(policy.BackendOptions{Name: xlaName()})
})

var goBackend = sync.OnceValues(func() (backends.Backend, error) {
	return policy.NewBackend(policy.BackendOptions{Name: "go"})
})

// bothBackends returns the XLA backend under test (xlaName) and the go backend, skipping the test (failing it with
// GRAFTRL_XLA_CPU=1) when the CPU PJRT plugin is not installed.
func bothBackends(t *testing.T) (xla, gob backends.Backend) {
	t.Helper()
	xla, err := xlaBackend()
	if err != nil {
		if os.Getenv(xlaCPUEnv) == "1" || os.Getenv(xlaBackendEnv) != "" {
			t.Fatalf("%s=1 or %s set, but the %s backend does not load: %v", xlaCPUEnv, xlaBackendEnv, xlaName(), err)
		}
		t.Skipf("xla:cpu is not installed here (scripts/install-xla-cpu.sh installs it; %s=1 makes this a failure): %v", xlaCPUEnv, err)
	}
	gob, err = goBackend()
	if err != nil {
		t.Fatal(err)
	}
	return xla, gob
}

// xlaConfig is the quickstart's architecture with a small vocabulary and context.
func xlaConfig() policy.Config {
	c := spec.DefaultConfig()
	c.Vocab, c.MaxLen = 24, 32
	return c
}

// xlaOptions are the options of both policies: the quickstart's loss (entropy bonus) and Adam
// without gradient clipping, so that the first Adam moment after one step is (1−β1)·∇ exactly;
// half the vocabulary may form actions, which exercises the action mask.
func xlaOptions(c policy.Config, init [][]float32) policy.Options {
	l := spec.DefaultLossConfig()
	l.EntropyCoef = 0.05
	o := spec.DefaultOptimConfig()
	o.GradClip = 0
	var actions []int32
	for id := 0; id < c.Vocab; id += 2 {
		actions = append(actions, int32(id))
	}
	return policy.Options{Model: c, Loss: l, Optim: o, Init: init, ActionTokens: actions}
}

// trainedWeights are weights after a few large Adam steps on the go backend, so that the logits
// are O(1) rather than the near-zero ones of the initial draw.
func trainedWeights(t *testing.T, b backends.Backend, c policy.Config) [][]float32 {
	t.Helper()
	o := xlaOptions(c, nil)
	o.Seed = 3
	p, err := policy.New(b, o)
	if err != nil {
		t.Fatal(err)
	}
	tb := policy.SyntheticBatch(c, 4, 16, 9)
	for range 5 {
		if _, err := p.Update(tb, 3e-2); err != nil {
			t.Fatal(err)
		}
	}
	w, err := p.Weights()
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// policyPair builds one policy on each backend from the same weights.
func policyPair(t *testing.T, c policy.Config) (px, pg *policy.Policy) {
	t.Helper()
	xla, gob := bothBackends(t)
	w := trainedWeights(t, gob, c)
	var err error
	if px, err = policy.New(xla, xlaOptions(c, w)); err != nil {
		t.Fatal(err)
	}
	if pg, err = policy.New(gob, xlaOptions(c, w)); err != nil {
		t.Fatal(err)
	}
	return px, pg
}

func randomTokens(seed uint64, n, vocab int) []int32 {
	rng := rand.New(rand.NewPCG(seed, 5))
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(rng.IntN(vocab))
	}
	return out
}

// maxAbsDiff is max |a−b| and max |b|.
func maxAbsDiff(t *testing.T, a, b []float32) (diff, scale float64) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("lengths %d and %d", len(a), len(b))
	}
	for i := range a {
		diff = math.Max(diff, math.Abs(float64(a[i])-float64(b[i])))
		scale = math.Max(scale, math.Abs(float64(b[i])))
	}
	return diff, scale
}

func relDiff(a, b float64) float64 { return math.Abs(a-b) / math.Max(math.Abs(b), 1e-30) }

// The full forward pass gives the same logits on xla:cpu as on the go backend.
func TestXLACPULogits(t *testing.T) {
	c := xlaConfig()
	px, pg := policyPair(t, c)
	for _, shape := range []struct{ rows, length int }{{1, 1}, {3, 17}, {8, 32}} {
		tok := randomTokens(uint64(shape.length), shape.rows*shape.length, c.Vocab)
		lx, err := px.Logits(shape.rows, shape.length, tok)
		if err != nil {
			t.Fatal(err)
		}
		lg, err := pg.Logits(shape.rows, shape.length, tok)
		if err != nil {
			t.Fatal(err)
		}
		d, scale := maxAbsDiff(t, lx, lg)
		t.Logf("logits %d×%d: max |xla − go| = %.3g (largest |logit| %.3g)", shape.rows, shape.length, d, scale)
		if d > xlaTol || scale < 0.5 {
			t.Errorf("logits %d×%d: max difference %.3g (tolerance %g), largest logit %.3g", shape.rows, shape.length, d, xlaTol, scale)
		}
	}
}

// adamFirstMoments reads the first Adam moment of every parameter, by parameter name.
func adamFirstMoments(t *testing.T, p *policy.Policy) map[string][]float32 {
	t.Helper()
	out := map[string][]float32{}
	for v := range p.Context().IterVariables() {
		if name, ok := strings.CutPrefix(v.Scope()+"/"+v.Name(), "/adam_m/"); ok {
			val, err := v.Value()
			if err != nil {
				t.Fatal(err)
			}
			out[name] = tensors.MustCopyFlatData[float32](val)
		}
	}
	if len(out) != len(spec.ParamNames(p.Config())) {
		t.Fatalf("found %d Adam moments for %d parameters", len(out), len(spec.ParamNames(p.Config())))
	}
	return out
}

// One update gives the same loss, statistics, log-probs and gradients on both backends. The
// gradient is read from Adam's first moment after the first step: m = (1−β1)·∇ without clipping.
func TestXLACPUUpdate(t *testing.T) {
	c := xlaConfig()
	px, pg := policyPair(t, c)
	tb := policy.SyntheticBatch(c, 6, 24, 4)
	sx, err := px.Update(tb, 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	sg, err := pg.Update(tb, 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	sameUpdate(t, "xla", "go", sx, sg, px, pg)
}

// sameUpdate checks that two policies' updates from the same weights agree within xlaTol: the
// loss, its terms, the gradient norm, the update's log-probs, and each parameter's gradient
// (read from Adam's first moment after the first step: m = (1−β1)·∇ without clipping).
func sameUpdate(t *testing.T, nameA, nameB string, sx, sg policy.TrainStats, px, pg *policy.Policy) {
	t.Helper()
	if sx.Skipped || sg.Skipped {
		t.Fatalf("update skipped (%s %v, %s %v)", nameA, sx.Skipped, nameB, sg.Skipped)
	}
	for _, s := range []struct {
		name   string
		xv, gv float64
	}{{"loss", sx.Loss, sg.Loss}, {"pg loss", sx.PGLoss, sg.PGLoss}, {"entropy", sx.Entropy, sg.Entropy},
		{"kl", sx.KL, sg.KL}, {"gradient norm", sx.GradNorm, sg.GradNorm}} {
		if s.xv == 0 && s.gv == 0 {
			continue
		}
		r := relDiff(s.xv, s.gv)
		t.Logf("%s: %s %.9g, %s %.9g, relative difference %.3g", s.name, nameA, s.xv, nameB, s.gv, r)
		if r > xlaTol {
			t.Errorf("%s: %s %.9g, %s %.9g: relative difference %.3g > %g", s.name, nameA, s.xv, nameB, s.gv, r, xlaTol)
		}
	}
	d, _ := maxAbsDiff(t, sx.LogProbs, sg.LogProbs)
	t.Logf("log-probs of the update: max |%s − %s| = %.3g", nameA, nameB, d)
	if d > xlaTol {
		t.Errorf("log-probs of the update differ by %.3g", d)
	}
	mx, mg := adamFirstMoments(t, px), adamFirstMoments(t, pg)
	largest := 0.0
	for _, g := range mg {
		_, scale := maxAbsDiff(t, g, g)
		largest = math.Max(largest, scale)
	}
	worst, worstName := 0.0, ""
	for name, g := range mg {
		d, scale := maxAbsDiff(t, mx[name], g)
		if strings.HasSuffix(name, "/bk") {
			// The key bias adds q·b_k to every score of a query, which the softmax cancels: its
			// gradient is 0 in exact arithmetic (and on the go backend); XLA's must be rounding
			// noise on the scale of the largest gradient entry.
			toGrad := 1 / (1 - spec.DefaultOptimConfig().Beta1)
			t.Logf("%s: max |gradient| %.3g on %s, %.3g on %s (0 in exact arithmetic)", name, d*toGrad, nameA, scale*toGrad, nameB)
			if d > xlaTol*largest {
				t.Errorf("%s: gradient %.3g where it is 0 in exact arithmetic (largest gradient entry %.3g)", name, d, largest)
			}
			continue
		}
		if scale == 0 {
			t.Errorf("%s: zero gradient on %s", name, nameB)
			continue
		}
		if r := d / scale; r > worst {
			worst, worstName = r, name
		}
	}
	t.Logf("gradients: largest max|%s − %s| / max|%s| over the %d parameters: %.3g (%s)", nameA, nameB, nameB, len(mg), worst, worstName)
	if worst > xlaTol {
		t.Errorf("gradient of %s differs by %.3g relative to its largest entry (tolerance %g)", worstName, worst, xlaTol)
	}
}

// gumbelArgmax draws a token from softmax(logits) by the Gumbel-max trick, with noise[i] =
// −log(−log uᵢ) for uniforms uᵢ: the same noise is the same draw on both paths.
func gumbelArgmax(logits []float32, noise []float64) int32 {
	best := 0
	for i := range logits {
		if float64(logits[i])+noise[i] > float64(logits[best])+noise[best] {
			best = i
		}
	}
	return int32(best)
}

// Sampling works through both paths on xla:cpu: the KV-cache decode graph on the XLA backend
// (rollout.sampler graph) and the host engine fed with the weights the XLA policy holds
// (rollout.sampler host). Both give the go backend's full-forward logits at every position, and
// the same seeded draws give the same tokens.
func TestXLACPUSampling(t *testing.T) {
	c := xlaConfig()
	px, pg := policyPair(t, c)
	w, err := px.Weights()
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(c, w)
	if err != nil {
		t.Fatal(err)
	}
	const rows, length = 4, 20
	gd, hd := px.NewDecoder(rows), h.NewDecoder(rows)
	rng := rand.New(rand.NewPCG(11, 12))
	noise := make([]float64, c.Vocab)
	seqG, seqH := make([][]int32, rows), make([][]int32, rows)
	tokG, tokH := make([]int32, rows), make([]int32, rows)
	for r := range rows {
		tokG[r], tokH[r] = int32(r), int32(r)
		seqG[r], seqH[r] = []int32{int32(r)}, []int32{int32(r)}
	}
	pos := make([]int32, rows)
	worstPaths := 0.0
	for q := range length - 1 {
		for r := range pos {
			pos[r] = int32(q)
		}
		lg, err := gd.Step(tokG, pos)
		if err != nil {
			t.Fatal(err)
		}
		lh, err := hd.Step(tokH, pos, nil)
		if err != nil {
			t.Fatal(err)
		}
		d, _ := maxAbsDiff(t, lg, lh)
		if d > xlaTol {
			t.Fatalf("position %d: graph decode on %s and host decode differ by %.3g", q, xlaName(), d)
		}
		worstPaths = math.Max(worstPaths, d)
		for r := range rows {
			for i := range noise {
				noise[i] = -math.Log(-math.Log(rng.Float64()))
			}
			tokG[r] = gumbelArgmax(lg[r*c.Vocab:(r+1)*c.Vocab], noise)
			tokH[r] = gumbelArgmax(lh[r*c.Vocab:(r+1)*c.Vocab], noise)
			seqG[r], seqH[r] = append(seqG[r], tokG[r]), append(seqH[r], tokH[r])
		}
	}
	if !reflect.DeepEqual(seqG, seqH) {
		t.Fatalf("the same draws sampled different tokens:\ngraph %v\nhost  %v", seqG, seqH)
	}
	// The sampled sequences, re-read in one full forward pass on the go backend, give the logits
	// each decode step saw.
	flat := make([]int32, 0, rows*length)
	for _, s := range seqG {
		flat = append(flat, s...)
	}
	full, err := pg.Logits(rows, length, flat)
	if err != nil {
		t.Fatal(err)
	}
	gd2 := px.NewDecoder(rows)
	worst := 0.0
	for q := range length {
		for r := range rows {
			tokG[r], pos[r] = seqG[r][q], int32(q)
		}
		lg, err := gd2.Step(tokG, pos)
		if err != nil {
			t.Fatal(err)
		}
		for r := range rows {
			d, _ := maxAbsDiff(t, lg[r*c.Vocab:(r+1)*c.Vocab], full[(r*length+q)*c.Vocab:(r*length+q+1)*c.Vocab])
			worst = math.Max(worst, d)
		}
	}
	t.Logf("sampled %d×%d tokens through both paths: graph decode on %s vs host decode %.3g, vs the go backend's full forward %.3g",
		rows, length, xlaName(), worstPaths, worst)
	if worst > xlaTol {
		t.Errorf("decode on %s differs from the go backend's forward pass by %.3g", xlaName(), worst)
	}
}

// A checkpoint written on one backend loads on the other, both ways: the weights arrive bit for
// bit, and the Adam state with them, so the next update agrees as one update does.
func TestXLACPUCheckpointAcrossBackends(t *testing.T) {
	c := xlaConfig()
	xla, gob := bothBackends(t)
	tb := policy.SyntheticBatch(c, 4, 16, 5)
	for _, dir := range []struct {
		name     string
		from, to backends.Backend
	}{{"xla to go", xla, gob}, {"go to xla", gob, xla}} {
		o := xlaOptions(c, nil)
		o.Seed = 21
		src, err := policy.New(dir.from, o)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := src.Update(tb, 1e-2); err != nil {
				t.Fatal(err)
			}
		}
		ckpt := filepath.Join(t.TempDir(), "ckpt")
		if err := src.Save(ckpt); err != nil {
			t.Fatal(err)
		}
		o.Seed = 22 // other weights, replaced by the load
		dst, err := policy.New(dir.to, o)
		if err != nil {
			t.Fatal(err)
		}
		if err := dst.Load(ckpt); err != nil {
			t.Fatalf("%s: %v", dir.name, err)
		}
		ws, _ := src.Weights()
		wd, _ := dst.Weights()
		if !reflect.DeepEqual(ws, wd) {
			t.Fatalf("%s: loaded weights differ from the saved ones", dir.name)
		}
		ss, err := src.Update(tb, 1e-2)
		if err != nil {
			t.Fatal(err)
		}
		sd, err := dst.Update(tb, 1e-2)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: next update's loss %.9g and %.9g", dir.name, ss.Loss, sd.Loss)
		if r := relDiff(sd.Loss, ss.Loss); r > xlaTol {
			t.Errorf("%s: next update's loss %.9g, saved policy's %.9g", dir.name, sd.Loss, ss.Loss)
		}
		// The Adam state came along: a fresh optimiser's first moment after this update would be
		// (1−β1)·∇ alone, without the β1-weighted moments of the two earlier steps.
		ms, md := adamFirstMoments(t, src), adamFirstMoments(t, dst)
		for name, m := range ms {
			if d, scale := maxAbsDiff(t, md[name], m); d > xlaTol*scale {
				t.Errorf("%s: Adam moment %s differs by %.3g after the next update", dir.name, name, d)
			}
		}
	}
}
