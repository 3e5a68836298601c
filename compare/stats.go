package compare

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Mean is the arithmetic mean; NaN for no scores.
func Mean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	return stat.Mean(x, nil)
}

// TrimMean is scipy.stats.trim_mean(x, prop): sort x, cut ⌊prop·n⌋ scores from each end and
// average the rest. prop must lie in [0, 0.5); NaN for no scores. x is not modified.
func TrimMean(x []float64, prop float64) float64 {
	if !(prop >= 0 && prop < 0.5) {
		panic(fmt.Sprintf("compare: TrimMean proportion %v outside [0, 0.5)", prop))
	}
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	return trimMeanSorted(s, prop)
}

func trimMeanSorted(s []float64, prop float64) float64 {
	cut := int(prop * float64(len(s)))
	return stat.Mean(s[cut:len(s)-cut], nil)
}

// IQM is the interquartile mean as rliable computes it, scipy.stats.trim_mean(x, 0.25): the mean
// of the scores left after cutting ⌊n/4⌋ from each end of the sorted scores. For n < 4 nothing is
// cut (IQM = mean); n = 4, 5, 6, 7 cut one score from each end, n = 8…11 two, and so on. Unlike
// an interpolated quartile definition, no score is ever weighted fractionally.
func IQM(x []float64) float64 { return TrimMean(x, 0.25) }

// Median is the median of x (the mean of the two middle scores for even n); NaN for no scores.
// x is not modified.
func Median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// AggregateMedian is rliable's aggregate_median: the median over strata (environments) of each
// stratum's mean score; empty strata are skipped, NaN when all are empty. With one stratum it is
// that stratum's mean, which is why a cell's median is Median of its runs instead.
func AggregateMedian(s Strata[float64]) float64 {
	means := make([]float64, 0, len(s))
	for _, st := range s {
		if len(st) > 0 {
			means = append(means, Mean(st))
		}
	}
	return Median(means)
}

// OptimalityGap is rliable's aggregate_optimality_gap: gamma − mean(min(x, gamma)) over the scores
// pooled over strata, i.e. how far the runs fall short of gamma on average, scores above it
// counting as gamma. Lower is better; NaN for no scores.
func OptimalityGap(s Strata[float64], gamma float64) float64 {
	var sum float64
	n := 0
	for _, st := range s {
		for _, v := range st {
			sum += min(v, gamma)
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return gamma - sum/float64(n)
}

// WelchResult is the outcome of Welch's unequal-variances t-test.
type WelchResult struct {
	// T is (x̄ − ȳ) / √(s²ₓ/nₓ + s²ᵧ/nᵧ), with unbiased sample variances.
	T float64
	// DF is the Welch–Satterthwaite degrees of freedom
	// (s²ₓ/nₓ + s²ᵧ/nᵧ)² / ((s²ₓ/nₓ)²/(nₓ−1) + (s²ᵧ/nᵧ)²/(nᵧ−1)).
	DF float64
	// P is the two-sided p-value 2·P(T_DF > |T|).
	P float64
}

// WelchTTest tests whether x and y have equal means without assuming equal variances. The test
// is undefined, and every field NaN, when a sample has fewer than two scores or both samples have
// zero variance (e.g. every run reached success 1): no p-value is invented for those cases.
func WelchTTest(x, y []float64) WelchResult {
	nan := WelchResult{T: math.NaN(), DF: math.NaN(), P: math.NaN()}
	if len(x) < 2 || len(y) < 2 {
		return nan
	}
	mx, vx := stat.MeanVariance(x, nil)
	my, vy := stat.MeanVariance(y, nil)
	nx, ny := float64(len(x)), float64(len(y))
	ax, ay := vx/nx, vy/ny // squared standard errors of the means
	se2 := ax + ay
	if se2 == 0 {
		return nan
	}
	t := (mx - my) / math.Sqrt(se2)
	df := se2 * se2 / (ax*ax/(nx-1) + ay*ay/(ny-1))
	dist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	return WelchResult{T: t, DF: df, P: 2 * dist.Survival(math.Abs(t))}
}

// Strata holds one group's units split by stratum: Strata[i] are the units (runs) of stratum
// (environment) i. Groups compared with each other index strata the same way.
type Strata[T any] [][]T

// ProbImprovement is P(X > Y) as rliable defines it: per stratum, the share of pairs (x, y) with
// x > y, ties counting ½ (the Mann–Whitney U statistic over nₓ·nᵧ), averaged over the strata
// where both groups have runs. NaN when there is no such stratum. x and y must have the same
// number of strata.
func ProbImprovement(x, y Strata[float64]) float64 {
	if len(x) != len(y) {
		panic(fmt.Sprintf("compare: ProbImprovement over %d and %d strata", len(x), len(y)))
	}
	sum, k := 0.0, 0
	for i := range x {
		if len(x[i]) == 0 || len(y[i]) == 0 {
			continue
		}
		sum += pairWins(x[i], y[i])
		k++
	}
	if k == 0 {
		return math.NaN()
	}
	return sum / float64(k)
}

// pairWins is U/(n·m): the share of pairs with x > y, ties ½.
func pairWins(x, y []float64) float64 {
	var u float64
	for _, a := range x {
		for _, b := range y {
			switch {
			case a > b:
				u++
			case a == b:
				u += 0.5
			}
		}
	}
	return u / float64(len(x)*len(y))
}

// Range is a min–max normalisation: Lo maps to 0 and Hi to 1. For success rates the natural
// range is [0, 1] (the identity); for returns, Lo is typically a random or untrained policy's
// score and Hi a reference (a solver's or the best known) score.
type Range struct{ Lo, Hi float64 }

// Normalize maps x to (x − Lo)/(Hi − Lo).
func (r Range) Normalize(x float64) float64 { return (x - r.Lo) / (r.Hi - r.Lo) }

// Valid reports whether the range can normalise (finite, Hi > Lo).
func (r Range) Valid() bool {
	return !math.IsInf(r.Lo, 0) && !math.IsInf(r.Hi, 0) && r.Hi > r.Lo
}

// ScoreFraction is a performance-profile point for one group: the fraction of its units with a
// score above tau, pooled over strata (rliable's run-score distribution).
func ScoreFraction(s Strata[float64], tau float64) float64 {
	n, above := 0, 0
	for _, st := range s {
		for _, v := range st {
			n++
			if v > tau {
				above++
			}
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return float64(above) / float64(n)
}

// pool concatenates the strata.
func pool(s Strata[float64], buf []float64) []float64 {
	buf = buf[:0]
	for _, st := range s {
		buf = append(buf, st...)
	}
	return buf
}
