package audit

import (
	"math"
)

// compareAll computes the truth summary and every estimator's metrics over the audited steps,
// with the correlations' standard errors from boot bootstrap resamples drawn with seed
// (bootstrapCorrSE). Steps whose truth is undefined (every continuation dropped) are left out.
func compareAll(steps []StepResult, labels []string, z float64, boot int, seed uint64) (TruthSummary, []Metrics) {
	var keep []StepResult
	for _, s := range steps {
		if !math.IsNaN(float64(s.A)) && !math.IsNaN(float64(s.ASE)) {
			keep = append(keep, s)
		}
	}
	n := len(keep)
	a, se, w := make([]float64, n), make([]float64, n), make([]float64, n)
	se2, a2 := make([]float64, n), make([]float64, n)
	for i, s := range keep {
		a[i], se[i], w[i] = float64(s.A), float64(s.ASE), s.Weight
		se2[i], a2[i] = se[i]*se[i], a[i]*a[i]
	}
	var ts TruthSummary
	ts.Mean = Num(WeightedMean(a, w))
	ts.Var = Num(WeightedMean(a2, w) - float64(ts.Mean)*float64(ts.Mean))
	ts.NoiseFloor = Num(WeightedMean(se2, w))
	ts.Ceiling = Num(math.NaN())
	if ts.Var > ts.NoiseFloor && ts.Var > 0 {
		ts.Ceiling = Num(math.Sqrt(1 - float64(ts.NoiseFloor/ts.Var)))
	}
	_, resolved := SignAgreement(a, a, se, w, z)
	ts.Resolved = Num(resolved)
	for i := range a {
		if a[i] != 0 && math.Abs(a[i]) >= z*se[i] {
			ts.ResolvedSteps++
		}
	}
	meanA2 := WeightedMean(a2, w)

	// The bootstrap resamples within the groups of steps the selection drew from (the strata,
	// by name, in order of appearance); the per-stratum correlations are over StratumName order.
	var groups [][]int
	group := map[string]int{}
	strata := make([][]int, NumStrata)
	for i, s := range keep {
		g, ok := group[s.Stratum]
		if !ok {
			g = len(groups)
			group[s.Stratum] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
		for h := range NumStrata {
			if s.Stratum == StratumName(h) {
				strata[h] = append(strata[h], i)
			}
		}
	}
	ests := make([][]float64, len(labels))
	for e := range labels {
		ests[e] = make([]float64, n)
		for i, s := range keep {
			ests[e][i] = s.Est[e]
		}
	}
	ses := bootstrapCorrSE(ests, a, w, groups, strata, boot, seed)

	var out []Metrics
	for e, label := range labels {
		est := ests[e]
		m := Metrics{Label: label}
		m.Pearson = Num(Pearson(est, a, w))
		m.Spearman = Num(Spearman(est, a, w))
		m.PearsonSE, m.SpearmanSE = Num(ses.pearson[e]), Num(ses.spearman[e])
		sign, _ := SignAgreement(est, a, se, w, z)
		m.Sign = Num(sign)
		c, mse := ScaleMatch(est, a, w)
		m.Scale, m.MSE = Num(c), Num(mse)
		m.NMSE = Num(math.NaN())
		if meanA2 > 0 {
			m.NMSE = Num(mse / meanA2)
		}
		for h := range NumStrata {
			var x, y []float64
			for i, s := range keep {
				if s.Stratum == StratumName(h) {
					x, y = append(x, est[i]), append(y, a[i])
				}
			}
			m.ByStratum = append(m.ByStratum, Num(Pearson(x, y, nil)))
			m.ByStratumSE = append(m.ByStratumSE, Num(ses.byStratum[e][h]))
		}
		for _, sl := range []string{SliceFailedProgress, SliceSuccessNoProgress} {
			var x, y, ww []float64
			for i, s := range keep {
				if inSlice(s, sl) {
					x, y, ww = append(x, c*est[i]), append(y, a[i]), append(ww, w[i])
				}
			}
			sm := SliceMetrics{Name: sl, N: len(x)}
			sm.Truth, sm.Estimate = Num(WeightedMean(y, ww)), Num(WeightedMean(x, ww))
			sm.Bias = sm.Estimate - sm.Truth
			sm.Positive, sm.TruthPositive = Num(positiveShare(x, ww)), Num(positiveShare(y, ww))
			m.Slices = append(m.Slices, sm)
		}
		out = append(out, m)
	}
	return ts, out
}

// inSlice reports whether a step belongs to a diagnostic slice.
func inSlice(s StepResult, slice string) bool {
	switch slice {
	case SliceFailedProgress:
		return !s.Success && s.Progress == MadeProgress
	case SliceSuccessNoProgress:
		return s.Success && s.Progress == NoProgress
	}
	return false
}

// positiveShare is the weighted share of x that is > 0 (NaN when empty).
func positiveShare(x, w []float64) float64 {
	pos := make([]float64, len(x))
	for i, v := range x {
		if v > 0 {
			pos[i] = 1
		}
	}
	return WeightedMean(pos, w)
}
