package audit

import (
	"math"

	"gonum.org/v1/gonum/stat"
)

// Every statistic here takes optional weights w (nil: all 1). The audit weights each audited
// step by the number of batch steps of its stratum per audited step of that stratum, so that the
// statistics estimate what they would be over every step of the batch (see Select).

// Ranks returns the mid-ranks of x: tied values share the average of the ranks they span. With
// weights, a value's rank is the total weight of the smaller values plus half the weight of its
// tie group plus ½ — with all weights 1 that is the usual 1-based mid-rank, so that
// Ranks([3 1 3 2], nil) = [3.5 1 3.5 2]. NaNs are not allowed.
func Ranks(x, w []float64) []float64 {
	return ranksOrdered(x, sortOrder(x), w)
}

// Pearson is the (weighted) Pearson correlation of x and y; NaN when fewer than two values or
// when either is constant.
func Pearson(x, y, w []float64) float64 {
	if len(x) < 2 || constant(x) || constant(y) {
		return math.NaN()
	}
	return stat.Correlation(x, y, w)
}

// Spearman is the (weighted) Spearman rank correlation: Pearson on the mid-ranks of Ranks.
func Spearman(x, y, w []float64) float64 {
	if len(x) < 2 || constant(x) || constant(y) {
		return math.NaN()
	}
	return stat.Correlation(Ranks(x, w), Ranks(y, w), w)
}

func constant(x []float64) bool {
	for _, v := range x {
		if v != x[0] {
			return false
		}
	}
	return true
}

// ScaleMatch fits the single scale c that minimises Σ w·(c·est − truth)² — c = Σ w·est·truth /
// Σ w·est² — and returns it with the (weighted) mean squared error Σ w·(c·est − truth)² / Σ w
// at that c. Estimators normalise their advantages in different ways (per group, per node, by a
// std); the fit compares them on the truth's scale. An estimate that is 0 everywhere gets c = 0
// and the mean squared truth.
func ScaleMatch(est, truth, w []float64) (c, mse float64) {
	var se, st, sw float64
	for i := range est {
		wi := weightAt(w, i)
		se += wi * est[i] * est[i]
		st += wi * est[i] * truth[i]
		sw += wi
	}
	if se > 0 {
		c = st / se
	}
	for i := range est {
		d := c*est[i] - truth[i]
		mse += weightAt(w, i) * d * d
	}
	if sw == 0 {
		return c, math.NaN()
	}
	return c, mse / sw
}

// SignAgreement is the (weighted) share of resolved steps — those whose true advantage is at
// least z standard errors from 0 — on which the estimate has the truth's sign (an estimate of
// exactly 0 never agrees), and the (weighted) share of steps that are resolved. NaN when no step
// is resolved.
func SignAgreement(est, truth, se, w []float64, z float64) (agree, resolved float64) {
	var sAgree, sRes, sAll float64
	for i := range est {
		wi := weightAt(w, i)
		sAll += wi
		if math.Abs(truth[i]) < z*se[i] || truth[i] == 0 {
			continue
		}
		sRes += wi
		if est[i]*truth[i] > 0 {
			sAgree += wi
		}
	}
	if sRes == 0 {
		return math.NaN(), 0
	}
	return sAgree / sRes, sRes / sAll
}

// WeightedMean is Σ w·x / Σ w (NaN when empty).
func WeightedMean(x, w []float64) float64 {
	var s, sw float64
	for i, v := range x {
		wi := weightAt(w, i)
		s += wi * v
		sw += wi
	}
	if sw == 0 {
		return math.NaN()
	}
	return s / sw
}

func weightAt(w []float64, i int) float64 {
	if w == nil {
		return 1
	}
	return w[i]
}

// meanSE returns the sample mean of x and its standard error sd/√n (sd with n − 1); the error
// is NaN for fewer than two values.
func meanSE(x []float64) (mean, se float64) {
	if len(x) == 0 {
		return math.NaN(), math.NaN()
	}
	if len(x) == 1 {
		return x[0], math.NaN()
	}
	m, sd := stat.MeanStdDev(x, nil)
	return m, sd / math.Sqrt(float64(len(x)))
}
