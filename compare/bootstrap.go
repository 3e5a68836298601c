package compare

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Bootstrap defaults.
const (
	DefaultResamples  = 2000
	DefaultConfidence = 0.95
)

// Bootstrap configures stratified percentile-bootstrap confidence intervals. The zero value
// means 2000 resamples, 95 % intervals and seed 0.
type Bootstrap struct {
	// Resamples is the number of bootstrap resamples (0: DefaultResamples).
	Resamples int
	// Confidence is the coverage of the interval, in (0, 1) (0: DefaultConfidence).
	Confidence float64
	// Seed seeds the resampling generator, so that the same inputs give the same intervals.
	Seed uint64
}

func (b Bootstrap) resolved() (Bootstrap, error) {
	if b.Resamples == 0 {
		b.Resamples = DefaultResamples
	}
	if b.Confidence == 0 {
		b.Confidence = DefaultConfidence
	}
	if b.Resamples < 1 {
		return b, fmt.Errorf("bootstrap: resamples %d must be positive", b.Resamples)
	}
	if !(b.Confidence > 0 && b.Confidence < 1) {
		return b, fmt.Errorf("bootstrap: confidence %v is outside (0, 1)", b.Confidence)
	}
	return b, nil
}

// Estimate is a point estimate with its confidence interval [Lo, Hi].
type Estimate struct {
	Value, Lo, Hi float64
}

// NaNEstimate is the estimate of a statistic that is undefined.
func NaNEstimate() Estimate { return Estimate{math.NaN(), math.NaN(), math.NaN()} }

// StratifiedBootstrap computes a statistic (a vector of numbers) on groups of units split into
// strata, and its percentile-bootstrap confidence intervals. Each resample draws, for every group
// and every stratum independently, as many units as the stratum has, uniformly with replacement
// from that stratum (rliable's StratifiedIndependentBootstrap): environments are never mixed and
// the groups (methods) are resampled independently. The interval of component k is the
// ((1−c)/2, (1+c)/2) quantile of its resampled values (gonum stat.Quantile with stat.LinInterp;
// resamples where the component is NaN are left out). Draws come from a PCG generator seeded with
// b.Seed in a fixed order, so the intervals are reproducible.
//
// statistic is called once on the data (Estimate.Value) and then once per resample on scratch
// slices that it must neither keep nor modify. Every call must return the same number of values.
func StratifiedBootstrap[T any](groups []Strata[T], statistic func([]Strata[T]) []float64, b Bootstrap) ([]Estimate, error) {
	b, err := b.resolved()
	if err != nil {
		return nil, err
	}
	point := statistic(groups)
	out := make([]Estimate, len(point))
	for k, v := range point {
		out[k].Value = v
	}
	scratch := make([]Strata[T], len(groups))
	for g, s := range groups {
		scratch[g] = make(Strata[T], len(s))
		for i, st := range s {
			scratch[g][i] = make([]T, len(st))
		}
	}
	rng := rand.New(rand.NewPCG(b.Seed, 0x6a09e667f3bcc909))
	vals := make([][]float64, len(point))
	for k := range vals {
		vals[k] = make([]float64, 0, b.Resamples)
	}
	for range b.Resamples {
		for g, s := range groups {
			for i, st := range s {
				dst := scratch[g][i]
				for j := range dst {
					dst[j] = st[rng.IntN(len(st))]
				}
			}
		}
		res := statistic(scratch)
		if len(res) != len(point) {
			return nil, errors.New("bootstrap: the statistic returned a different number of values on a resample")
		}
		for k, v := range res {
			if !math.IsNaN(v) {
				vals[k] = append(vals[k], v)
			}
		}
	}
	alpha := 1 - b.Confidence
	for k, v := range vals {
		if len(v) == 0 {
			out[k].Lo, out[k].Hi = math.NaN(), math.NaN()
			continue
		}
		slices.Sort(v)
		out[k].Lo = stat.Quantile(alpha/2, stat.LinInterp, v, nil)
		out[k].Hi = stat.Quantile(1-alpha/2, stat.LinInterp, v, nil)
	}
	return out, nil
}

// scalar runs a one-number statistic through StratifiedBootstrap.
func scalar(groups []Strata[float64], f func([]Strata[float64]) float64, b Bootstrap) (Estimate, error) {
	est, err := StratifiedBootstrap(groups, func(g []Strata[float64]) []float64 { return []float64{f(g)} }, b)
	if err != nil {
		return Estimate{}, err
	}
	return est[0], nil
}

// IQMCI is the IQM of the scores pooled over strata, with its stratified-bootstrap interval.
func IQMCI(s Strata[float64], b Bootstrap) (Estimate, error) {
	var buf []float64
	return scalar([]Strata[float64]{s}, func(g []Strata[float64]) float64 {
		buf = pool(g[0], buf)
		return IQM(buf)
	}, b)
}

// MeanCI is the mean of the scores pooled over strata, with its stratified-bootstrap interval.
func MeanCI(s Strata[float64], b Bootstrap) (Estimate, error) {
	var buf []float64
	return scalar([]Strata[float64]{s}, func(g []Strata[float64]) float64 {
		buf = pool(g[0], buf)
		return Mean(buf)
	}, b)
}

// AggregateMedianCI is AggregateMedian(s) with its stratified-bootstrap interval.
func AggregateMedianCI(s Strata[float64], b Bootstrap) (Estimate, error) {
	return scalar([]Strata[float64]{s}, func(g []Strata[float64]) float64 { return AggregateMedian(g[0]) }, b)
}

// OptimalityGapCI is OptimalityGap(s, gamma) with its stratified-bootstrap interval.
func OptimalityGapCI(s Strata[float64], gamma float64, b Bootstrap) (Estimate, error) {
	return scalar([]Strata[float64]{s}, func(g []Strata[float64]) float64 { return OptimalityGap(g[0], gamma) }, b)
}

// ProbImprovementCI is ProbImprovement(x, y) with its stratified-bootstrap interval (x and y
// resampled independently within each stratum).
func ProbImprovementCI(x, y Strata[float64], b Bootstrap) (Estimate, error) {
	if len(x) != len(y) {
		return Estimate{}, fmt.Errorf("probability of improvement: %d strata against %d", len(x), len(y))
	}
	return scalar([]Strata[float64]{x, y}, func(g []Strata[float64]) float64 {
		return ProbImprovement(g[0], g[1])
	}, b)
}

// PerformanceProfile is the run-score distribution of rliable: for each tau, the fraction of
// runs (pooled over strata) whose score exceeds tau, with stratified-bootstrap intervals. The
// whole profile of one resample comes from the same resampled runs.
func PerformanceProfile(s Strata[float64], taus []float64, b Bootstrap) ([]Estimate, error) {
	return StratifiedBootstrap([]Strata[float64]{s}, func(g []Strata[float64]) []float64 {
		out := make([]float64, len(taus))
		for k, tau := range taus {
			out[k] = ScoreFraction(g[0], tau)
		}
		return out
	}, b)
}

// CurveIQMCI takes runs' curves sampled on a common grid (each unit a slice of one value per grid
// point, NaN where the run has no value) and returns, per grid point, the IQM over runs (pooled
// over strata, NaN values left out) with its stratified-bootstrap interval. A resample draws whole
// runs, so that the band respects the correlation along each run's curve.
func CurveIQMCI(s Strata[[]float64], b Bootstrap) ([]Estimate, error) {
	width := -1
	for _, st := range s {
		for _, c := range st {
			if width >= 0 && len(c) != width {
				return nil, fmt.Errorf("curve IQM: curves of %d and %d points", width, len(c))
			}
			width = len(c)
		}
	}
	if width < 0 {
		return nil, errors.New("curve IQM: no runs")
	}
	col := make([]float64, 0)
	return StratifiedBootstrap([]Strata[[]float64]{s}, func(g []Strata[[]float64]) []float64 {
		out := make([]float64, width)
		for k := range out {
			col = col[:0]
			for _, st := range g[0] {
				for _, c := range st {
					if !math.IsNaN(c[k]) {
						col = append(col, c[k])
					}
				}
			}
			out[k] = IQM(col)
		}
		return out
	}, b)
}
