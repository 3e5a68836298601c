package compare

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The 95 % interval of a mean of two strata covers the true value about 95 % of the time.
// Each replication draws 50 runs per stratum from normal distributions with different means and
// spreads; the statistic is the mean of the stratum means, whose true value is (μ₁ + μ₂)/2.
// The percentile bootstrap slightly under-covers for finite n (its spread uses the 1/n variance
// and normal rather than t quantiles: ≈ 94 % here), so the accepted band is 0.92–0.98; the
// standard error of a coverage estimate over 400 replications is ≈ 0.011.
func TestBootstrapCoverage(t *testing.T) {
	const reps, n = 400, 50
	mu := [2]float64{0.3, 0.7}
	sigma := [2]float64{0.1, 0.25}
	truth := (mu[0] + mu[1]) / 2
	rng := rand.New(rand.NewPCG(2024, 11))
	stat := func(g []Strata[float64]) []float64 {
		return []float64{(Mean(g[0][0]) + Mean(g[0][1])) / 2}
	}
	covered := 0
	for r := range reps {
		s := make(Strata[float64], 2)
		for i := range s {
			for range n {
				s[i] = append(s[i], mu[i]+sigma[i]*rng.NormFloat64())
			}
		}
		est, err := StratifiedBootstrap([]Strata[float64]{s}, stat, Bootstrap{Resamples: 1000, Seed: uint64(r)})
		if err != nil {
			t.Fatal(err)
		}
		if est[0].Lo <= truth && truth <= est[0].Hi {
			covered++
		}
	}
	cov := float64(covered) / reps
	t.Logf("coverage %.3f over %d replications", cov, reps)
	if cov < 0.92 || cov > 0.98 {
		t.Errorf("coverage %.3f outside [0.92, 0.98]", cov)
	}
}

// Resampling stays within strata: with one stratum of zeros and one of ones, the pooled mean of
// a resample is always exactly ½, so its interval has zero width. A bootstrap that mixed strata
// would vary.
func TestBootstrapStaysInStrata(t *testing.T) {
	s := Strata[float64]{{0, 0, 0, 0}, {1, 1, 1, 1}}
	est, err := MeanCI(s, Bootstrap{Resamples: 500})
	if err != nil {
		t.Fatal(err)
	}
	if est.Value != 0.5 || est.Lo != 0.5 || est.Hi != 0.5 {
		t.Errorf("pooled mean %+v, want exactly 0.5 [0.5, 0.5]", est)
	}
}

func TestBootstrapReproducible(t *testing.T) {
	s := Strata[float64]{{0.1, 0.4, 0.35, 0.8, 0.5, 0.9}, {0.2, 0.25, 0.7}}
	a, err := IQMCI(s, Bootstrap{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := IQMCI(s, Bootstrap{Seed: 3})
	c, _ := IQMCI(s, Bootstrap{Seed: 4})
	if a != b {
		t.Errorf("same seed, different intervals: %+v vs %+v", a, b)
	}
	if a == c {
		t.Errorf("different seeds, same interval %+v", a)
	}
	if !(a.Lo <= a.Value && a.Value <= a.Hi) {
		t.Errorf("IQM %v outside its interval [%v, %v]", a.Value, a.Lo, a.Hi)
	}
	// The interval lies within the range of the data.
	if a.Lo < 0.1 || a.Hi > 0.9 {
		t.Errorf("interval [%v, %v] outside the data's range", a.Lo, a.Hi)
	}
}

// A single run has a degenerate interval: every resample is that run.
func TestBootstrapSingleRun(t *testing.T) {
	est, err := IQMCI(Strata[float64]{{0.625}}, Bootstrap{})
	if err != nil {
		t.Fatal(err)
	}
	if est != (Estimate{0.625, 0.625, 0.625}) {
		t.Errorf("got %+v", est)
	}
}

func TestBootstrapOptions(t *testing.T) {
	s := Strata[float64]{{1, 2, 3}}
	for _, b := range []Bootstrap{{Confidence: 1}, {Confidence: -0.5}, {Resamples: -1}} {
		if _, err := IQMCI(s, b); err == nil {
			t.Errorf("%+v: no error", b)
		}
	}
	// A wider confidence gives a wider interval.
	s = Strata[float64]{{0.1, 0.4, 0.35, 0.8, 0.5, 0.9, 0.3, 0.6}}
	narrow, _ := MeanCI(s, Bootstrap{Confidence: 0.5})
	wide, _ := MeanCI(s, Bootstrap{Confidence: 0.99})
	if !(wide.Lo < narrow.Lo && narrow.Hi < wide.Hi) {
		t.Errorf("99 %% interval %+v not wider than 50 %% interval %+v", wide, narrow)
	}
}

func TestPerformanceProfile(t *testing.T) {
	s := Strata[float64]{{0, 0.5, 1, 1}}
	taus := []float64{-0.1, 0, 0.5, 0.99, 1}
	est, err := PerformanceProfile(s, taus, Bootstrap{Resamples: 200})
	if err != nil {
		t.Fatal(err)
	}
	// Fractions of {0, 0.5, 1, 1} strictly above τ.
	want := []float64{1, 0.75, 0.5, 0.5, 0}
	for k, e := range est {
		if e.Value != want[k] {
			t.Errorf("τ = %v: fraction %v, want %v", taus[k], e.Value, want[k])
		}
		if e.Lo > e.Value || e.Hi < e.Value {
			t.Errorf("τ = %v: %v outside [%v, %v]", taus[k], e.Value, e.Lo, e.Hi)
		}
	}
	// Nothing is above the maximum, in any resample.
	if est[4].Lo != 0 || est[4].Hi != 0 {
		t.Errorf("τ = 1: interval [%v, %v], want [0, 0]", est[4].Lo, est[4].Hi)
	}
}

func TestCurveIQMCI(t *testing.T) {
	// Four runs on a 3-point grid; the last run has no value at the first point.
	s := Strata[[]float64]{{{0, 0.5, 1}, {0, 0.25, 0.75}, {0, 0.75, 1}, {math.NaN(), 0.5, 0.5}}}
	est, err := CurveIQMCI(s, Bootstrap{Resamples: 300})
	if err != nil {
		t.Fatal(err)
	}
	// Point 0: {0, 0, 0} → 0. Point 1: sorted 0.25 0.5 0.5 0.75, cut 1 → 0.5.
	// Point 2: sorted 0.5 0.75 1 1 → (0.75+1)/2 = 0.875.
	want := []float64{0, 0.5, 0.875}
	for k, e := range est {
		if math.Abs(e.Value-want[k]) > 1e-12 {
			t.Errorf("point %d: IQM %v, want %v", k, e.Value, want[k])
		}
	}
	if _, err := CurveIQMCI(Strata[[]float64]{{{1, 2}, {1}}}, Bootstrap{}); err == nil {
		t.Error("curves of different lengths: no error")
	}
}
