package compare

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func close(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(want) != math.IsNaN(got) || math.Abs(got-want) > tol {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// Student's t with 1, 2 and 3 degrees of freedom has closed-form tails: two-sided p-values
//
//	ν = 1: 1 − (2/π)·atan|t|
//	ν = 2: 1 − |t|/√(2 + t²)
//	ν = 3: 1 − (2/π)·(x/(1 + x²) + atan x), x = |t|/√3
func TestPairedTTestClosedForms(t *testing.T) {
	// d = 1, 2, 3, 4: mean 2.5, variance 5/3, t = 2.5/√(5/12), ν = 3.
	r := PairedTTest([]float64{1, 2, 3, 4})
	tt := 2.5 / math.Sqrt(5.0/12)
	x := tt / math.Sqrt(3)
	close(t, "t", r.T, tt, 1e-12)
	close(t, "df", r.DF, 3, 0)
	close(t, "p (ν=3)", r.P, 1-2/math.Pi*(x/(1+x*x)+math.Atan(x)), 1e-9)

	// n = 2: d = 0.1, 0.3: mean 0.2, sd 0.1·√2, t = 2, ν = 1.
	r = PairedTTest([]float64{0.1, 0.3})
	close(t, "t (n=2)", r.T, 2, 1e-12)
	close(t, "p (ν=1)", r.P, 1-2/math.Pi*math.Atan(2), 1e-9)

	// Negative differences: the same p, the sign on t. d = −0.1, 0, −0.2: t = −√3, ν = 2.
	r = PairedTTest([]float64{-0.1, 0, -0.2})
	close(t, "t (ν=2)", r.T, -math.Sqrt(3), 1e-9)
	close(t, "p (ν=2)", r.P, 1-math.Sqrt(3)/math.Sqrt(5), 1e-9)

	for _, d := range [][]float64{nil, {0.3}, {0, 0, 0}, {0.1, 0.1, 0.1}} {
		if r := PairedTTest(d); !math.IsNaN(r.T) || !math.IsNaN(r.P) || !math.IsNaN(r.DF) {
			t.Errorf("PairedTTest(%v) = %+v, want undefined", d, r)
		}
	}
}

// The exact p-values below are counted by hand over the 2ⁿ sign patterns.
func TestWilcoxonSignedRankExact(t *testing.T) {
	cases := []struct {
		name          string
		d             []float64
		n             int
		wPlus, wMinus float64
		p             float64
	}{
		// Six positive differences: only the all-positive of 64 patterns has W− = 0; two-sided 2/64.
		{"all ahead, n=6", []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, 6, 21, 0, 2.0 / 64},
		// Ranks 1 (−0.05), 2.5, 2.5 (the tie at 0.1), 4, 5: W− = 1; P(W− ≤ 1) = 2/32 ({}, {rank 1}).
		{"a tie, n=5", []float64{0.1, -0.05, 0.1, 0.2, 0.3}, 5, 14, 1, 4.0 / 32},
		// The zero is dropped: ranks 1 (−0.05), 2, 3, 4: P(W− ≤ 1) = 2/16.
		{"a zero, n=5", []float64{0.1, -0.05, 0, 0.2, 0.3}, 4, 9, 1, 4.0 / 16},
		// Two pairs, both ahead: W+ = 3 of 1 + 2; P(W+ ≥ 3) = 1/4, two-sided ½.
		{"n=2", []float64{0.2, 0.1}, 2, 3, 0, 0.5},
		// Symmetric: W+ = W− = 5 of 1+2+3+4; the p-value is capped at 1.
		{"balanced", []float64{0.1, -0.2, -0.3, 0.4}, 4, 5, 5, 1},
		// Ranks 1.5, 1.5 (the tie at 0.1, one each way), 3 (+), 4 (−): W+ = 4.5, W− = 5.5. Of the 16
		// patterns, W+ ≤ 4.5 in 8 (W+ ∈ {0, 1.5, 1.5, 3, 3, 4, 4.5, 4.5}, counted), so p = 2·8/16 = 1.
		{"tied signs", []float64{0.1, -0.1, 0.3, -0.4}, 4, 4.5, 5.5, 1},
	}
	for _, c := range cases {
		r := WilcoxonSignedRank(c.d)
		if r.N != c.n || r.WPlus != c.wPlus || r.WMinus != c.wMinus || r.Method != WilcoxonExact {
			t.Errorf("%s: n %d W+ %v W− %v %s, want n %d W+ %v W− %v exact", c.name, r.N, r.WPlus, r.WMinus, r.Method, c.n, c.wPlus, c.wMinus)
		}
		close(t, c.name+" p", r.P, c.p, 1e-12)
		close(t, c.name+" W", r.Stat, min(c.wPlus, c.wMinus), 0)
	}
	if r := WilcoxonSignedRank([]float64{0, 0}); r.N != 0 || !math.IsNaN(r.P) {
		t.Errorf("all zero: %+v, want no test", r)
	}
}

// Beyond the exact limits (more than 50 differences; more than 13 with ties) the p-value is the
// normal approximation with the tie correction, computed here from its formula by hand.
func TestWilcoxonSignedRankNormal(t *testing.T) {
	// 60 distinct differences ±i, the first 20 negative: W− = 210, W+ = 1830 − 210 = 1620.
	var d []float64
	for i := 1; i <= 60; i++ {
		v := float64(i)
		if i <= 20 {
			v = -v
		}
		d = append(d, v)
	}
	r := WilcoxonSignedRank(d)
	z := (1620 - 915) / math.Sqrt(60*61*121/24.0)
	if r.Method != WilcoxonNormal || r.WPlus != 1620 || r.WMinus != 210 {
		t.Errorf("n=60: %+v", r)
	}
	close(t, "n=60 p", r.P, math.Erfc(z/math.Sqrt2), 1e-12)

	// 14 differences in 7 tied pairs ±k, k = 1…7: |d| ties in pairs at ranks 1.5, 3.5, …, 13.5.
	// Negative: the pair at k = 1 and one of k = 2: W− = 1.5·2 + 3.5 = 6.5, W+ = 105 − 6.5 = 98.5.
	d = []float64{-1, -1, -2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7}
	r = WilcoxonSignedRank(d)
	v := 14*15*29/24.0 - 7*(8-2)/48.0
	z = (98.5 - 14*15/4.0) / math.Sqrt(v)
	if r.Method != WilcoxonNormal || r.WPlus != 98.5 || r.WMinus != 6.5 {
		t.Errorf("ties, n=14: %+v", r)
	}
	close(t, "ties n=14 p", r.P, math.Erfc(z/math.Sqrt2), 1e-12)
}

// The exact distribution counted by the recursion equals brute force over every sign pattern.
func TestSignRankExactBruteForce(t *testing.T) {
	d := []float64{0.3, -0.1, 0.1, 0.25, -0.25, 0.5, 0.05, -0.7, 0.3, 0.9, -0.05, 0.2}
	ranks, _ := absRanks(d)
	var wPlus float64
	for i, v := range d {
		if v > 0 {
			wPlus += ranks[i]
		}
	}
	n := len(d)
	le, ge := 0, 0
	for mask := 0; mask < 1<<n; mask++ {
		var w float64
		for i := range n {
			if mask>>i&1 == 1 {
				w += ranks[i]
			}
		}
		if w <= wPlus+1e-9 {
			le++
		}
		if w >= wPlus-1e-9 {
			ge++
		}
	}
	want := min(1, 2*float64(min(le, ge))/float64(int(1)<<n))
	close(t, "exact p", signRankExactP(ranks, wPlus), want, 1e-12)
	if r := WilcoxonSignedRank(d); r.Method != WilcoxonExact || math.Abs(r.P-want) > 1e-12 {
		t.Errorf("WilcoxonSignedRank: %+v, want exact p %v", r, want)
	}
}

func TestHolm(t *testing.T) {
	// m = 3 defined: 0.01·3 = 0.03; 0.03·2 = 0.06; 0.04·1 = 0.04 → max(0.06, 0.04) = 0.06.
	got := Holm([]float64{0.01, 0.04, 0.03, math.NaN()})
	want := []float64{0.03, 0.06, 0.06, math.NaN()}
	for i := range want {
		close(t, fmt.Sprintf("holm[%d]", i), got[i], want[i], 1e-15)
	}
	// Capped at 1.
	got = Holm([]float64{0.6, 0.7})
	close(t, "holm cap 0", got[0], 1, 0)
	close(t, "holm cap 1", got[1], 1, 0)
}

func TestTwoWay(t *testing.T) {
	// Rows (methods) 1 2 3 and 2 4 6: grand mean 3, method means 2 and 4, seed means 1.5, 3, 4.5;
	// SS method 3·(1 + 1) = 6, SS seed 2·(2.25 + 0 + 2.25) = 9, SS total 16, residual 1 (residuals
	// ±0.5 and 0), on (2−1)(3−1) = 2 degrees of freedom; MS seed 4.5, so the seed SD is √((4.5 − 0.5)/2).
	d, ok := TwoWay([][]float64{{1, 2, 3}, {2, 4, 6}})
	if !ok {
		t.Fatal("not decomposed")
	}
	close(t, "ss total", d.SSTotal, 16, 1e-12)
	close(t, "ss method", d.SSMethod, 6, 1e-12)
	close(t, "ss seed", d.SSSeed, 9, 1e-12)
	close(t, "ss resid", d.SSResid, 1, 1e-12)
	close(t, "resid sd", d.ResidSD, math.Sqrt(0.5), 1e-12)
	close(t, "seed sd", d.SeedSD, math.Sqrt(2), 1e-12)
	seed, method, resid := d.Shares()
	close(t, "seed share", seed, 9.0/16, 1e-12)
	close(t, "method share", method, 6.0/16, 1e-12)
	close(t, "resid share", resid, 1.0/16, 1e-12)
	if _, ok := TwoWay([][]float64{{1, 2, 3}}); ok {
		t.Error("one method decomposed")
	}
	if _, ok := TwoWay([][]float64{{1}, {2}}); ok {
		t.Error("one seed decomposed")
	}
}

// Textbook sample sizes (Cohen 1988; G*Power), two-sided α = 0.05, power 0.8: a one-sample (or
// paired) t-test needs 34 for effect size 0.5 and 10 for 1; a two-sample t-test 64 and 17 per group.
func TestSampleSizes(t *testing.T) {
	for _, c := range []struct {
		effect      float64
		paired, arm float64
	}{{0.5, 34, 64}, {1, 10, 17}} {
		if got := SeedsNeeded(c.effect*0.1, 0.1, 0.05, 0.8); got != c.paired {
			t.Errorf("paired, effect %v: %v, want %v", c.effect, got, c.paired)
		}
		if got := RunsPerArmNeeded(c.effect*0.1, 0.1, 0.05, 0.8); got != c.arm {
			t.Errorf("two-sample, effect %v: %v, want %v", c.effect, got, c.arm)
		}
	}
	if !math.IsNaN(SeedsNeeded(0.05, 0, 0.05, 0.8)) || !math.IsNaN(RunsPerArmNeeded(0, 0.1, 0.05, 0.8)) {
		t.Error("a zero SD or effect gives a sample size")
	}
}

// pairedRun writes a run whose success is start before training and final after.
func pairedRun(t *testing.T, root, env, method string, seed uint64, start, final float64, initSHA, extra string) string {
	t.Helper()
	return fakeRun{name: fmt.Sprintf("%s-%s-s%d", env, method, seed), env: env, estimator: method, seed: seed,
		iterations: 10, evalEvery: 5, stepsPerIter: constSteps(100), initSHA: initSHA, extraConfig: extra,
		success: func(i int) float64 {
			if i == 0 {
				return start
			}
			return final
		}}.write(t, root)
}

func loadDirs(t *testing.T, dirs []string) []*Run {
	t.Helper()
	runs, err := LoadRuns(dirs)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// Hand-computed pairs: grpo 0.5, 0.6, 0.7 against graft 0.6, 0.6, 0.9 (seeds 1–3) give the
// differences 0.1, 0 and 0.2: mean 0.1, median 0.1, ahead 2, tied 1, behind 0; t = 0.1/(0.1/√3)
// = √3 on 2 degrees of freedom, p = 1 − √3/√5; Wilcoxon drops the zero, ranks 1 and 2 both ahead,
// W+ = 3: p = 2·¼ = ½, exact. graft's seed 4 has no grpo run, and grpo's seed 5 has no partner:
// both are named and left out.
func TestComparePaired(t *testing.T) {
	root := t.TempDir()
	var dirs []string
	for i, f := range []float64{0.5, 0.6, 0.7} {
		dirs = append(dirs, pairedRun(t, root, "maze", "grpo", uint64(i+1), 0.3, f, "", ""))
	}
	dirs = append(dirs, pairedRun(t, root, "maze", "grpo", 5, 0.3, 0.8, "", ""))
	for i, f := range []float64{0.6, 0.6, 0.9, 0.4} {
		dirs = append(dirs, pairedRun(t, root, "maze", "graft", uint64(i+1), 0.3, f, "", ""))
	}
	c, err := Compare(loadDirs(t, dirs), Options{Bootstrap: Bootstrap{Resamples: 400}})
	if err != nil {
		t.Fatal(err)
	}
	if c.NoPairs != "" || len(c.Pairs) != 3 {
		t.Fatalf("pairs %d (%s), want 3", len(c.Pairs), c.NoPairs)
	}
	rows := c.PairedRows("maze", MeasureFinal)
	if len(rows) != 1 {
		t.Fatalf("%d paired rows, want 1", len(rows))
	}
	r := rows[0]
	if r.Method != "graft" || r.N != 3 || r.Won != 2 || r.Tied != 1 || r.Lost != 0 {
		t.Errorf("row %+v", r)
	}
	close(t, "mean", r.Mean.Value, 0.1, 1e-12)
	close(t, "median", r.Median, 0.1, 1e-12)
	close(t, "sd", r.SD, 0.1, 1e-12)
	close(t, "t", r.T.T, math.Sqrt(3), 1e-9)
	close(t, "p", r.T.P, 1-math.Sqrt(3)/math.Sqrt(5), 1e-9)
	close(t, "holm (one method: unchanged)", r.THolm, r.T.P, 0)
	close(t, "wilcoxon p", r.Wilcoxon.P, 0.5, 1e-12)
	if r.Wilcoxon.Method != WilcoxonExact || r.Wilcoxon.N != 2 {
		t.Errorf("wilcoxon %+v", r.Wilcoxon)
	}
	// The t interval: 0.1 ± t(0.975, 2)·0.1/√3, t(0.975, 2) = 4.302652729911275.
	half := 4.302652729911275 * 0.1 / math.Sqrt(3)
	close(t, "t interval lo", r.TInterval.Lo, 0.1-half, 1e-9)
	close(t, "t interval hi", r.TInterval.Hi, 0.1+half, 1e-9)
	// The bootstrap resamples the three differences: its interval lies within [0, 0.2].
	if r.Mean.Lo < 0 || r.Mean.Hi > 0.2+1e-12 || r.Mean.Lo > r.Mean.Hi {
		t.Errorf("bootstrap interval [%v, %v] outside the differences' range", r.Mean.Lo, r.Mean.Hi)
	}
	if len(c.Unpaired) != 2 || !strings.Contains(c.Unpaired[0], "maze-graft-s4") || !strings.Contains(c.Unpaired[0], "grpo has no run with seed 4") ||
		!strings.Contains(c.Unpaired[1], "maze-grpo-s5") {
		t.Errorf("unpaired %q", c.Unpaired)
	}
	// Equal starts: the paired gains equal the paired finals.
	g := c.PairedRows("maze", MeasureGain)
	if len(g) != 1 || math.Abs(g[0].Mean.Value-0.1) > 1e-12 || !c.startsEqual() {
		t.Errorf("gain rows %+v", g)
	}
	// Gains per cell: grpo 0.2, 0.3, 0.4, 0.5 (mean 0.35); graft 0.3, 0.3, 0.6, 0.1 (0.325).
	for _, gr := range c.Gains {
		want := map[string]float64{"grpo": 0.35, "graft": 0.325}[gr.Method]
		if gr.Env == "maze" {
			close(t, gr.Method+" gain", gr.Gain, want, 1e-12)
			close(t, gr.Method+" start", gr.Start, 0.3, 1e-12)
		}
	}
	// The variance decomposition uses the three seeds both methods ran: 2 × 3.
	if len(c.Variance) != 1 || len(c.Variance[0].Seeds) != 3 || len(c.Variance[0].Methods) != 2 {
		t.Fatalf("variance %+v", c.Variance)
	}
	// y = (0.5, 0.6, 0.7; 0.6, 0.6, 0.9): grand 0.65, method means 0.6, 0.7 → SS method 3·2·0.05² = 0.015.
	close(t, "ss method", c.Variance[0].SSMethod, 0.015, 1e-12)

	dir := t.TempDir()
	if err := WriteReport(dir, c); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, ReportMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Paired comparison against grpo", "3 pairs in 1 environment(s)", "| maze | graft | 3 | +0.100 [",
		"2 / 1 / 0", "1.73 (2.00): 0.225", "| 0: 0.5 (exact)", "### Runs left out of the pairing", "grpo has no run with seed 4",
		"### Variance decomposition", "| maze | 2 × 3 |", "## Gain over the start", "| maze | grpo | 4 | 0.300 | 0.650 | +0.350 |",
		"paired differences of gains equal those of the final scores", "## Results per environment (unpaired)", PairedCSV} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	paired := readCSV(t, filepath.Join(dir, PairedCSV))
	if len(paired) != 3 || paired[1][0] != MeasureFinal || paired[1][1] != "maze" || paired[1][2] != "graft" || paired[2][0] != MeasureGain {
		t.Errorf("paired.csv %q", paired)
	}
	runsCSV := readCSV(t, filepath.Join(dir, RunsCSV))
	if h := runsCSV[0]; h[11] != "start" || h[12] != "gain" || h[13] != "warm_start" || runsCSV[1][13] != "random" {
		t.Errorf("runs.csv %q / %q", h, runsCSV[1])
	}
}

// Runs of one seed that start from different warm starts, or from one summary.json does not
// record, are never paired; with no pair left the report says why.
func TestComparePairedWarmStarts(t *testing.T) {
	root := t.TempDir()
	sft := "sft:\n  demos: 64\n"
	dirs := []string{
		pairedRun(t, root, "maze", "grpo", 1, 0.3, 0.5, "aaaa1111", sft),
		pairedRun(t, root, "maze", "graft", 1, 0.3, 0.6, "bbbb2222", sft),
		pairedRun(t, root, "maze", "grpo", 2, 0.3, 0.5, "cccc3333", sft),
		pairedRun(t, root, "maze", "graft", 2, 0.3, 0.6, "", sft), // warm start not recorded
	}
	c, err := Compare(loadDirs(t, dirs), Options{Bootstrap: Bootstrap{Resamples: 100}})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Pairs) != 0 || c.NoPairs == "" || len(c.Paired) != 0 || len(c.Variance) != 0 {
		t.Fatalf("pairs %d, no-pairs %q, rows %d", len(c.Pairs), c.NoPairs, len(c.Paired))
	}
	all := strings.Join(c.Unpaired, "\n")
	for _, want := range []string{"maze-graft-s1", "warm start bbbb2222", "warm start aaaa1111", "maze-graft-s2", "unknown: summary.json records none"} {
		if !strings.Contains(all, want) {
			t.Errorf("unpaired lacks %q:\n%s", want, all)
		}
	}
	dir := t.TempDir()
	if err := WriteReport(dir, c); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, ReportMarkdown))
	if !strings.Contains(string(md), "No paired table: no run of another method shares a seed and initial weights") {
		t.Error("report.md does not say why there is no paired table")
	}

	// The same warm start pairs them; the aggregate over two environments is stratified.
	root = t.TempDir()
	dirs = nil
	for _, env := range []string{"maze", "keydoor"} {
		for s := uint64(1); s <= 3; s++ {
			h := fmt.Sprintf("%s%04d", env, s)
			dirs = append(dirs, pairedRun(t, root, env, "grpo", s, 0.2, 0.4, h, sft),
				pairedRun(t, root, env, "graft", s, 0.2, 0.4+0.05*float64(s), h, sft))
		}
	}
	c, err = Compare(loadDirs(t, dirs), Options{Bootstrap: Bootstrap{Resamples: 200}})
	if err != nil {
		t.Fatal(err)
	}
	agg := c.PairedRows(AllEnvs, MeasureFinal)
	if len(c.Pairs) != 6 || len(agg) != 1 || agg[0].N != 6 || agg[0].Envs != 2 || agg[0].Won != 6 {
		t.Fatalf("pairs %d, aggregate %+v", len(c.Pairs), agg)
	}
	close(t, "aggregate mean", agg[0].Mean.Value, 0.1, 1e-12)
	// Within each environment the differences 0.05, 0.10, 0.15 all have the same mean, and
	// resampling within environments keeps each one's mean in [0.05, 0.15].
	if agg[0].Mean.Lo < 0.05-1e-12 || agg[0].Mean.Hi > 0.15+1e-12 {
		t.Errorf("aggregate interval [%v, %v]", agg[0].Mean.Lo, agg[0].Mean.Hi)
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
