package audit

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// syntheticSteps returns n audited steps of one estimator whose advantage is the truth plus
// independent noise, Â = A + σ·ε with A, ε standard normal and σ = √(1/r² − 1), so that the
// population correlation of Â and A is r. The steps are spread evenly over the four strata, each
// with the weight w of its stratum (nil: 1).
func syntheticSteps(n int, r float64, seed uint64, w []float64) []StepResult {
	rng := rand.New(rand.NewPCG(seed, 7))
	sigma := math.Sqrt(1/(r*r) - 1)
	steps := make([]StepResult, n)
	for i := range steps {
		a := rng.NormFloat64()
		h := i % NumStrata
		steps[i] = StepResult{Stratum: StratumName(h), Weight: 1, A: Num(a), ASE: 0.01,
			Est: []float64{a + sigma*rng.NormFloat64()}}
		if w != nil {
			steps[i].Weight = w[h]
		}
	}
	return steps
}

// analyticSE is the large-sample standard error of a Pearson correlation r of n bivariate
// normal pairs, (1 − r²)/√(n − 1).
func analyticSE(r float64, n int) float64 { return (1 - r*r) / math.Sqrt(float64(n-1)) }

// On n = 400 steps with a known correlation the bootstrap SE of Pearson r is within 25 % of the
// analytic large-sample SE; each stratum's (100 steps, unweighted) is within 40 % of its own
// (the bootstrap's own sampling error is larger at n = 100); Spearman's is within 25 % of the normal-theory approximation (1 − ρ²)·√(1.06/(n − 3))
// (Fieller et al.). With unequal stratum weights the weighted correlations have the analytic
// SE of Kish's effective sample size (Σw)²/Σw² instead of n.
func TestBootstrapSEAnalytic(t *testing.T) {
	const n = 400
	for _, c := range []struct {
		r float64
		w []float64
	}{{0.2, nil}, {0.5, nil}, {0.8, nil}, {0.5, []float64{3, 1, 2, 1}}} {
		_, ms := compareAll(syntheticSteps(n, c.r, uint64(100*c.r), c.w), []string{"noisy"}, 2, DefaultBootstrap, 1)
		m := ms[0]
		r, se := float64(m.Pearson), float64(m.PearsonSE)
		neff := n
		if c.w != nil {
			var sw, sw2 float64
			for i := range n {
				sw, sw2 = sw+c.w[i%NumStrata], sw2+c.w[i%NumStrata]*c.w[i%NumStrata]
			}
			neff = int(math.Round(sw * sw / sw2))
		}
		want := analyticSE(r, neff)
		t.Logf("r = %.1f (weights %v): sample r %.3f, bootstrap SE %.4f, analytic %.4f (ratio %.3f); ρ %.3f, SE %.4f",
			c.r, c.w, r, se, want, se/want, float64(m.Spearman), float64(m.SpearmanSE))
		if !(math.Abs(se/want-1) <= 0.25) {
			t.Errorf("r = %.1f: bootstrap SE %.4f, analytic %.4f: more than 25 %% apart", c.r, se, want)
		}
		rho := float64(m.Spearman)
		if wantS := (1 - rho*rho) * math.Sqrt(1.06/float64(neff-3)); !(math.Abs(float64(m.SpearmanSE)/wantS-1) <= 0.25) {
			t.Errorf("r = %.1f: Spearman SE %.4f, approximation %.4f: more than 25 %% apart", c.r, m.SpearmanSE, wantS)
		}
		if len(m.ByStratumSE) != NumStrata {
			t.Fatalf("%d stratum SEs", len(m.ByStratumSE))
		}
		for h, v := range m.ByStratum {
			want := analyticSE(float64(v), n/NumStrata)
			if got := float64(m.ByStratumSE[h]); !(math.Abs(got/want-1) <= 0.4) {
				t.Errorf("r = %.1f, stratum %s: r %.3f, SE %.4f, analytic %.4f", c.r, StratumName(h), v, got, want)
			}
		}
	}
}

// The same audit gives the same standard errors; another seed other ones, of the same size.
func TestBootstrapSEDeterministic(t *testing.T) {
	steps := syntheticSteps(200, 0.5, 3, []float64{2, 1, 1, 3})
	_, a := compareAll(steps, []string{"noisy"}, 2, DefaultBootstrap, 9)
	_, b := compareAll(steps, []string{"noisy"}, 2, DefaultBootstrap, 9)
	_, c := compareAll(steps, []string{"noisy"}, 2, DefaultBootstrap, 10)
	if a[0].PearsonSE != b[0].PearsonSE || a[0].SpearmanSE != b[0].SpearmanSE || a[0].ByStratumSE[2] != b[0].ByStratumSE[2] {
		t.Fatalf("same input, different SEs: %+v and %+v", a[0], b[0])
	}
	if c[0].PearsonSE == a[0].PearsonSE || math.Abs(float64(c[0].PearsonSE/a[0].PearsonSE)-1) > 0.15 {
		t.Errorf("seed 10: SE %g against %g with seed 9", c[0].PearsonSE, a[0].PearsonSE)
	}
	// The correlations themselves do not depend on the bootstrap.
	if a[0].Pearson != c[0].Pearson || a[0].Spearman != c[0].Spearman {
		t.Error("the bootstrap changed a correlation")
	}
}

// The SE shrinks as 1/√n: four times the steps, about half the SE (√(399/99) ≈ 2.01). Each SE
// is the mean over five data sets, so that the ratio does not hinge on one draw.
func TestBootstrapSEShrinks(t *testing.T) {
	var p, s [2]float64
	for k := range uint64(5) {
		for i, n := range []int{100, 400} {
			_, ms := compareAll(syntheticSteps(n, 0.5, 20+10*k+uint64(i), nil), []string{"noisy"}, 2, DefaultBootstrap, 1)
			p[i] += float64(ms[0].PearsonSE) / 5
			s[i] += float64(ms[0].SpearmanSE) / 5
		}
	}
	for _, c := range []struct {
		name string
		se   [2]float64
	}{{"Pearson", p}, {"Spearman", s}} {
		ratio := c.se[0] / c.se[1]
		t.Logf("%s: mean SE %.4f at n = 100, %.4f at n = 400: ratio %.2f", c.name, c.se[0], c.se[1], ratio)
		if !(ratio >= 1.6 && ratio <= 2.5) {
			t.Errorf("%s: SE ratio n = 100 / n = 400 is %.2f, want 1.6..2.5", c.name, ratio)
		}
	}
}

// The bootstrap's correlations on draw counts equal the correlations of the repeated steps.
func TestWeightedCorrRepetition(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5, 2}
	y := []float64{5, 6, 7, 8, 7, 6}
	k := []float64{2, 0, 1, 3, 1, 1}
	w := []float64{1, 2, 1, 0.5, 1, 3}
	var xr, yr, wr []float64
	kw := make([]float64, len(x))
	for i := range x {
		kw[i] = k[i] * w[i]
		for range int(k[i]) {
			xr, yr, wr = append(xr, x[i]), append(yr, y[i]), append(wr, w[i])
		}
	}
	if a, b := weightedCorr(x, y, kw, nil), Pearson(xr, yr, wr); !near(a, b, 1e-12) {
		t.Errorf("Pearson on counts %g, on the repeated steps %g", a, b)
	}
	rx, ry := ranksOrdered(x, sortOrder(x), kw), ranksOrdered(y, sortOrder(y), kw)
	if a, b := weightedCorr(rx, ry, kw, nil), Spearman(xr, yr, wr); !near(a, b, 1e-12) {
		t.Errorf("Spearman on counts %g, on the repeated steps %g", a, b)
	}
	// Constant over the drawn points (weight > 0), or fewer than two: undefined.
	if v := weightedCorr(x, y, []float64{0, 1, 0, 0, 0, 1}, nil); !math.IsNaN(v) {
		t.Errorf("constant draw: %g", v)
	}
	if v := weightedCorr(x, y, nil, []int{3}); !math.IsNaN(v) {
		t.Errorf("one point: %g", v)
	}
}

// An audit.json written before the standard errors existed reads them as NaN and the report
// shows the bare correlations; a new one round-trips them.
func TestMetricsSEJSON(t *testing.T) {
	old := `{"label":"grpo","pearson":0.25,"spearman":0.2,"sign_agreement":0.8,"scale":1,"mse":0.1,"nmse":0.9,"pearson_by_stratum":[0.1,null,0.3,0.4],"slices":[]}`
	var m Metrics
	if err := json.Unmarshal([]byte(old), &m); err != nil {
		t.Fatal(err)
	}
	if m.Pearson != 0.25 || !math.IsNaN(float64(m.PearsonSE)) || !math.IsNaN(float64(m.SpearmanSE)) || m.ByStratumSE != nil {
		t.Fatalf("old metrics read as %+v", m)
	}
	r := Result{Metrics: []Metrics{m}, Strata: []StratumInfo{{Name: StratumFailureEarly}, {Name: StratumFailureLate}, {Name: StratumSuccessEarly}, {Name: StratumSuccessLate}}}
	if row := r.ReportTable()[1]; row[1] != "0.250" || row[2] != "0.200" {
		t.Errorf("report row of an old audit: %v", row)
	}
	if row := r.Table()[1]; row[2] != "n/a" || row[4] != "n/a" {
		t.Errorf("table row of an old audit: %v", row)
	}
	if md := r.Markdown(); !strings.Contains(md, "| grpo | 0.250 | 0.200 |") || !strings.Contains(md, "| grpo | 0.100 | n/a | 0.300 | 0.400 |") {
		t.Errorf("audit.md of an old audit:\n%s", md)
	}

	m.PearsonSE, m.SpearmanSE, m.ByStratumSE = 0.04, Num(math.NaN()), []Num{0.1, Num(math.NaN()), 0.2, 0.3}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"pearson_se":0.04,"spearman_se":null`) || !strings.Contains(string(data), `"pearson_by_stratum_se":[0.1,null,0.2,0.3]`) {
		t.Errorf("written as %s", data)
	}
	var back Metrics
	if err := json.Unmarshal(data, &back); err != nil || back.PearsonSE != 0.04 || !math.IsNaN(float64(back.SpearmanSE)) || len(back.ByStratumSE) != NumStrata {
		t.Fatalf("read back as %+v (%v)", back, err)
	}
	r.Metrics = []Metrics{back}
	if row := r.ReportTable()[1]; row[1] != "0.250 ± 0.040" || row[2] != "0.200" {
		t.Errorf("report row: %v", row)
	}
	if md := r.Markdown(); !strings.Contains(md, "| grpo | 0.250 ± 0.040 | 0.200 |") || !strings.Contains(md, "| grpo | 0.100 ± 0.100 | n/a | 0.300 ± 0.200 | 0.400 ± 0.300 |") {
		t.Errorf("audit.md:\n%s", md)
	}
}
