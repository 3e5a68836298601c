package grpo

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/graftrl/graftrl/rollout"
)

// ep builds a trajectory of task through the state keys ks[0] … ks[T] with outcome R (a success
// when R > 0).
func ep(task int, R float64, ks ...string) rollout.Trajectory {
	t := rollout.Trajectory{Task: task, Outcome: R, Success: R > 0}
	for k := 0; k+1 < len(ks); k++ {
		t.Steps = append(t.Steps, rollout.Step{Key: ks[k], NextKey: ks[k+1], Action: "to " + ks[k+1]})
	}
	return t
}

func batch(tasks int, ts ...rollout.Trajectory) *rollout.Batch {
	return &rollout.Batch{Tasks: tasks, Trajs: ts}
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// checkAdv compares advantages with want (one row per trajectory) within tol.
func checkAdv(t *testing.T, got rollout.Advantages, want [][]float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d trajectories, want %d", len(got), len(want))
	}
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("trajectory %d: got %d steps, want %d", i, len(got[i]), len(want[i]))
		}
		for k := range want[i] {
			if !near(got[i][k], want[i][k], tol) {
				t.Errorf("A[%d][%d] = %.9g, want %.9g (±%g)", i, k, got[i][k], want[i][k], tol)
			}
		}
	}
}

func mustGRPO(t *testing.T, o Options, dr bool) *GRPO {
	t.Helper()
	var g *GRPO
	var err error
	if dr {
		g, err = NewDrGRPO(o)
	} else {
		g, err = New(o)
	}
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestGRPOHandComputed(t *testing.T) {
	tiny := Options{Eps: 1e-12, Score: ScoreReturn, Std: StdPopulation}
	withPenalty := func(tr rollout.Trajectory, step int, r float64) rollout.Trajectory {
		tr.Steps[step].Reward = r
		return tr
	}
	truncated := func(tr rollout.Trajectory) rollout.Trajectory {
		tr.Truncated, tr.Outcome, tr.Success = true, 0, false
		return tr
	}
	cases := []struct {
		name string
		opts Options
		dr   bool
		b    *rollout.Batch
		want [][]float64
	}{{
		// R = [1, 0, 0, 1]: mean 0.5, population std 0.5 → ±1 on every step.
		name: "two of four succeed",
		opts: tiny,
		b:    batch(1, ep(0, 1, "s", "a", "g"), ep(0, 0, "s", "b"), ep(0, 0, "s", "a", "c", "d"), ep(0, 1, "s", "g")),
		want: [][]float64{{1, 1}, {-1}, {-1, -1, -1}, {1}},
	}, {
		// The default sample form: R = [1, 0, 0, 1], Σ(R − μ)² = 1, std = √(1/3) → ±√3/2.
		name: "sample std divides by N-1",
		opts: Options{Eps: 1e-12, Score: ScoreReturn, Std: StdSample},
		b:    batch(1, ep(0, 1, "s", "a", "g"), ep(0, 0, "s", "b"), ep(0, 0, "s", "a", "c", "d"), ep(0, 1, "s", "g")),
		want: [][]float64{{math.Sqrt(3) / 2, math.Sqrt(3) / 2}, {-math.Sqrt(3) / 2}, {-math.Sqrt(3) / 2, -math.Sqrt(3) / 2, -math.Sqrt(3) / 2}, {math.Sqrt(3) / 2}},
	}, {
		name: "Dr.GRPO does not divide",
		opts: tiny, dr: true,
		b:    batch(1, ep(0, 1, "s", "a", "g"), ep(0, 0, "s", "b"), ep(0, 0, "s", "a", "c", "d"), ep(0, 1, "s", "g")),
		want: [][]float64{{0.5, 0.5}, {-0.5}, {-0.5, -0.5, -0.5}, {0.5}},
	}, {
		// Task 1's rewards are all equal: no gradient, whatever task 0 does.
		name: "groups are per task",
		opts: tiny,
		b:    batch(2, ep(0, 1, "s", "g"), ep(1, 5, "s", "g"), ep(0, 0, "s", "x"), ep(1, 5, "s", "h", "g")),
		want: [][]float64{{1}, {0}, {-1}, {0, 0}},
	}, {
		name: "all succeed gives 0",
		opts: tiny,
		b:    batch(1, ep(0, 1, "s", "a", "g"), ep(0, 1, "s", "b", "c", "g")),
		want: [][]float64{{0, 0}, {0, 0, 0}},
	}, {
		name: "truncation is failure",
		opts: tiny,
		b:    batch(1, ep(0, 1, "s", "g"), truncated(ep(0, 1, "s", "a", "a"))),
		want: [][]float64{{1}, {-1, -1}},
	}, {
		// return: R = [1 − 0.5, 1]: mean 0.75, std 0.25.
		name: "score return counts the penalty",
		opts: tiny,
		b:    batch(1, withPenalty(ep(0, 1, "s", "s", "g"), 0, -0.5), ep(0, 1, "s", "g")),
		want: [][]float64{{-1, -1}, {1}},
	}, {
		name: "score outcome ignores the penalty",
		opts: Options{Eps: 1e-12, Score: ScoreOutcome, Std: StdPopulation},
		b:    batch(1, withPenalty(ep(0, 1, "s", "s", "g"), 0, -0.5), ep(0, 1, "s", "g")),
		want: [][]float64{{0, 0}, {0}},
	}, {
		// ε matters when std is small: A = 0.5·0.02/(0.01 + 0.01) … here (R − μ) = ±0.01, σ = 0.01.
		name: "eps in the denominator",
		opts: Options{Eps: 0.01, Score: ScoreOutcome, Std: StdPopulation},
		b:    batch(1, ep(0, 0.02, "s", "g"), ep(0, 0, "s", "h")),
		want: [][]float64{{0.5}, {-0.5}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			adv, d := mustGRPO(t, c.opts, c.dr).Estimate(c.b)
			checkAdv(t, adv, c.want, 1e-9)
			for _, k := range []string{"adv_mean", "adv_std", "adv_zero_share", "groups_all_equal"} {
				if _, ok := d[k]; !ok {
					t.Errorf("diagnostic %s missing", k)
				}
			}
		})
	}
}

func TestGRPOIgnoresErroredAndEmpty(t *testing.T) {
	bad := ep(0, 7, "s", "x")
	bad.Err = "env crashed"
	empty := ep(0, 0, "s") // zero steps, still a member of the group with R = 0
	b := batch(1, ep(0, 1, "s", "g"), bad, empty, ep(0, 0, "s", "h"))
	adv, d := mustGRPO(t, Options{Eps: 1e-12, Score: ScoreReturn, Std: StdPopulation}, false).Estimate(b)
	// Valid R = [1, 0, 0]: mean 1/3, population std √2/3 (the errored one is not a member).
	s := math.Sqrt(2) / 3
	checkAdv(t, adv, [][]float64{{(2.0 / 3) / s}, {0}, {}, {(-1.0 / 3) / s}}, 1e-9)
	if d["groups"] != 1 || d["groups_all_equal"] != 0 {
		t.Errorf("diagnostics %v", d)
	}
}

// TestGRPODefaultIsTorchStd checks the default against torch.std's semantics (unbiased=True) on a
// group of 8 with one success, the common case of a hard task: torch.std([1, 0, 0, 0, 0, 0, 0, 0])
// = √(Σ(R − μ)²/7) = √(0.875/7) = √0.125 = 0.35355339, so the success gets 0.875/√0.125 = 1.75·√2
// and every failure −0.125/√0.125 = −√0.125. The population form would give √(8/7) times more.
func TestGRPODefaultIsTorchStd(t *testing.T) {
	trajs := []rollout.Trajectory{ep(0, 1, "s", "g")}
	for range 7 {
		trajs = append(trajs, ep(0, 0, "s", "x", "y"))
	}
	o := DefaultOptions()
	if o.Std != StdSample {
		t.Fatalf("default std %q, want %q", o.Std, StdSample)
	}
	o.Eps = 1e-12
	adv, _ := mustGRPO(t, o, false).Estimate(batch(1, trajs...))
	want := [][]float64{{1.75 * math.Sqrt2}}
	for range 7 {
		want = append(want, []float64{-math.Sqrt(0.125), -math.Sqrt(0.125)})
	}
	checkAdv(t, adv, want, 1e-9)
	o.Std = StdPopulation
	pop, _ := mustGRPO(t, o, false).Estimate(batch(1, trajs...))
	if r := pop[0][0] / adv[0][0]; !near(r, math.Sqrt(8.0/7), 1e-9) {
		t.Errorf("population/sample = %.12g, want √(8/7) = %.12g", r, math.Sqrt(8.0/7))
	}
}

func TestGRPOName(t *testing.T) {
	if g, dr := mustGRPO(t, DefaultOptions(), false), mustGRPO(t, DefaultOptions(), true); g.Name() != "grpo" || dr.Name() != "drgrpo" {
		t.Errorf("names %q, %q", g.Name(), dr.Name())
	}
}

func TestGRPOAllEqualShare(t *testing.T) {
	b := batch(3, ep(0, 1, "s", "g"), ep(0, 1, "s", "g"), ep(1, 0, "s", "g"), ep(1, 1, "s", "g"), ep(2, 0, "s", "x"))
	_, d := mustGRPO(t, DefaultOptions(), false).Estimate(b)
	if !near(d["groups_all_equal"], 2.0/3, 1e-12) {
		t.Errorf("groups_all_equal = %g, want 2/3", d["groups_all_equal"])
	}
}

func TestOptionsValidate(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string // substrings of the error
	}{
		{"eps zero", Options{Eps: 0, Score: ScoreReturn, Std: StdSample}.Validate(), `key "eps": value 0 is out of range (allowed finite numbers > 0)`},
		{"eps NaN", Options{Eps: math.NaN(), Score: ScoreReturn, Std: StdSample}.Validate(), `key "eps": value NaN is out of range`},
		{"score", Options{Eps: 1, Score: "reward", Std: StdSample}.Validate(), `key "score": value "reward" is not allowed (allowed return, outcome)`},
		{"std", Options{Eps: 1, Score: ScoreReturn, Std: "unbiased"}.Validate(), `key "std": value "unbiased" is not allowed (allowed sample, population)`},
		{"gigpo gamma", func() error { o := DefaultGiGPOOptions(); o.Gamma = 1.5; return o.Validate() }(), `key "gamma": value 1.5 is out of range (allowed [0, 1])`},
		{"gigpo norm", func() error { o := DefaultGiGPOOptions(); o.Norm = "std"; return o.Validate() }(), `key "norm": value "std" is not allowed (allowed mean_std_norm, mean_norm)`},
		{"gigpo omega", func() error { o := DefaultGiGPOOptions(); o.Omega = math.Inf(1); return o.Validate() }(), `key "omega": value +Inf is out of range (allowed finite numbers)`},
		{"gigpo eps", func() error { o := DefaultGiGPOOptions(); o.Eps = -1; return o.Validate() }(), `key "eps": value -1 is out of range`},
		{"gigpo score", func() error { o := DefaultGiGPOOptions(); o.Score = ""; return o.Validate() }(), `key "score": value "" is not allowed`},
		{"gigpo std", func() error { o := DefaultGiGPOOptions(); o.Std = "unbiased"; return o.Validate() }(), `key "std": value "unbiased" is not allowed (allowed sample, population)`},
		{"gigpo std empty", func() error { o := DefaultGiGPOOptions(); o.Std = ""; return o.Validate() }(), `key "std": value "" is not allowed (allowed sample, population)`},
	}
	for _, c := range cases {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.name, c.err, c.want)
		}
	}
	if _, err := NewDrGRPO(Options{Eps: 0, Score: ScoreReturn}); err == nil || !strings.HasPrefix(err.Error(), `key "eps": value 0`) {
		t.Errorf("NewDrGRPO error %v, want it to name eps", err)
	}
	if err := DefaultOptions().Validate(); err != nil {
		t.Error(err)
	}
	if err := DefaultGiGPOOptions().Validate(); err != nil {
		t.Error(err)
	}
}

// Options decode from the snake_case keys of a config onto the defaults.
func TestOptionsYAML(t *testing.T) {
	o := DefaultGiGPOOptions()
	dec := yaml.NewDecoder(bytes.NewReader([]byte("gamma: 0.9\nnorm: mean_norm\nscore: outcome\n")))
	dec.KnownFields(true)
	if err := dec.Decode(&o); err != nil {
		t.Fatal(err)
	}
	want := GiGPOOptions{Gamma: 0.9, Omega: 1, Norm: MeanNorm, Std: StdSample, Eps: 1e-6, Score: ScoreOutcome}
	if o != want {
		t.Errorf("decoded %+v, want %+v", o, want)
	}
	o = DefaultGiGPOOptions()
	if err := yaml.Unmarshal([]byte("std: population\n"), &o); err != nil {
		t.Fatal(err)
	}
	want = GiGPOOptions{Gamma: 0.95, Omega: 1, Norm: MeanStdNorm, Std: StdPopulation, Eps: 1e-6, Score: ScoreReturn}
	if o != want {
		t.Errorf("decoded %+v, want %+v", o, want)
	}
	g := DefaultOptions()
	if err := yaml.Unmarshal([]byte("eps: 0.001\n"), &g); err != nil || g.Eps != 0.001 || g.Score != ScoreReturn {
		t.Errorf("decoded %+v, %v", g, err)
	}
}

func TestGroupNormalizer(t *testing.T) {
	var z GroupNormalizer
	x := []float64{1, 3, 5, 2, 2, -0.5, 1e-9}
	group := []int32{0, 0, 2, 3, 3, 4, 5}
	out := make([]float64, len(x))
	// Group 0: μ 2, population σ 1 → ∓1; 2, 4, 5 singletons; 3 all equal → 0; 1 empty.
	if n := z.Normalize(x, group, 6, MeanStdNorm, StdPopulation, 1e-12, 0, SingletonSign, out); n != 3 {
		t.Errorf("singletons = %d, want 3", n)
	}
	// The lone 1e-9 is a signal for eps 1e-12 and noise (→ 0) for eps 1e-6, below.
	checkRow(t, out, []float64{-1, 1, 1, 0, 0, -1, 1})
	z.Normalize(x, group, 6, MeanNorm, StdPopulation, 1e-6, 0, SingletonZero, out)
	checkRow(t, out, []float64{-1, 1, 0, 0, 0, 0, 0})
	z.Normalize(x, group, 6, MeanStdNorm, StdPopulation, 1e-6, 0, SingletonSign, out)
	checkRow(t, out, []float64{-1 / (1 + 1e-6), 1 / (1 + 1e-6), 1, 0, 0, -1, 0})
	// Sample σ of group 0: √((1 + 1)/(2 − 1)) = √2 → ∓1/√2; the rest as above (no group of two
	// or more unequal members).
	z.Normalize(x, group, 6, MeanStdNorm, StdSample, 1e-12, 0, SingletonSign, out)
	checkRow(t, out, []float64{-1 / math.Sqrt2, 1 / math.Sqrt2, 1, 0, 0, -1, 1})
}

// The sample form divides Σ(x − μ)² by n − 1 within each group of n ≥ 2; a singleton stays 0.
func TestGroupNormalizerSample(t *testing.T) {
	var z GroupNormalizer
	// Group 0 {1, 3}: μ 2, deviations ∓1, Σ 2, sample σ √(2/1) = √2 → ∓1/√2 (population: ∓1).
	// Group 1 {1, 2, 6}: μ 3, deviations −2, −1, 3, Σ 14, sample σ √(14/2) = √7 → −2/√7, −1/√7,
	// 3/√7 (population σ √(14/3): −2/√(14/3) …). Group 2 {5} alone → 0.
	x := []float64{1, 1, 3, 2, 6, 5}
	group := []int32{0, 1, 0, 1, 1, 2}
	out := make([]float64, len(x))
	if n := z.Normalize(x, group, 3, MeanStdNorm, StdSample, 1e-12, 0, SingletonZero, out); n != 1 {
		t.Errorf("singletons = %d, want 1", n)
	}
	s7 := math.Sqrt(7)
	checkRow(t, out, []float64{-1 / math.Sqrt2, -2 / s7, 1 / math.Sqrt2, -1 / s7, 3 / s7, 0})
	z.Normalize(x, group, 3, MeanStdNorm, StdPopulation, 1e-12, 0, SingletonZero, out)
	p3 := math.Sqrt(14.0 / 3)
	checkRow(t, out, []float64{-1, -2 / p3, 1, -1 / p3, 3 / p3, 0})
}

// Once its buffers have grown, Normalize allocates nothing, in either std form.
func TestGroupNormalizerAllocs(t *testing.T) {
	var z GroupNormalizer
	x := []float64{1, 3, 5, 2, 2, -0.5, 1e-9}
	group := []int32{0, 0, 2, 3, 3, 4, 5}
	out := make([]float64, len(x))
	z.Normalize(x, group, 6, MeanStdNorm, StdSample, 1e-6, 1e-9, SingletonSign, out)
	allocs := testing.AllocsPerRun(100, func() {
		z.Normalize(x, group, 6, MeanStdNorm, StdSample, 1e-6, 1e-9, SingletonSign, out)
		z.Normalize(x, group, 6, MeanStdNorm, StdPopulation, 1e-6, 0, SingletonZero, out)
	})
	if allocs != 0 {
		t.Errorf("%g allocations per call, want 0", allocs)
	}
}

// flat > 0 gives 0 to every member of a group whose σ ≤ flat, and only then: members that differ
// by rounding are not divided up to ±(x − μ)/ε.
func TestGroupNormalizerFlat(t *testing.T) {
	var z GroupNormalizer
	// Group 0 {0.5 − 1e-12, 0.5 + 1e-12}: population σ 1e-12 ≤ 1e-9 → 0, 0 (with flat 0:
	// ∓1e-12/(1e-12 + 1e-6) ≈ ∓1e-6). Group 1 {0, 1e-8}: σ 5e-9 > 1e-9 → ∓5e-9/(5e-9 + 1e-6).
	// Group 2 {1, 1, 1}: exactly equal → 0 under either flat. Group 3 {0.3} alone: sign 1.
	x := []float64{0.5 - 1e-12, 0.5 + 1e-12, 0, 1e-8, 1, 1, 1, 0.3}
	group := []int32{0, 0, 1, 1, 2, 2, 2, 3}
	out := make([]float64, len(x))
	z.Normalize(x, group, 4, MeanStdNorm, StdPopulation, 1e-6, 1e-9, SingletonSign, out)
	g1 := 5e-9 / (5e-9 + 1e-6)
	want := []float64{0, 0, -g1, g1, 0, 0, 0, 1}
	for i := range want {
		if !near(out[i], want[i], 1e-15) {
			t.Errorf("flat 1e-9: out[%d] = %.17g, want %.17g", i, out[i], want[i])
		}
	}
	if out[0] != 0 || out[1] != 0 {
		t.Errorf("flat 1e-9: group 0 gives %g, %g; want exactly 0", out[0], out[1])
	}
	z.Normalize(x, group, 4, MeanStdNorm, StdPopulation, 1e-6, 0, SingletonSign, out)
	if !(out[0] < -0.9e-6 && out[1] > 0.9e-6) || out[4] != 0 {
		t.Errorf("flat 0: group 0 gives %g, %g (want ≈ ∓1e-6), group 2 %g (want 0)", out[0], out[1], out[4])
	}
}

func checkRow(t *testing.T, got, want []float64) {
	t.Helper()
	for i := range want {
		if !near(got[i], want[i], 1e-11) {
			t.Errorf("out[%d] = %.12g, want %.12g", i, got[i], want[i])
		}
	}
}
