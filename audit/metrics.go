package audit

import (
	"math"
)

// compareAll computes the truth summary and every estimator's metrics over the audited steps,
// with the correlations' standard errors from boot bootstrap resamples drawn with seed
// (bootstrapCorrSE). Steps whose truth is undefined (every continuation dropped) are left out.
func compareAll(steps []StepResult, labels []string, z float64, boot int, seed uint64) (TruthSummary, []Metrics) {
	t := newTruthColumns(steps)
	ts := t.summary(z)
	groups, strata := t.groups()
	ests := t.estimates(len(labels))
	ses := bootstrapCorrSE(ests, t.a, t.w, groups, strata, boot, seed)
	var out []Metrics
	for e, label := range labels {
		m := t.metrics(label, ests[e], z)
		m.PearsonSE, m.SpearmanSE = Num(ses.pearson[e]), Num(ses.spearman[e])
		for h := range NumStrata {
			m.ByStratumSE = append(m.ByStratumSE, Num(ses.byStratum[e][h]))
		}
		out = append(out, m)
	}
	return ts, out
}

// truthColumns are the audited steps whose truth is defined, with the columns the statistics
// read.
type truthColumns struct {
	steps []StepResult
	// a, se and w are each step's A = Q − V, its standard error and its selection weight.
	a, se, w []float64
	// a2 and se2 are A² and SE².
	a2, se2 []float64
}

// newTruthColumns keeps the steps whose A and standard error are defined.
func newTruthColumns(steps []StepResult) truthColumns {
	var keep []StepResult
	for _, s := range steps {
		if !math.IsNaN(float64(s.A)) && !math.IsNaN(float64(s.ASE)) {
			keep = append(keep, s)
		}
	}
	n := len(keep)
	t := truthColumns{steps: keep, a: make([]float64, n), se: make([]float64, n), w: make([]float64, n),
		a2: make([]float64, n), se2: make([]float64, n)}
	for i, s := range keep {
		t.a[i], t.se[i], t.w[i] = float64(s.A), float64(s.ASE), s.Weight
		t.se2[i], t.a2[i] = t.se[i]*t.se[i], t.a[i]*t.a[i]
	}
	return t
}

// summary describes the truth itself: its mean and variance, the noise floor and the
// correlation ceiling it puts on any estimator, and the steps whose sign it resolves.
func (t truthColumns) summary(z float64) TruthSummary {
	var ts TruthSummary
	ts.Mean = Num(WeightedMean(t.a, t.w))
	ts.Var = Num(WeightedMean(t.a2, t.w) - float64(ts.Mean)*float64(ts.Mean))
	ts.NoiseFloor = Num(WeightedMean(t.se2, t.w))
	ts.Ceiling = Num(math.NaN())
	if ts.Var > ts.NoiseFloor && ts.Var > 0 {
		ts.Ceiling = Num(math.Sqrt(1 - float64(ts.NoiseFloor/ts.Var)))
	}
	_, resolved := SignAgreement(t.a, t.a, t.se, t.w, z)
	ts.Resolved = Num(resolved)
	for i := range t.a {
		if t.a[i] != 0 && math.Abs(t.a[i]) >= z*t.se[i] {
			ts.ResolvedSteps++
		}
	}
	return ts
}

// groups are the index lists the bootstrap resamples within: the groups of steps the selection
// drew from (the strata, by name, in order of appearance), and the steps of each stratum in
// StratumName order, over which the per-stratum correlations are taken.
func (t truthColumns) groups() (groups, strata [][]int) {
	group := map[string]int{}
	strata = make([][]int, NumStrata)
	for i, s := range t.steps {
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
	return groups, strata
}

// estimates are the advantages of each of the n estimators at the steps.
func (t truthColumns) estimates(n int) [][]float64 {
	ests := make([][]float64, n)
	for e := range n {
		ests[e] = make([]float64, len(t.steps))
		for i, s := range t.steps {
			ests[e][i] = s.Est[e]
		}
	}
	return ests
}

// metrics compares one estimator's advantages est with the truth; the standard errors are
// left to the caller.
func (t truthColumns) metrics(label string, est []float64, z float64) Metrics {
	m := Metrics{Label: label}
	m.Pearson = Num(Pearson(est, t.a, t.w))
	m.Spearman = Num(Spearman(est, t.a, t.w))
	sign, _ := SignAgreement(est, t.a, t.se, t.w, z)
	m.Sign = Num(sign)
	c, mse := ScaleMatch(est, t.a, t.w)
	m.Scale, m.MSE = Num(c), Num(mse)
	m.NMSE = Num(math.NaN())
	if meanA2 := WeightedMean(t.a2, t.w); meanA2 > 0 {
		m.NMSE = Num(mse / meanA2)
	}
	for h := range NumStrata {
		var x, y []float64
		for i, s := range t.steps {
			if s.Stratum == StratumName(h) {
				x, y = append(x, est[i]), append(y, t.a[i])
			}
		}
		m.ByStratum = append(m.ByStratum, Num(Pearson(x, y, nil)))
	}
	for _, sl := range []string{SliceFailedProgress, SliceSuccessNoProgress} {
		m.Slices = append(m.Slices, t.slice(sl, est, c))
	}
	return m
}

// slice compares the scale-matched estimate c·est with the truth on the steps of one slice.
func (t truthColumns) slice(name string, est []float64, c float64) SliceMetrics {
	var x, y, ww []float64
	for i, s := range t.steps {
		if inSlice(s, name) {
			x, y, ww = append(x, c*est[i]), append(y, t.a[i]), append(ww, t.w[i])
		}
	}
	sm := SliceMetrics{Name: name, N: len(x)}
	sm.Truth, sm.Estimate = Num(WeightedMean(y, ww)), Num(WeightedMean(x, ww))
	sm.Bias = sm.Estimate - sm.Truth
	sm.Positive, sm.TruthPositive = Num(positiveShare(x, ww)), Num(positiveShare(y, ww))
	return sm
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
