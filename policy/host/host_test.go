package host

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/policy"
	"github.com/graftrl/graftrl/policy/spec"
)

// hostTol is the agreement required between the host path and GoMLX on logits.
const hostTol = 1e-5

// hostOddConfig has sizes that are not multiples of 4 everywhere (d_model, head_dim, d_ff, vocab,
// max_len), to exercise the zero padding of the packed panels.
func hostOddConfig() spec.Config {
	return spec.Config{Vocab: 7, DModel: 6, Layers: 1, Heads: 2, DFF: 10, MaxLen: 9, InitStd: 0.5}
}

// hostTrainedPolicy returns a policy whose weights took a few Adam steps at a large learning rate, so
// that they are no longer the small initial values and the logits are O(1).
func hostTrainedPolicy(t testing.TB, c spec.Config, steps int) *policy.Policy {
	t.Helper()
	p := newTestPolicy(t, c)
	tb := policy.SyntheticBatch(c, 8, min(c.MaxLen, 32), 1)
	for range steps {
		if _, err := p.Update(tb, 3e-2); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func hostModelT(t testing.TB, p *policy.Policy) *Model {
	t.Helper()
	w, err := p.Weights()
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(p.Config(), w)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func hostRandomTokens(rng *rand.Rand, n, vocab int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(rng.IntN(vocab))
	}
	return out
}

// hostRowState says what a row feeds at one step of a decode schedule.
type hostRowState struct {
	active bool
	seq    int // 0 or 1: which token set
	pos    int
}

// hostDecodeSchedule drives rows at different offsets: row r idles for r%3 steps, decodes a first
// sequence of length − r%4 tokens, restarts at position 0 with a second sequence of length
// tokens, then idles until the last row is done.
func hostDecodeSchedule(rows, length int) [][]hostRowState {
	var steps [][]hostRowState
	for s := 0; ; s++ {
		st := make([]hostRowState, rows)
		busy := false
		for r := range rows {
			q := s - r%3
			l1 := length - r%4
			switch {
			case q < 0:
			case q < l1:
				st[r] = hostRowState{active: true, seq: 0, pos: q}
			case q < l1+length:
				st[r] = hostRowState{active: true, seq: 1, pos: q - l1}
			}
			busy = busy || st[r].active
		}
		if !busy {
			return steps
		}
		steps = append(steps, st)
	}
}

// hostCheckDecode runs the schedule through the host decoder and the GoMLX decoder and compares
// every active row's logits with the GoMLX full forward and with the GoMLX decoder.
func hostCheckDecode(t *testing.T, p *policy.Policy, h *Model, rows, length int, seed uint64) {
	t.Helper()
	c := p.Config()
	if length >= c.MaxLen {
		t.Fatalf("length %d must leave a scratch slot below max_len %d", length, c.MaxLen)
	}
	rng := rand.New(rand.NewPCG(seed, 3))
	toks := [2][]int32{hostRandomTokens(rng, rows*length, c.Vocab), hostRandomTokens(rng, rows*length, c.Vocab)}
	var full [2][]float32
	for i := range toks {
		var err error
		if full[i], err = p.Logits(rows, length, toks[i]); err != nil {
			t.Fatal(err)
		}
	}
	hd := h.NewDecoder(rows)
	gd := p.NewDecoder(rows)
	v := c.Vocab
	var vsFull, vsDec, maxAbs float64
	for _, st := range hostDecodeSchedule(rows, length) {
		tok, pos := make([]int32, rows), make([]int32, rows)
		gtok, gpos := make([]int32, rows), make([]int32, rows)
		active := make([]bool, rows)
		for r, s := range st {
			if s.active {
				tok[r], pos[r], active[r] = toks[s.seq][r*length+s.pos], int32(s.pos), true
				gtok[r], gpos[r] = tok[r], pos[r]
			} else {
				// Garbage the host decoder must not read; the GoMLX decoder has no mask and writes
				// its cache at a slot no active row reads.
				tok[r], pos[r] = -1, -7
				gpos[r] = int32(c.MaxLen - 1)
			}
		}
		hl, err := hd.Step(tok, pos, active)
		if err != nil {
			t.Fatal(err)
		}
		gl, err := gd.Step(gtok, gpos)
		if err != nil {
			t.Fatal(err)
		}
		for r, s := range st {
			if !s.active {
				continue
			}
			want := full[s.seq][(r*length+s.pos)*v:][:v]
			for j := range v {
				got := float64(hl[r*v+j])
				vsFull = math.Max(vsFull, math.Abs(got-float64(want[j])))
				vsDec = math.Max(vsDec, math.Abs(got-float64(gl[r*v+j])))
				maxAbs = math.Max(maxAbs, math.Abs(float64(want[j])))
			}
		}
	}
	t.Logf("max |logit| %.3g; max |Δ| host vs GoMLX forward %.3g, vs GoMLX decoder %.3g", maxAbs, vsFull, vsDec)
	if vsFull > hostTol || vsDec > hostTol {
		t.Errorf("host logits differ from GoMLX by %g (forward) / %g (decoder), want ≤ %g", vsFull, vsDec, hostTol)
	}
}

// The host decoder must reproduce the GoMLX forward pass and the GoMLX decoder, with rows at
// different positions, idle rows and restarts, for initial and trained weights.
func TestHostDecodeMatchesGoMLX(t *testing.T) {
	quick := benchConfig()
	cases := []struct {
		name         string
		c            spec.Config
		updates      int
		rows, length int
	}{
		{"small/init", smallConfig(), 0, 5, 10},
		{"small/trained", smallConfig(), 4, 5, 10},
		{"odd/trained", hostOddConfig(), 4, 4, 8},
		{"quickstart/init", quick, 0, 6, 100},
		{"quickstart/trained", quick, 5, 6, 100},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && tc.c.DModel > 16 {
				t.Skip("quickstart size in -short mode")
			}
			p := hostTrainedPolicy(t, tc.c, tc.updates)
			hostCheckDecode(t, p, hostModelT(t, p), tc.rows, tc.length, 11)
		})
	}
}

// Forward (position-by-position decoding) matches Policy.Logits.
func TestHostForward(t *testing.T) {
	c := smallConfig()
	p := hostTrainedPolicy(t, c, 2)
	h := hostModelT(t, p)
	rng := rand.New(rand.NewPCG(5, 5))
	const rows, length = 3, 12 // the whole context
	tokens := hostRandomTokens(rng, rows*length, c.Vocab)
	want, err := p.Logits(rows, length, tokens)
	if err != nil {
		t.Fatal(err)
	}
	got, err := h.Forward(rows, length, tokens)
	if err != nil {
		t.Fatal(err)
	}
	if d := hostMaxAbsDiff(got, want); d > hostTol {
		t.Fatalf("host forward differs from GoMLX by %g", d)
	}
	if _, err := h.Forward(1, c.MaxLen+1, make([]int32, c.MaxLen+1)); err == nil {
		t.Error("Forward accepted a sequence longer than max_len")
	}
}

func hostMaxAbsDiff(a, b []float32) float64 {
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(float64(a[i])-float64(b[i])))
	}
	return d
}

// Skipped rows keep their cache and leave the other rows' results unchanged: a decoder that
// pauses some rows for a step must give, bit for bit, what separate uninterrupted decoders give.
func TestHostInactiveRows(t *testing.T) {
	c := smallConfig()
	p := hostTrainedPolicy(t, c, 2)
	h := hostModelT(t, p)
	const rows, length = 5, 8
	rng := rand.New(rand.NewPCG(9, 9))
	tokens := hostRandomTokens(rng, rows*length, c.Vocab)
	want, err := h.Forward(rows, length, tokens) // every row decoded without pauses
	if err != nil {
		t.Fatal(err)
	}
	d := h.NewDecoder(rows)
	next := make([]int, rows) // next position of each row
	v := c.Vocab
	for step := 0; ; step++ {
		tok, pos := make([]int32, rows), make([]int32, rows)
		active := make([]bool, rows)
		done := true
		for r := range rows {
			// Row r pauses on steps where (step+r)%3 == 0.
			if next[r] < length && (step+r)%3 != 0 {
				tok[r], pos[r], active[r] = tokens[r*length+next[r]], int32(next[r]), true
			} else {
				tok[r], pos[r] = int32(c.Vocab+5), int32(c.MaxLen+5) // invalid: must not be read
			}
			done = done && next[r] == length
		}
		if done {
			break
		}
		before := slices.Clone(d.out)
		lg, err := d.Step(tok, pos, active)
		if err != nil {
			t.Fatal(err)
		}
		for r := range rows {
			got := lg[r*v : (r+1)*v]
			if !active[r] {
				if !slices.Equal(got, before[r*v:(r+1)*v]) {
					t.Fatalf("step %d: inactive row %d's logits were written", step, r)
				}
				continue
			}
			if !slices.Equal(got, want[(r*length+next[r])*v:][:v]) {
				t.Fatalf("step %d: row %d at position %d differs from an uninterrupted decode", step, r, next[r])
			}
			next[r]++
		}
	}
	// All rows inactive is a no-op.
	if _, err := d.Step(make([]int32, rows), make([]int32, rows), make([]bool, rows)); err != nil {
		t.Fatal(err)
	}
}

// Splitting rows across goroutines and chunks gives bit-identical logits to one goroutine.
func TestHostParallelMatchesSerial(t *testing.T) {
	c := benchConfig()
	c.MaxLen = 24
	h, err := New(c, initialWeights(t, c, 3)) // no GoMLX execution: keeps -race about this code
	if err != nil {
		t.Fatal(err)
	}
	const rows = 2*hostChunk + 5
	run := func(procs int) []float32 {
		prev := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(prev)
		d := h.NewDecoder(rows)
		var all []float32
		rng := rand.New(rand.NewPCG(4, 4))
		for s := range 20 {
			tok, pos := hostRandomTokens(rng, rows, c.Vocab), make([]int32, rows)
			for r := range pos {
				pos[r] = int32((s + r) % c.MaxLen)
			}
			lg, err := d.Step(tok, pos, nil)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, lg...)
		}
		return all
	}
	serial := run(1)
	for _, procs := range []int{2, 3} {
		if got := run(procs); !slices.Equal(got, serial) {
			t.Errorf("GOMAXPROCS=%d: logits differ from GOMAXPROCS=1 by %g", procs, hostMaxAbsDiff(got, serial))
		}
	}
}

// SetWeights after policy updates tracks the policy, in place.
func TestHostSetWeights(t *testing.T) {
	c := smallConfig()
	p := newTestPolicy(t, c)
	h := hostModelT(t, p)
	w1 := &h.layers[0].w1.panels[0]
	const rows, length = 4, 10
	rng := rand.New(rand.NewPCG(2, 2))
	tokens := hostRandomTokens(rng, rows*length, c.Vocab)
	before, err := h.Forward(rows, length, tokens)
	if err != nil {
		t.Fatal(err)
	}
	tb := policy.SyntheticBatch(c, 8, length, 1)
	for range 3 {
		if _, err := p.Update(tb, 3e-2); err != nil {
			t.Fatal(err)
		}
	}
	w, err := p.Weights()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.SetWeights(w); err != nil {
		t.Fatal(err)
	}
	if &h.layers[0].w1.panels[0] != w1 {
		t.Error("SetWeights reallocated the weights")
	}
	after, err := h.Forward(rows, length, tokens)
	if err != nil {
		t.Fatal(err)
	}
	want, err := p.Logits(rows, length, tokens)
	if err != nil {
		t.Fatal(err)
	}
	if d := hostMaxAbsDiff(after, want); d > hostTol {
		t.Errorf("after SetWeights host logits differ from the updated policy by %g", d)
	}
	if d := hostMaxAbsDiff(after, before); d < 1e-3 {
		t.Errorf("logits moved by only %g after three updates: weights not refreshed?", d)
	}
	// A failed refresh leaves the model unchanged.
	bad := slices.Clone(w)
	bad[3] = bad[3][:1]
	if err := h.SetWeights(bad); err == nil {
		t.Error("SetWeights accepted a truncated weight")
	}
	if again, _ := h.Forward(rows, length, tokens); !slices.Equal(again, after) {
		t.Error("a rejected SetWeights changed the model")
	}
}

func TestHostValidation(t *testing.T) {
	c := smallConfig()
	w := initialWeights(t, c, 1)
	wantErr := func(err error, substr string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), substr) {
			t.Errorf("error %v, want one mentioning %q", err, substr)
		}
	}
	_, err := New(c, w[:len(w)-1])
	wantErr(err, "weight arrays")
	short := slices.Clone(w)
	short[4] = short[4][1:]
	_, err = New(c, short)
	wantErr(err, "block0/wq")
	badCfg := c
	badCfg.Heads = 3
	_, err = New(badCfg, w)
	wantErr(err, "policy.heads")

	h, err := New(c, w)
	if err != nil {
		t.Fatal(err)
	}
	d := h.NewDecoder(2)
	ok := []int32{0, 0}
	_, err = d.Step([]int32{0}, ok, nil)
	wantErr(err, "needs 2 tokens")
	_, err = d.Step(ok, ok, []bool{true})
	wantErr(err, "active flags")
	_, err = d.Step([]int32{0, int32(c.Vocab)}, ok, nil)
	wantErr(err, "vocabulary")
	_, err = d.Step(ok, []int32{0, int32(c.MaxLen)}, nil)
	wantErr(err, "position")
	_, err = d.Step(ok, []int32{-1, 0}, nil)
	wantErr(err, "position")
	if _, err := d.Step([]int32{0, -3}, []int32{0, 99}, []bool{true, false}); err != nil {
		t.Errorf("inactive rows were validated: %v", err)
	}
}

func TestHostExp(t *testing.T) {
	tab := newExpTable()
	expf := func(x float32) float32 { return hostExpf(tab, x) }
	worst := 0.0
	for x := -87.0; x <= 88; x += 0.001 {
		got := float64(expf(float32(x)))
		want := math.Exp(float64(float32(x)))
		worst = math.Max(worst, math.Abs(got-want)/want)
	}
	t.Logf("expf: max relative error %.3g (float32 ulp %.3g)", worst, math.Pow(2, -23))
	if worst > 2.5e-7 {
		t.Errorf("expf relative error %g", worst)
	}
	if expf(-200) > 1e-37 || expf(-200) < 0 {
		t.Errorf("expf(-200) = %g", expf(-200))
	}
	if v := expf(200); math.IsInf(float64(v), 0) || v < 1e38 {
		t.Errorf("expf(200) = %g, want the clamped finite value", v)
	}
}

func TestHostGELU(t *testing.T) {
	tab := newExpTable()
	worst := 0.0
	for x := -12.0; x <= 12; x += 0.0007 {
		xf := float64(float32(x))
		u := math.Sqrt(2/math.Pi) * (xf + 0.044715*xf*xf*xf)
		want := 0.5 * xf * (1 + math.Tanh(u))
		worst = math.Max(worst, math.Abs(float64(hostGeluf(tab, float32(x)))-want)/math.Max(1, math.Abs(want)))
	}
	t.Logf("gelu: max error %.3g (relative, or absolute below 1)", worst)
	if worst > 5e-7 {
		t.Errorf("gelu error %g", worst)
	}
}

// hostExpf is e^x through expShifted.
func hostExpf(tab *expTable, x float32) float32 {
	s := [1]float32{min(x, expMaxArg)}
	expShifted(tab, s[:], 0)
	return s[0]
}

// hostGeluf is geluRows for one value.
func hostGeluf(tab *expTable, x float32) float32 {
	s := [1]float32{x}
	var tmp [1]float32
	geluRows(tab, s[:], 1, 1, 1, tmp[:])
	return s[0]
}

// hostReference64 is an independent float64 transcription of forward in policy/model.go for one row:
// logits [len(tokens)][vocab].
func hostReference64(c spec.Config, w [][]float32, tokens []int32) [][]float64 {
	d, hd := c.DModel, c.HeadDim()
	f64 := func(v []float32) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out
	}
	layerNorm := func(x []float64, g, b []float32) []float64 {
		var mean, vari float64
		for _, v := range x {
			mean += v
		}
		mean /= float64(len(x))
		for _, v := range x {
			vari += (v - mean) * (v - mean)
		}
		vari /= float64(len(x))
		out := make([]float64, len(x))
		for i, v := range x {
			out[i] = (v-mean)/math.Sqrt(vari+spec.LayerNormEps)*float64(g[i]) + float64(b[i])
		}
		return out
	}
	dense := func(x []float64, wm, b []float32) []float64 {
		out := f64(b)
		for j := range out {
			for i, v := range x {
				out[j] += v * float64(wm[i*len(out)+j])
			}
		}
		return out
	}
	xs := make([][]float64, len(tokens))
	for t, tok := range tokens {
		xs[t] = f64(w[0][int(tok)*d : int(tok+1)*d])
		for j, p := range w[1][t*d : (t+1)*d] {
			xs[t][j] += float64(p)
		}
	}
	for l := range c.Layers {
		p := w[2+16*l:]
		q, k, v := make([][]float64, len(xs)), make([][]float64, len(xs)), make([][]float64, len(xs))
		for t, x := range xs {
			a := layerNorm(x, p[0], p[1])
			q[t], k[t], v[t] = dense(a, p[2], p[3]), dense(a, p[4], p[5]), dense(a, p[6], p[7])
		}
		for t, x := range xs {
			ctx := make([]float64, d)
			for h := range c.Heads {
				s := make([]float64, t+1)
				top := math.Inf(-1)
				for u := range s {
					for i := h * hd; i < (h+1)*hd; i++ {
						s[u] += q[t][i] * k[u][i]
					}
					s[u] /= math.Sqrt(float64(hd))
					top = math.Max(top, s[u])
				}
				sum := 0.0
				for u := range s {
					s[u] = math.Exp(s[u] - top)
					sum += s[u]
				}
				for u := range s {
					for i := h * hd; i < (h+1)*hd; i++ {
						ctx[i] += s[u] / sum * v[u][i]
					}
				}
			}
			for j, y := range dense(ctx, p[8], p[9]) {
				x[j] += y
			}
			hid := dense(layerNorm(x, p[10], p[11]), p[12], p[13])
			for j, y := range hid {
				hid[j] = 0.5 * y * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(y+0.044715*y*y*y)))
			}
			for j, y := range dense(hid, p[14], p[15]) {
				x[j] += y
			}
		}
	}
	n := len(w)
	out := make([][]float64, len(xs))
	for t, x := range xs {
		out[t] = dense(layerNorm(x, w[n-4], w[n-3]), w[n-2], w[n-1])
	}
	return out
}

// The host path is at least as close to exact arithmetic as GoMLX: an independent check of the
// architecture, and the reason the host–GoMLX gap is GoMLX's own float32 rounding.
func TestHostMatchesFloat64Reference(t *testing.T) {
	for _, c := range []spec.Config{smallConfig(), hostOddConfig(), benchConfig()} {
		if testing.Short() && c.DModel > 16 {
			continue
		}
		p := hostTrainedPolicy(t, c, 4)
		h := hostModelT(t, p)
		w, err := p.Weights()
		if err != nil {
			t.Fatal(err)
		}
		rows, length := 3, min(c.MaxLen, 64)
		tokens := hostRandomTokens(rand.New(rand.NewPCG(3, 3)), rows*length, c.Vocab)
		gomlx, err := p.Logits(rows, length, tokens)
		if err != nil {
			t.Fatal(err)
		}
		host, err := h.Forward(rows, length, tokens)
		if err != nil {
			t.Fatal(err)
		}
		var errGoMLX, errHost float64
		for r := range rows {
			ref := hostReference64(c, w, tokens[r*length:(r+1)*length])
			for q := range length {
				for j, want := range ref[q] {
					i := (r*length+q)*c.Vocab + j
					errGoMLX = math.Max(errGoMLX, math.Abs(float64(gomlx[i])-want))
					errHost = math.Max(errHost, math.Abs(float64(host[i])-want))
				}
			}
		}
		t.Logf("d_model %d: max |logit − float64 reference|: host %.3g, GoMLX %.3g", c.DModel, errHost, errGoMLX)
		if errHost > hostTol || errHost > 2*errGoMLX+1e-6 {
			t.Errorf("d_model %d: host logits are %g from the float64 reference (GoMLX: %g)", c.DModel, errHost, errGoMLX)
		}
	}
}

// The Go loop of the attention scores (CPUs without FMA) computes the same logits as GoMLX.
func TestHostAttentionGoLoop(t *testing.T) {
	if !useFMA {
		t.Skip("the Go loop is what every test here runs already")
	}
	useFMA = false
	defer func() { useFMA = true }()
	c := hostOddConfig()
	p := hostTrainedPolicy(t, c, 2)
	h := hostModelT(t, p)
	tokens := hostRandomTokens(rand.New(rand.NewPCG(5, 5)), 2*c.MaxLen, c.Vocab)
	want, err := p.Logits(2, c.MaxLen, tokens)
	if err != nil {
		t.Fatal(err)
	}
	got, err := h.Forward(2, c.MaxLen, tokens)
	if err != nil {
		t.Fatal(err)
	}
	if d := hostMaxAbsDiff(got, want); d > hostTol {
		t.Fatalf("host logits with the Go attention loop differ from GoMLX by %g", d)
	}
}
