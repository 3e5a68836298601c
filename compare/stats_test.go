package compare

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mathext"
)

func TestIQM(t *testing.T) {
	// scipy.stats.trim_mean(x, 0.25): cut ⌊n/4⌋ sorted scores from each end, average the rest.
	tests := []struct {
		name string
		x    []float64
		want float64
	}{
		// n = 1, 2, 3: ⌊n/4⌋ = 0, nothing is cut: the mean.
		{"n=1", []float64{7}, 7},
		{"n=2", []float64{1, 4}, 2.5},
		{"n=3", []float64{9, 0, 3}, 4},
		// n = 4: cut 1 each end. sorted 1 2 3 10 → (2+3)/2 = 2.5.
		{"n=4", []float64{10, 2, 1, 3}, 2.5},
		// n = 5: ⌊1.25⌋ = 1. sorted 0 0.25 0.5 0.75 1 → (0.25+0.5+0.75)/3 = 0.5.
		{"n=5", []float64{1, 0.5, 0, 0.75, 0.25}, 0.5},
		// n = 8: cut 2. sorted 1 2 3 4 5 6 10 100 → (3+4+5+6)/4 = 4.5.
		{"n=8", []float64{100, 1, 6, 2, 5, 3, 10, 4}, 4.5},
		// n = 10: ⌊2.5⌋ = 2. sorted 1 … 9 100 → (3+4+5+6+7+8)/6 = 5.5. (An interpolated
		// quartile definition would weigh 3 and 8 by ½ and give 5.5 here too, but not below.)
		{"n=10", []float64{9, 1, 8, 2, 7, 3, 6, 4, 5, 100}, 5.5},
		// n = 10, skewed: sorted 0 0 0 0.0625 0.125 0.25 0.5 0.5 1 1 → keep 0 0.0625 0.125 0.25 0.5 0.5
		// → 1.4375/6 = 0.23958333…
		{"n=10 success rates", []float64{0.5, 0, 1, 0.125, 0, 0.0625, 1, 0.25, 0.5, 0}, 1.4375 / 6},
	}
	for _, tc := range tests {
		if got := IQM(tc.x); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: IQM(%v) = %v, want %v", tc.name, tc.x, got, tc.want)
		}
	}
	if !math.IsNaN(IQM(nil)) {
		t.Error("IQM of no scores should be NaN")
	}
	x := []float64{3, 1, 2, 4}
	IQM(x)
	if x[0] != 3 || x[1] != 1 {
		t.Error("IQM modified its input")
	}
}

func TestTrimMean(t *testing.T) {
	x := []float64{10, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	// prop 0: the mean 5.5; prop 0.1: cut 1 each end → 2…9, mean 5.5; prop 0.2 on 1…10 also 5.5:
	// use an asymmetric sample instead. y sorted: 0 1 2 3 100; prop 0.2 → cut 1 → (1+2+3)/3 = 2.
	if got := TrimMean(x, 0); got != 5.5 {
		t.Errorf("TrimMean(x, 0) = %v, want 5.5", got)
	}
	if got := TrimMean([]float64{100, 3, 0, 2, 1}, 0.2); math.Abs(got-2) > 1e-12 {
		t.Errorf("TrimMean(y, 0.2) = %v, want 2", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("TrimMean(x, 0.5) should panic")
		}
	}()
	TrimMean(x, 0.5)
}

func TestProbImprovement(t *testing.T) {
	tests := []struct {
		name string
		x, y Strata[float64]
		want float64
	}{
		// x beats y in every pair.
		{"dominates", Strata[float64]{{3, 4}}, Strata[float64]{{1, 2}}, 1},
		{"dominated", Strata[float64]{{1, 2}}, Strata[float64]{{3, 4}}, 0},
		// x = 1 2 3, y = 2 2: pairs (1,2)(1,2) → 0; (2,2)(2,2) → ½ + ½; (3,2)(3,2) → 2. 3/6 = 0.5.
		{"ties", Strata[float64]{{1, 2, 3}}, Strata[float64]{{2, 2}}, 0.5},
		// x = 3 4, y = 1 2 3: 3 beats 1, 2 and ties 3 → 2.5; 4 beats all → 3. 5.5/6.
		{"tie at the top", Strata[float64]{{3, 4}}, Strata[float64]{{1, 2, 3}}, 5.5 / 6},
		// All equal: every pair ties → ½.
		{"all tied", Strata[float64]{{1, 1, 1}}, Strata[float64]{{1, 1}}, 0.5},
		// Two strata averaged: (5.5/6 + 0)/2.
		{"two envs", Strata[float64]{{3, 4}, {0}}, Strata[float64]{{1, 2, 3}, {1}}, (5.5 / 6) / 2},
		// A stratum where one side has no runs is left out of the average.
		{"missing env", Strata[float64]{{3, 4}, {}}, Strata[float64]{{1, 2, 3}, {1}}, 5.5 / 6},
	}
	for _, tc := range tests {
		if got := ProbImprovement(tc.x, tc.y); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: P = %v, want %v", tc.name, got, tc.want)
		}
		// P(X > Y) + P(Y > X) = 1 (ties split evenly).
		if got := ProbImprovement(tc.x, tc.y) + ProbImprovement(tc.y, tc.x); math.Abs(got-1) > 1e-12 {
			t.Errorf("%s: P(X>Y) + P(Y>X) = %v, want 1", tc.name, got)
		}
	}
	if !math.IsNaN(ProbImprovement(Strata[float64]{{}}, Strata[float64]{{1}})) {
		t.Error("P with no common stratum should be NaN")
	}
}

// Two methods drawn from the same distribution (different draws): P ≈ 0.5 and its interval
// covers 0.5.
func TestProbImprovementSameDistribution(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 1))
	x, y := make(Strata[float64], 3), make(Strata[float64], 3)
	for i := range x {
		for range 10 {
			// Success rates of a 16-task panel: ties are common.
			x[i] = append(x[i], math.Round(16*math.Min(1, math.Max(0, 0.5+0.2*rng.NormFloat64())))/16)
			y[i] = append(y[i], math.Round(16*math.Min(1, math.Max(0, 0.5+0.2*rng.NormFloat64())))/16)
		}
	}
	est, err := ProbImprovementCI(x, y, Bootstrap{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	// sd of a per-env P with n = m = 10 is about √((n+m+1)/(12nm)) ≈ 0.13; over 3 envs ≈ 0.08.
	if math.Abs(est.Value-0.5) > 0.15 {
		t.Errorf("P = %v, want ≈ 0.5", est.Value)
	}
	if !(est.Lo < 0.5 && 0.5 < est.Hi) {
		t.Errorf("interval [%v, %v] does not cover 0.5", est.Lo, est.Hi)
	}
	if !(est.Lo <= est.Value && est.Value <= est.Hi) {
		t.Errorf("P %v outside its interval [%v, %v]", est.Value, est.Lo, est.Hi)
	}
}

func TestWelchTTest(t *testing.T) {
	// Reference: the two examples of Welch's t-test on Wikipedia ("Welch's t-test", Examples),
	// which give t, ν and p rounded; the exact t and ν below are computed by hand from the
	// formulas in WelchResult's comments.
	//
	// Example 1: n = 15 each. x̄ = 312.3/15 = 20.82, ȳ = 344.8/15 = 22.98667;
	// s²ₓ = 7.8674286, s²ᵧ = 3.8126667; s²ₓ/n = 0.5244952, s²ᵧ/n = 0.2541778, sum 0.7786730;
	// t = −2.1666667/√0.7786730 = −2.4553564;
	// ν = 0.7786730² / (0.5244952²/14 + 0.2541778²/14) = 0.6063317/0.0242644 = 24.988529.
	// Wikipedia: t = −2.46, ν = 25.0, p = 0.021.
	//
	// Example 2: n = 10 and 20. x̄ = 20.61, ȳ = 22.135; s²ₓ = 9.041, s²ᵧ = 0.8981842;
	// s²ₓ/n = 0.9041, s²ᵧ/m = 0.0449092, sum 0.9490092; t = −1.525/√0.9490092 = −1.5654335;
	// ν = 0.9490092² / (0.9041²/9 + 0.0449092²/19) = 0.9006185/0.0909271 = 9.9047412.
	// Wikipedia: t = −1.57, ν = 9.9, p = 0.149.
	tests := []struct {
		name       string
		x, y       []float64
		t, df, pWP float64 // exact t and ν; Wikipedia's rounded p
	}{
		{"wikipedia 1",
			[]float64{27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4},
			[]float64{27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4},
			-2.455356398286006, 24.98852929023142, 0.021},
		{"wikipedia 2",
			[]float64{17.2, 20.9, 22.6, 18.1, 21.7, 21.4, 23.5, 24.2, 14.7, 21.8},
			[]float64{21.5, 22.8, 21.0, 23.0, 21.6, 23.6, 22.5, 20.7, 23.4, 21.8, 20.7, 21.7, 21.5, 22.5, 23.6, 21.5, 22.5, 23.5, 21.5, 21.8},
			-1.5654335235985073, 9.904741248650831, 0.149},
	}
	for _, tc := range tests {
		w := WelchTTest(tc.x, tc.y)
		if math.Abs(w.T-tc.t) > 1e-9 || math.Abs(w.DF-tc.df) > 1e-9 {
			t.Errorf("%s: t = %v, ν = %v; want %v, %v", tc.name, w.T, w.DF, tc.t, tc.df)
		}
		// p = 2·P(T_ν > |t|) = I_{ν/(ν+t²)}(ν/2, ½), the regularised incomplete beta function:
		// an independent route to the same number.
		want := mathext.RegIncBeta(tc.df/2, 0.5, tc.df/(tc.df+tc.t*tc.t))
		if math.Abs(w.P-want) > 1e-10 {
			t.Errorf("%s: p = %v, want %v (incomplete beta)", tc.name, w.P, want)
		}
		if math.Abs(w.P-tc.pWP) > 0.0006 {
			t.Errorf("%s: p = %v, Wikipedia gives %v", tc.name, w.P, tc.pWP)
		}
		// Symmetric in its arguments up to the sign of t.
		if r := WelchTTest(tc.y, tc.x); math.Abs(r.T+w.T) > 1e-12 || math.Abs(r.P-w.P) > 1e-12 {
			t.Errorf("%s: swapping the samples gives t = %v, p = %v", tc.name, r.T, r.P)
		}
	}
	for _, tc := range []struct {
		name string
		x, y []float64
	}{
		{"one run", []float64{1}, []float64{1, 2, 3}},
		{"no variance", []float64{1, 1, 1}, []float64{1, 1}},
		{"no variance, different means", []float64{1, 1, 1}, []float64{0, 0}},
	} {
		if w := WelchTTest(tc.x, tc.y); !math.IsNaN(w.P) {
			t.Errorf("%s: p = %v, want NaN (undefined)", tc.name, w.P)
		}
	}
}

func TestRange(t *testing.T) {
	r := Range{Lo: -1, Hi: 3}
	if got := r.Normalize(1); got != 0.5 {
		t.Errorf("Normalize(1) = %v, want 0.5", got)
	}
	if (Range{1, 1}).Valid() || (Range{0, math.Inf(1)}).Valid() || !r.Valid() {
		t.Error("Valid is wrong")
	}
}

func TestScoreFraction(t *testing.T) {
	s := Strata[float64]{{0, 0.5, 1}, {0.25}}
	// Scores > 0.25: 0.5 and 1 → 2 of 4 (pooled).
	if got := ScoreFraction(s, 0.25); got != 0.5 {
		t.Errorf("ScoreFraction = %v, want 0.5", got)
	}
}

// TestMedianAndOptimalityGap checks the rliable statistics against hand-computed values:
// aggregate_median is the median of the per-task means, aggregate_optimality_gap is
// gamma − mean(min(x, gamma)) over all runs.
func TestMedianAndOptimalityGap(t *testing.T) {
	cases := []struct {
		what      string
		got, want float64
	}{
		{"median odd", Median([]float64{3, 1, 2}), 2},
		{"median even", Median([]float64{4, 1, 3, 2}), 2.5},
		{"median one", Median([]float64{0.7}), 0.7},
		// Per-stratum means 0.5, 0.5, 1 → 0.5; the stratum sizes do not weigh.
		{"aggregate median odd", AggregateMedian(Strata[float64]{{0, 1}, {0.5}, {1, 1, 1}}), 0.5},
		// Means 0, 1, 0.3, 0.5 → sorted 0, 0.3, 0.5, 1 → 0.4; the empty stratum is skipped.
		{"aggregate median even", AggregateMedian(Strata[float64]{{0}, {1}, {}, {0.2, 0.4}, {1, 0}}), 0.4},
		// min(1.2, 1) = 1: 1 − (0.5 + 1 + 0)/3.
		{"optimality gap", OptimalityGap(Strata[float64]{{0.5, 1.2}, {0}}, 1), 0.5},
		{"optimality gap at 0.5", OptimalityGap(Strata[float64]{{0.25, 1}}, 0.5), 0.125},
	}
	for _, c := range cases {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	for what, v := range map[string]float64{
		"median of none":           Median(nil),
		"aggregate median of none": AggregateMedian(Strata[float64]{{}, {}}),
		"optimality gap of none":   OptimalityGap(Strata[float64]{{}}, 1),
	} {
		if !math.IsNaN(v) {
			t.Errorf("%s = %v, want NaN", what, v)
		}
	}
	x := []float64{0.3, 0.1, 0.2}
	if Median(x); x[0] != 0.3 || x[1] != 0.1 {
		t.Error("Median modified its input")
	}
}
