package compare

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/graftrl/graftrl/rundir"
)

// Measures of the paired and gain tables (PairedRow.Measure).
const (
	// MeasureFinal is the final score (Options.Final's rule).
	MeasureFinal = "final"
	// MeasureGain is the final score minus the run's evaluation before training (iteration 0).
	MeasureGain = "gain"
)

// Families of Holm's correction (Options.Holm): the paired tests one correction runs over.
const (
	// HolmEnv corrects within each environment and measure, over the methods compared with the
	// baseline there.
	HolmEnv = "env"
	// HolmFamily corrects once per measure over every (environment, method) comparison with the
	// baseline: the whole primary family, cells × methods, fixed before the runs. The rows over
	// all environments (AllEnvs) stay outside it, corrected over the methods alone.
	HolmFamily = "family"
)

// The effect sizes, in normalised score units, that the variance decomposition's power line asks
// about (VarianceRow.SeedsNeeded and RunsPerArm, in this order).
const (
	PowerDeltaSmall = 0.05
	PowerDeltaLarge = 0.10
)

// PowerLevel is the power the sample sizes of the variance decomposition are computed for.
const PowerLevel = 0.8

// SeedPair is a run of a method and the baseline's run it is paired with: the same environment,
// seed and initial weights.
type SeedPair struct {
	Env  string
	Seed uint64
	// Run is the method's run, Base the baseline's.
	Run, Base *Run
}

// PairedRow is one method against the baseline, seed by seed, in one environment (or AllEnvs:
// every pair of every environment, on normalised scores, when there are several) on one measure.
type PairedRow struct {
	Env, Method string
	// Measure is MeasureFinal or MeasureGain.
	Measure string
	// N is the number of pairs, Envs the number of environments they come from.
	N, Envs int
	// Seeds are the pairs' seeds (per-environment rows only).
	Seeds []uint64
	// Mean is the mean difference (method − baseline) with its percentile-bootstrap interval,
	// resampling pairs (within each environment for AllEnvs).
	Mean Estimate
	// TInterval is the paired t-test's confidence interval of the mean difference,
	// mean ± t₍₁₋α/₂, n−1₎·SD/√n (NaN where the t-test is undefined): it excludes zero exactly when
	// the uncorrected t-test rejects, and unlike the percentile bootstrap it does not undercover
	// with a handful of pairs.
	TInterval Estimate
	// Median and SD are the median and sample standard deviation of the differences.
	Median, SD float64
	// Won, Tied and Lost count the pairs the method scored above, equal to and below the
	// baseline.
	Won, Tied, Lost int
	// T is the paired t-test and THolm its p-value after Holm's correction over the family
	// Options.Holm chooses: the methods compared with the baseline in the same environment and
	// measure (HolmEnv), or every environment's and method's comparison of the measure
	// (HolmFamily; an AllEnvs row is corrected over the methods alone).
	T     TTestResult
	THolm float64
	// Wilcoxon is the signed-rank test and WilcoxonHolm its Holm-corrected p-value.
	Wilcoxon     WilcoxonResult
	WilcoxonHolm float64
}

// Differs reports whether the paired t-test separates the method from the baseline at level
// alpha after Holm's correction.
func (r PairedRow) Differs(alpha float64) bool { return r.THolm < alpha }

// VarianceRow is the variance decomposition of one environment's final scores: the seeds every
// method ran with the same initial weights, method × seed, two-way without interaction.
type VarianceRow struct {
	Env string
	// Methods and Seeds are the rows and columns of the table decomposed.
	Methods []string
	Seeds   []uint64
	// Decomposition holds the sums of squares (in the metric's units).
	Decomposition
	// SeedsNeeded are the seed pairs a paired t-test (level 1 − confidence, PowerLevel power)
	// needs to detect a mean difference of 0.05 and 0.10 normalised units, with differences of SD
	// √2·ResidSD; RunsPerArm are the runs per method an unpaired t-test needs for the same
	// differences, with one run's SD √(SeedSD² + ResidSD²).
	SeedsNeeded, RunsPerArm [2]float64
}

// GainRow is a method's gain over its start in one environment (or AllEnvs: normalised gains
// pooled over environments, when there are several).
type GainRow struct {
	Env, Method string
	// N is the number of runs with an evaluation before training.
	N int
	// Start and Final are the means of those runs' start and final scores, Gain the mean gain.
	Start, Final, Gain float64
	// IQM is the IQM of the gains with its bootstrap interval.
	IQM Estimate
}

// warmStart names a run's initial weights for pairing: the SHA-256 of its warm start (or
// policy.init) checkpoint, "random" for random initial weights (which the seed determines), and
// "" when they are unknown (no summary.json, or one that does not record the warm start its
// config asks for).
func warmStart(r *Run) string {
	switch {
	case !r.Complete:
		return ""
	case r.InitSHA256 != "":
		return r.InitSHA256
	case r.Config.WarmStart:
		return ""
	}
	return "random"
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func describeStart(r *Run) string {
	switch w := warmStart(r); w {
	case "":
		if !r.Complete {
			return "unknown: no " + rundir.SummaryFile
		}
		return "unknown: summary.json records none"
	case "random":
		return "random initial weights"
	default:
		return "warm start " + shortHash(w)
	}
}

// pairRuns pairs every method's runs with the baseline's: the same environment, seed and
// initial weights. Runs that cannot be paired are named in c.Unpaired.
func (c *Comparison) pairRuns() {
	base := c.Options.Baseline
	if len(c.Methods) < 2 {
		c.NoPairs = "only one method (" + base + "): there is nothing to compare with the baseline"
		return
	}
	for _, env := range c.Envs {
		bc := c.cell(env, base)
		if bc == nil {
			for _, m := range c.Methods[1:] {
				if c.cell(env, m) != nil {
					c.Unpaired = append(c.Unpaired, fmt.Sprintf("env %s: every run of %s (the baseline has no run there)", env, m))
				}
			}
			continue
		}
		bySeed := map[uint64]*Run{}
		for _, r := range bc.Runs {
			bySeed[r.Seed] = r
		}
		used := map[*Run]bool{}
		for _, m := range c.Methods[1:] {
			cell := c.cell(env, m)
			if cell == nil {
				continue
			}
			for _, r := range cell.Runs {
				b, ok := bySeed[r.Seed]
				if !ok {
					c.Unpaired = append(c.Unpaired, fmt.Sprintf("%s (env %s, %s, seed %d): %s has no run with seed %d", r.Dir, env, m, r.Seed, base, r.Seed))
					continue
				}
				wr, wb := warmStart(r), warmStart(b)
				if wr == "" || wb == "" || wr != wb {
					c.Unpaired = append(c.Unpaired, fmt.Sprintf("%s and %s (env %s, seed %d) start from different or unknown initial weights (%s; %s): not paired",
						r.Dir, b.Dir, env, r.Seed, describeStart(r), describeStart(b)))
					continue
				}
				used[b] = true
				c.Pairs = append(c.Pairs, SeedPair{Env: env, Seed: r.Seed, Run: r, Base: b})
			}
		}
		for _, b := range bc.Runs {
			if !used[b] {
				c.Unpaired = append(c.Unpaired, fmt.Sprintf("%s (env %s, %s, seed %d): no other method has a run of seed %d with the same initial weights", b.Dir, env, base, b.Seed, b.Seed))
			}
		}
	}
	if len(c.Pairs) == 0 {
		c.NoPairs = "no run of another method shares a seed and initial weights with a run of " + base + " in the same environment"
	}
}

// measureOf returns a run's score on a measure (ok false when the run has no start for gain).
func (c *Comparison) measureOf(r *Run, measure string) (float64, bool) {
	f := c.finals[r]
	if measure == MeasureFinal {
		return f, true
	}
	s, ok := r.Start(c.Options.Metric)
	return f - s, ok
}

// paired computes the paired tables: per environment and over all, per measure, every method
// against the baseline, Holm-corrected over the family Options.Holm chooses.
func (c *Comparison) paired() error {
	c.pairRuns()
	if c.NoPairs != "" {
		return nil
	}
	for _, measure := range []string{MeasureFinal, MeasureGain} {
		envs := slices.Clone(c.Envs)
		if len(envs) > 1 {
			envs = append(envs, AllEnvs)
		}
		// family holds the indices in c.Paired of the measure's per-environment rows (HolmFamily).
		var family []int
		for _, env := range envs {
			var rows []int
			for _, m := range c.Methods[1:] {
				row, ok, err := c.pairedRow(env, m, measure)
				if err != nil {
					return err
				}
				if ok {
					rows = append(rows, len(c.Paired))
					c.Paired = append(c.Paired, row)
				}
			}
			if c.Options.Holm == HolmFamily && env != AllEnvs {
				family = append(family, rows...)
			} else {
				c.holm(rows)
			}
		}
		c.holm(family)
	}
	return nil
}

// holm sets THolm and WilcoxonHolm of the paired rows at the indices rows: one Holm correction
// over them, separately for each test.
func (c *Comparison) holm(rows []int) {
	tp, wp := make([]float64, len(rows)), make([]float64, len(rows))
	for i, k := range rows {
		tp[i], wp[i] = c.Paired[k].T.P, c.Paired[k].Wilcoxon.P
	}
	th, wh := Holm(tp), Holm(wp)
	for i, k := range rows {
		c.Paired[k].THolm, c.Paired[k].WilcoxonHolm = th[i], wh[i]
	}
}

// HolmFamilySize counts, under HolmFamily, the tests of one measure's family: the
// per-environment comparisons with the baseline (every one, AllEnvs rows left out), and those
// whose paired t-test and whose Wilcoxon test have a p-value (Holm's m: an undefined test is
// left out of its correction).
func (c *Comparison) HolmFamilySize(measure string) (comparisons, tTests, wTests int) {
	for _, r := range c.Paired {
		if r.Measure != measure || r.Env == AllEnvs {
			continue
		}
		comparisons++
		if !math.IsNaN(r.T.P) {
			tTests++
		}
		if !math.IsNaN(r.Wilcoxon.P) {
			wTests++
		}
	}
	return comparisons, tTests, wTests
}

func (c *Comparison) pairedRow(env, method, measure string) (PairedRow, bool, error) {
	row := PairedRow{Env: env, Method: method, Measure: measure}
	diffs := make(Strata[float64], len(c.Envs))
	var all []float64
	for _, p := range c.Pairs {
		if p.Run.Method != method || (env != AllEnvs && p.Env != env) {
			continue
		}
		x, okx := c.measureOf(p.Run, measure)
		y, oky := c.measureOf(p.Base, measure)
		if !okx || !oky {
			continue
		}
		d := x - y
		if env == AllEnvs {
			r := c.rangeOf(p.Env)
			d = r.Normalize(x) - r.Normalize(y)
		} else {
			row.Seeds = append(row.Seeds, p.Seed)
		}
		i := slices.Index(c.Envs, p.Env)
		diffs[i] = append(diffs[i], d)
		all = append(all, d)
	}
	if len(all) == 0 {
		return row, false, nil
	}
	for _, st := range diffs {
		if len(st) > 0 {
			row.Envs++
		}
	}
	row.N = len(all)
	row.Median = Median(all)
	row.SD = math.NaN()
	if len(all) > 1 {
		row.SD = stat.StdDev(all, nil)
	}
	row.Won, row.Tied, row.Lost = signCounts(all)
	row.T = PairedTTest(all)
	row.TInterval = NaNEstimate()
	if !math.IsNaN(row.T.T) {
		m := Mean(all)
		half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: row.T.DF}.Quantile(1-(1-c.Options.Bootstrap.Confidence)/2) * row.SD / math.Sqrt(float64(row.N))
		row.TInterval = Estimate{Value: m, Lo: m - half, Hi: m + half}
	}
	row.Wilcoxon = WilcoxonSignedRank(all)
	var err error
	row.Mean, err = MeanCI(diffs, c.seeded("paired", measure, env, method))
	return row, true, err
}

// variances decomposes each environment's final scores over the seeds on which every method has
// a run paired with the baseline's.
func (c *Comparison) variances() {
	if c.NoPairs != "" {
		return
	}
	alpha := alphaOf(c.Options.Bootstrap.Confidence)
	for _, env := range c.Envs {
		var methods []string
		for _, m := range c.Methods {
			if c.cell(env, m) != nil {
				methods = append(methods, m)
			}
		}
		if len(methods) < 2 {
			continue
		}
		// paired[seed][method] is the method's run of the seed, paired with the baseline's.
		paired := map[uint64]map[string]*Run{}
		for _, p := range c.Pairs {
			if p.Env != env {
				continue
			}
			if paired[p.Seed] == nil {
				paired[p.Seed] = map[string]*Run{methods[0]: p.Base}
			}
			paired[p.Seed][p.Run.Method] = p.Run
		}
		var seeds []uint64
		for s, byMethod := range paired {
			if len(byMethod) == len(methods) {
				seeds = append(seeds, s)
			}
		}
		slices.Sort(seeds)
		y := make([][]float64, len(methods))
		for i, m := range methods {
			for _, s := range seeds {
				y[i] = append(y[i], c.rangeOf(env).Normalize(c.finals[paired[s][m]]))
			}
		}
		d, ok := TwoWay(y)
		if !ok {
			continue
		}
		row := VarianceRow{Env: env, Methods: methods, Seeds: seeds, Decomposition: d}
		for k, delta := range [2]float64{PowerDeltaSmall, PowerDeltaLarge} {
			row.SeedsNeeded[k] = SeedsNeeded(delta, math.Sqrt2*d.ResidSD, alpha, PowerLevel)
			row.RunsPerArm[k] = RunsPerArmNeeded(delta, math.Hypot(d.SeedSD, d.ResidSD), alpha, PowerLevel)
		}
		c.Variance = append(c.Variance, row)
	}
}

// gains computes each cell's and each method's (over all environments, normalised) gain over
// the start; runs without an evaluation before training are named in c.NoStart.
func (c *Comparison) gains() error {
	m := c.Options.Metric
	// pooled[method] holds the normalised gains, starts and finals of its runs, per environment.
	type normalised struct{ gains, starts, finals Strata[float64] }
	pooled := map[string]*normalised{}
	for _, cell := range c.Cells {
		row := GainRow{Env: cell.Env, Method: cell.Method}
		var starts, finals, gains []float64
		for i, r := range cell.Runs {
			s, ok := r.Start(m)
			if !ok {
				c.NoStart = append(c.NoStart, r.Dir)
				continue
			}
			starts, finals, gains = append(starts, s), append(finals, cell.Scores[i]), append(gains, cell.Scores[i]-s)
			rg := c.rangeOf(cell.Env)
			p := pooled[cell.Method]
			if p == nil {
				n := len(c.Envs)
				p = &normalised{make(Strata[float64], n), make(Strata[float64], n), make(Strata[float64], n)}
				pooled[cell.Method] = p
			}
			e := slices.Index(c.Envs, cell.Env)
			start, final := rg.Normalize(s), rg.Normalize(cell.Scores[i])
			p.gains[e], p.starts[e], p.finals[e] = append(p.gains[e], final-start), append(p.starts[e], start), append(p.finals[e], final)
		}
		if len(gains) == 0 {
			continue
		}
		row.N, row.Start, row.Final, row.Gain = len(gains), Mean(starts), Mean(finals), Mean(gains)
		var err error
		if row.IQM, err = IQMCI(Strata[float64]{gains}, c.seeded("gain-iqm", cell.Env, cell.Method)); err != nil {
			return err
		}
		c.Gains = append(c.Gains, row)
	}
	for _, method := range c.Methods {
		p, ok := pooled[method]
		if !ok || len(c.Envs) < 2 {
			continue
		}
		row := GainRow{Env: AllEnvs, Method: method, N: len(pool(p.gains, nil)), Gain: Mean(pool(p.gains, nil)),
			Start: Mean(pool(p.starts, nil)), Final: Mean(pool(p.finals, nil))}
		var err error
		if row.IQM, err = IQMCI(p.gains, c.seeded("agg-gain-iqm", method)); err != nil {
			return err
		}
		c.Gains = append(c.Gains, row)
	}
	return nil
}

// PairedRows returns the paired rows of one measure and environment (AllEnvs for the rows over
// every environment), in method order.
func (c *Comparison) PairedRows(env, measure string) []PairedRow {
	var out []PairedRow
	for _, r := range c.Paired {
		if r.Env == env && r.Measure == measure {
			out = append(out, r)
		}
	}
	return out
}

// startsEqual reports whether every pair's two runs had the same start score, so that paired
// differences of gains equal those of final scores.
func (c *Comparison) startsEqual() bool {
	for _, p := range c.Pairs {
		a, oka := p.Run.Start(c.Options.Metric)
		b, okb := p.Base.Start(c.Options.Metric)
		if oka != okb || a != b {
			return false
		}
	}
	return true
}

// Words says, for one paired row, how the method compares with the baseline under the paired
// analysis: by how much, whether the tests separate them, and what differences the interval
// rules out.
func (r PairedRow) Words(baseline string, confidence float64) string {
	alpha := alphaOf(confidence)
	where := "in " + r.Env
	if r.Env == AllEnvs {
		where = fmt.Sprintf("over %d environment(s), normalised", r.Envs)
	}
	s := fmt.Sprintf("%s − %s %s (%s, %d seed pairs): mean %s (bootstrap [%s, %s]; t interval [%s, %s]), median %s; ahead in %d, tied in %d, behind in %d; paired t p = %s (Holm %s), Wilcoxon %s p = %s (Holm %s).",
		r.Method, baseline, where, r.Measure, r.N, signed(r.Mean.Value), signed(r.Mean.Lo), signed(r.Mean.Hi),
		signed(r.TInterval.Lo), signed(r.TInterval.Hi), signed(r.Median),
		r.Won, r.Tied, r.Lost, fmtPValue(r.T.P), fmtPValue(r.THolm), r.Wilcoxon.Method, fmtPValue(r.Wilcoxon.P), fmtPValue(r.WilcoxonHolm))
	switch {
	case math.IsNaN(r.THolm):
		s += " No t-test is possible (fewer than two pairs, or differences that do not vary)."
	case r.Differs(alpha):
		dir := "ahead of"
		if r.Mean.Value < 0 {
			dir = "behind"
		}
		s += fmt.Sprintf(" %s is %s %s by %s (Holm-corrected paired t-test at %g).", r.Method, dir, baseline, signed(r.Mean.Value), alpha)
	default:
		s += fmt.Sprintf(" The paired tests do not tell %s from %s.", r.Method, baseline)
	}
	if lo, hi := r.TInterval.Lo, r.TInterval.Hi; !math.IsNaN(lo) {
		s += fmt.Sprintf(" The data rule out a difference above %s or below %s (the outer ends of the %g %% t and bootstrap intervals).",
			signed(max(hi, r.Mean.Hi)), signed(min(lo, r.Mean.Lo)), 100*confidence)
	}
	if agreeW := r.WilcoxonHolm < alpha; !math.IsNaN(r.WilcoxonHolm) && !math.IsNaN(r.THolm) && agreeW != r.Differs(alpha) {
		if agreeW {
			s += " The Wilcoxon test does separate them."
		} else {
			s += " The Wilcoxon test does not separate them."
		}
	}
	return s
}

// alphaOf is the test level that matches a confidence level (0.95: 0.05), rounded so that it
// prints as it reads.
func alphaOf(confidence float64) float64 { return math.Round((1-confidence)*1e12) / 1e12 }

// signed formats a difference with its sign, three decimals.
func signed(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	if v >= 0 {
		return "+" + fmtNum(v)
	}
	return strings.Replace(fmtNum(v), "-", "−", 1)
}

// fmtPValue formats a p-value with three significant digits ("<0.001" below that, "n/a" when
// undefined).
func fmtPValue(p float64) string {
	switch {
	case math.IsNaN(p):
		return "n/a"
	case p < 0.001:
		return "<0.001"
	}
	return fmt.Sprintf("%.3g", p)
}
