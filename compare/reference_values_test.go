package compare

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// The statistics against the numbers scipy, numpy, statsmodels and rliable give on small fixed
// inputs: reference_tables_test.go, written by scripts/interop/reference_values.py, whose comment
// says how each number was computed (`"$py" scripts/interop/reference_values.py` regenerates the
// table, `--check` compares it, with py the interop environment's python). The interop step
// (scripts/interop/run.sh) compares the same functions with the same libraries on the study's
// report; these tables let `go test` catch a regression there without Python.
//
// Tolerances: 1e-9 (absolute, or relative above 1) for what both sides compute in closed form or
// by exact counting (t, p, intervals, Wilcoxon, Holm, the analysis of variance), as the interop
// step allows; 1e-12 for the point estimates of rliable (sums and shares of the same scores).
// Sample sizes are integers and must be equal. Bootstrap intervals come from graftrl's own
// resamples (seed 0, 2000 resamples): each endpoint must lie in the range the table gives, where
// the interop step's comparison with rliable's bootstrap distribution, in probability, passes.

const (
	refExact = 1e-9
	refPoint = 1e-12
)

// refPaired is a paired comparison (x the method, y the baseline) with scipy's t-test and
// Wilcoxon test of it.
type refPaired struct {
	name                        string
	x, y                        []float64
	t, df, p, ciLo, ciHi, w, pW float64
}

// refWelch is a two-sample comparison with scipy's Welch t-test.
type refWelch struct {
	name     string
	x, y     []float64
	t, df, p float64
}

// refHolm is a list of p-values and statsmodels' Holm adjustment of it.
type refHolm struct{ p, adjusted []float64 }

// refScores are one method's scores (strata[env] its runs) with rliable's point estimates,
// scipy's trimmed means at refTrims and the profile at refTaus.
type refScores struct {
	name                   string
	strata                 [][]float64
	iqm, mean, median, gap float64
	trimmed, profile       []float64
}

// refPOI is rliable's probability of improvement of x over y.
type refPOI struct {
	name string
	x, y [][]float64
	p    float64
}

// refInterval is a bootstrap interval: the statistic (iqm, mean, median, gap, poi of x over y, or
// profile at tau) on strata x, rliable's point estimate, and the ranges in which graftrl's lower
// and upper endpoints pass the comparison with rliable's bootstrap distribution.
type refInterval struct {
	name, stat string
	x, y       [][]float64
	tau, value float64
	lo, hi     [2]float64
}

// refAnova is a table y[method][seed] with statsmodels' two-way analysis of variance.
type refAnova struct {
	name                                                string
	y                                                   [][]float64
	ssMethod, ssSeed, ssResid, ssTotal, residSD, seedSD float64
}

// refSampleSize is the smallest sample size scipy's noncentral t gives power 0.8 at level 0.05.
type refSampleSize struct {
	paired    bool
	delta, sd float64
	n         float64
}

// refCompare is a comparison of runs: finals[i][seed−1] of methods[i] (methods[0] the baseline),
// the paired rows of the others against it, and the analysis of variance of the finals.
type refCompare struct {
	methods []string
	finals  [][]float64
	rows    []refCompareRow
	anova   refAnova
}

// refCompareRow is one method's paired row by scipy and statsmodels.
type refCompareRow struct {
	method                                 string
	t, p, pHolm, ciLo, ciHi, w, pW, pWHolm float64
}

// refNear reports whether got equals want within tol, absolutely or, above 1, relatively; NaN
// equals NaN.
func refNear(got, want, tol float64) bool {
	if math.IsNaN(want) || math.IsNaN(got) {
		return math.IsNaN(want) && math.IsNaN(got)
	}
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

func refCheck(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if !refNear(got, want, tol) {
		t.Errorf("%s = %v, reference %v (difference %.3g, tolerance %g)", what, got, want, got-want, tol)
	}
}

func refDiffs(x, y []float64) []float64 {
	d := make([]float64, len(x))
	for i := range d {
		d[i] = x[i] - y[i]
	}
	return d
}

// The paired t-test, its interval (mean ± t₀.₉₇₅,ₙ₋₁·SD/√n, as Compare computes it) and the
// Wilcoxon signed-rank test against scipy, across its exact, permutation and normal cases.
func TestReferencePairedTests(t *testing.T) {
	for _, c := range refPairedCases {
		d := refDiffs(c.x, c.y)
		tt := PairedTTest(d)
		refCheck(t, c.name+": t", tt.T, c.t, refExact)
		refCheck(t, c.name+": df", tt.DF, c.df, 0)
		refCheck(t, c.name+": p", tt.P, c.p, refExact)
		lo, hi := refTInterval(d, tt.DF)
		refCheck(t, c.name+": interval lo", lo, c.ciLo, refExact)
		refCheck(t, c.name+": interval hi", hi, c.ciHi, refExact)
		w := WilcoxonSignedRank(d)
		refCheck(t, c.name+": Wilcoxon statistic", w.Stat, c.w, refExact)
		refCheck(t, c.name+": Wilcoxon p ("+w.Method+")", w.P, c.pW, refExact)
	}
}

// refTInterval is the paired t interval as Compare computes it (PairedRow.TInterval); the
// comparison of runs below checks Compare's own.
func refTInterval(d []float64, df float64) (lo, hi float64) {
	m, sd := Mean(d), stat.StdDev(d, nil)
	half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(0.975) * sd / math.Sqrt(float64(len(d)))
	return m - half, m + half
}

func TestReferenceWelch(t *testing.T) {
	for _, c := range refWelchCases {
		w := WelchTTest(c.x, c.y)
		refCheck(t, c.name+": t", w.T, c.t, refExact)
		refCheck(t, c.name+": df", w.DF, c.df, refExact)
		refCheck(t, c.name+": p", w.P, c.p, refExact)
	}
}

func TestReferenceHolm(t *testing.T) {
	for _, c := range refHolmCases {
		got := Holm(c.p)
		for i := range c.p {
			refCheck(t, fmt.Sprintf("Holm(%v)[%d]", c.p, i), got[i], c.adjusted[i], refExact)
		}
	}
}

// rliable's point estimates, scipy's trimmed means and the profile on score matrices.
func TestReferencePointEstimates(t *testing.T) {
	for _, c := range refScoreCases {
		s := Strata[float64](c.strata)
		all := pool(s, nil)
		refCheck(t, c.name+": IQM", IQM(all), c.iqm, refPoint)
		refCheck(t, c.name+": mean", Mean(all), c.mean, refPoint)
		refCheck(t, c.name+": aggregate median", AggregateMedian(s), c.median, refPoint)
		refCheck(t, c.name+": optimality gap", OptimalityGap(s, 1), c.gap, refPoint)
		for i, p := range refTrims {
			refCheck(t, fmt.Sprintf("%s: trimmed mean %v", c.name, p), TrimMean(all, p), c.trimmed[i], refPoint)
		}
		for i, tau := range refTaus {
			refCheck(t, fmt.Sprintf("%s: profile τ=%v", c.name, tau), ScoreFraction(s, tau), c.profile[i], refPoint)
		}
	}
	for _, c := range refPOICases {
		refCheck(t, "P("+c.name+")", ProbImprovement(c.x, c.y), c.p, refPoint)
	}
}

// graftrl's percentile-bootstrap intervals (default options) against rliable's bootstrap
// distribution of the same statistic on the same scores.
func TestReferenceBootstrapIntervals(t *testing.T) {
	for _, c := range refIntervalCases {
		x := Strata[float64](c.x)
		var est Estimate
		var err error
		switch c.stat {
		case "iqm":
			est, err = IQMCI(x, Bootstrap{})
		case "mean":
			est, err = MeanCI(x, Bootstrap{})
		case "median":
			est, err = AggregateMedianCI(x, Bootstrap{})
		case "gap":
			est, err = OptimalityGapCI(x, 1, Bootstrap{})
		case "poi":
			est, err = ProbImprovementCI(x, Strata[float64](c.y), Bootstrap{})
		case "profile":
			var p []Estimate
			if p, err = PerformanceProfile(x, []float64{c.tau}, Bootstrap{}); err == nil {
				est = p[0]
			}
		default:
			t.Fatalf("%s: unknown statistic %q", c.name, c.stat)
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		refCheck(t, c.name+": point estimate", est.Value, c.value, refPoint)
		if est.Lo < c.lo[0]-refPoint || est.Lo > c.lo[1]+refPoint {
			t.Errorf("%s: lower endpoint %v outside [%v, %v], where rliable's bootstrap puts the 2.5 %% quantile", c.name, est.Lo, c.lo[0], c.lo[1])
		}
		if est.Hi < c.hi[0]-refPoint || est.Hi > c.hi[1]+refPoint {
			t.Errorf("%s: upper endpoint %v outside [%v, %v], where rliable's bootstrap puts the 97.5 %% quantile", c.name, est.Hi, c.hi[0], c.hi[1])
		}
	}
}

func refCheckAnova(t *testing.T, c refAnova, d Decomposition) {
	t.Helper()
	refCheck(t, c.name+": SS method", d.SSMethod, c.ssMethod, refExact)
	refCheck(t, c.name+": SS seed", d.SSSeed, c.ssSeed, refExact)
	refCheck(t, c.name+": SS residual", d.SSResid, c.ssResid, refExact)
	refCheck(t, c.name+": SS total", d.SSTotal, c.ssTotal, refExact)
	refCheck(t, c.name+": residual SD", d.ResidSD, c.residSD, refExact)
	refCheck(t, c.name+": seed SD", d.SeedSD, c.seedSD, refExact)
}

func TestReferenceTwoWay(t *testing.T) {
	for _, c := range refAnovaCases {
		d, ok := TwoWay(c.y)
		if !ok {
			t.Fatalf("%s: not decomposed", c.name)
		}
		refCheckAnova(t, c, d)
	}
}

func TestReferenceSampleSizes(t *testing.T) {
	for _, c := range refSampleSizes {
		got, kind := RunsPerArmNeeded(c.delta, c.sd, 0.05, 0.8), "two-sample"
		if c.paired {
			got, kind = SeedsNeeded(c.delta, c.sd, 0.05, 0.8), "paired"
		}
		if got != c.n {
			t.Errorf("%s, δ = %v, SD = %v: n = %v, scipy's noncentral t gives %v", kind, c.delta, c.sd, got, c.n)
		}
	}
}

// A comparison of run directories: its paired rows (t-test, t interval, Wilcoxon, both Holm
// corrections over the three methods) and its variance decomposition against scipy and
// statsmodels on the runs' finals.
func TestReferenceComparison(t *testing.T) {
	c := refCompareCase
	root := t.TempDir()
	var dirs []string
	for i, m := range c.methods {
		for j, final := range c.finals[i] {
			dirs = append(dirs, pairedRun(t, root, "maze", m, uint64(j+1), 0.3, final, "", ""))
		}
	}
	cmp, err := Compare(loadDirs(t, dirs), Options{Bootstrap: Bootstrap{Resamples: 100}})
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]PairedRow{}
	for _, r := range cmp.PairedRows("maze", MeasureFinal) {
		rows[r.Method] = r
	}
	if len(rows) != len(c.rows) {
		t.Fatalf("%d paired rows, want %d", len(rows), len(c.rows))
	}
	for _, want := range c.rows {
		r, ok := rows[want.method]
		if !ok {
			t.Fatalf("no paired row for %s", want.method)
		}
		refCheck(t, want.method+": t", r.T.T, want.t, refExact)
		refCheck(t, want.method+": p", r.T.P, want.p, refExact)
		refCheck(t, want.method+": p (Holm)", r.THolm, want.pHolm, refExact)
		refCheck(t, want.method+": t interval lo", r.TInterval.Lo, want.ciLo, refExact)
		refCheck(t, want.method+": t interval hi", r.TInterval.Hi, want.ciHi, refExact)
		refCheck(t, want.method+": Wilcoxon statistic", r.Wilcoxon.Stat, want.w, refExact)
		refCheck(t, want.method+": Wilcoxon p", r.Wilcoxon.P, want.pW, refExact)
		refCheck(t, want.method+": Wilcoxon p (Holm)", r.WilcoxonHolm, want.pWHolm, refExact)
	}
	if len(cmp.Variance) != 1 {
		t.Fatalf("%d variance rows, want 1", len(cmp.Variance))
	}
	if v := cmp.Variance[0]; len(v.Methods) != len(c.methods) || len(v.Seeds) != len(c.finals[0]) {
		t.Errorf("variance decomposition of %d methods × %d seeds, want %d × %d", len(v.Methods), len(v.Seeds), len(c.methods), len(c.finals[0]))
	}
	refCheckAnova(t, c.anova, cmp.Variance[0].Decomposition)
}
