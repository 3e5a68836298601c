package compare

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
)

// pairedSection is the report's paired comparison: the words, the paired table of final scores,
// the runs left out and the variance decomposition.
func (c *Comparison) pairedSection(plots PlotFiles) doc {
	o := c.Options
	base := o.Baseline
	d := doc{heading{2, "Paired comparison against " + base}}
	if c.NoPairs != "" {
		return append(d, para("No paired table: "+c.NoPairs+". The unpaired statistics below treat the runs as independent samples."))
	}
	envs := map[string]bool{}
	for _, p := range c.Pairs {
		envs[p.Env] = true
	}
	d = append(d, para(fmt.Sprintf("Runs are paired when they share the environment, the seed and the initial weights (the warm start's or policy.init's SHA-256 that summary.json records, or random weights drawn from the seed): %d pairs in %d environment(s). Differences are method − %s; final score: %s. Intervals: %g %% percentile bootstrap over the pairs (over all environments: within each environment, on normalised scores), %d resamples, and the paired t-test's interval, which the sentences below use where it is wider: with a handful of pairs the percentile bootstrap is too narrow. %s A method differs from %s when its Holm-corrected paired t p < %g.",
		len(c.Pairs), len(envs), base, strings.ToLower(c.Protocol.Final), 100*o.Bootstrap.Confidence, o.Bootstrap.Resamples,
		c.holmWords(), base, alphaOf(o.Bootstrap.Confidence))))
	var words bullet
	for _, r := range c.PairedRows(AllEnvs, MeasureFinal) {
		if len(c.Envs) > 1 {
			words = append(words, r.Words(base, o.Bootstrap.Confidence))
		}
	}
	for _, env := range c.Envs {
		words = append(words, c.envPairedWords(env))
	}
	d = append(d, words)
	d = append(d, c.pairedTable(MeasureFinal))
	if plots.Paired != "" {
		d = append(d, figure{"paired differences from " + base, filepath.ToSlash(filepath.Join(PlotDir, plots.Paired))})
	}
	if len(c.Unpaired) > 0 {
		d = append(d, heading{3, "Runs left out of the pairing"}, bullet(c.Unpaired))
	}
	if len(c.Variance) > 0 {
		alpha := alphaOf(o.Bootstrap.Confidence)
		t := table{head: []string{"env", "methods × seeds", "seed share", "method share", "residual share", "residual SD", "seed SD",
			fmt.Sprintf("seed pairs for %g / %g (paired)", PowerDeltaSmall, PowerDeltaLarge),
			fmt.Sprintf("runs per method for %g / %g (unpaired)", PowerDeltaSmall, PowerDeltaLarge)}}
		for _, v := range c.Variance {
			seed, method, resid := v.Shares()
			t.rows = append(t.rows, []string{v.Env, fmt.Sprintf("%d × %d", len(v.Methods), len(v.Seeds)), fmtPct(seed), fmtPct(method), fmtPct(resid),
				fmtNum(v.ResidSD), fmtNum(v.SeedSD), fmtCount(v.SeedsNeeded[0]) + " / " + fmtCount(v.SeedsNeeded[1]),
				fmtCount(v.RunsPerArm[0]) + " / " + fmtCount(v.RunsPerArm[1])})
		}
		d = append(d, heading{3, "Variance decomposition: why pairing matters"},
			para(fmt.Sprintf("Per environment, the normalised final scores of the seeds on which every method ran from the same initial weights, decomposed as score = mean + method effect + seed effect + residual (two-way analysis of variance without interaction): each part's share of the total sum of squares, the residual SD (one run's noise once seed and method are known) and the seed SD (the seed effect's variance component). Power line, two-sided tests at level %g with %g %% power (noncentral t): the seed pairs a paired t-test needs to detect a mean difference of %g and of %g (differences with SD √2 × residual SD), and the runs per method an unpaired two-sample t-test needs for the same differences (runs with SD √(seed SD² + residual SD²)).",
				alpha, 100*PowerLevel, PowerDeltaSmall, PowerDeltaLarge)),
			t)
	}
	return d
}

// holmWords says which tests the report runs and over which family Holm's correction ran, with
// the number of tests it holds.
func (c *Comparison) holmWords() string {
	base := c.Options.Baseline
	if c.Options.Holm != HolmFamily {
		return fmt.Sprintf("Tests: two-sided paired t-test and Wilcoxon signed-rank test, each Holm-corrected over the %d method(s) compared with %s in the same environment.",
			len(c.Methods)-1, base)
	}
	n, nt, nw := c.HolmFamilySize(MeasureFinal)
	envs := map[string]bool{}
	for _, r := range c.Paired {
		if r.Env != AllEnvs {
			envs[r.Env] = true
		}
	}
	s := fmt.Sprintf("Tests: two-sided paired t-test and Wilcoxon signed-rank test, each Holm-corrected once over the whole family (holm: %s): every (environment, method) comparison with %s on the final score, %d test(s) (%d environment(s), %d method(s)).",
		HolmFamily, base, n, len(envs), len(c.Methods)-1)
	if nt != n || nw != n {
		s += fmt.Sprintf(" %d paired t-test(s) and %d Wilcoxon test(s) of them have a p-value; the correction of each test runs over those.", nt, nw)
	}
	if len(c.Envs) > 1 {
		s += fmt.Sprintf(" The rows over all environments stay outside the family: each is Holm-corrected over the %d method(s) compared with %s over all environments.", len(c.Methods)-1, base)
	}
	return s + " The paired gains form a family of their own, corrected the same way."
}

// envPairedWords sums up one environment's paired rows of final scores in one sentence.
func (c *Comparison) envPairedWords(env string) string {
	alpha := alphaOf(c.Options.Bootstrap.Confidence)
	base := c.Options.Baseline
	var differ, same []string
	for _, r := range c.PairedRows(env, MeasureFinal) {
		txt := fmt.Sprintf("%s %s [%s, %s]", r.Method, signed(r.Mean.Value), signed(min(r.Mean.Lo, r.TInterval.Lo)), signed(max(r.Mean.Hi, r.TInterval.Hi)))
		if r.Differs(alpha) {
			differ = append(differ, txt+fmt.Sprintf(" (Holm p %s)", fmtPValue(r.THolm)))
		} else {
			same = append(same, txt)
		}
	}
	s := env + ", paired differences from " + base + " (mean [outer ends of the t and bootstrap intervals]): "
	if len(differ) > 0 {
		s += "differ: " + strings.Join(differ, "; ") + ". "
	}
	if len(same) > 0 {
		s += "not told apart: " + strings.Join(same, "; ") + "."
	}
	if len(differ) == 0 && len(same) == 0 {
		s += "no pairs."
	}
	return strings.TrimSpace(s)
}

// pairedTable is the table of one measure's paired rows, over all environments first.
func (c *Comparison) pairedTable(measure string) table {
	t := table{head: []string{"env", "method", "pairs", "mean difference [95 % bootstrap CI]", "95 % t interval", "median", "SD", "ahead / tied / behind",
		"paired t (df): p", "Holm p", "Wilcoxon W: p (method)", "Holm p"}}
	for _, env := range append([]string{AllEnvs}, c.Envs...) {
		for _, r := range c.PairedRows(env, measure) {
			if env == AllEnvs && len(c.Envs) == 1 {
				continue
			}
			t.rows = append(t.rows, []string{env, r.Method, strconv.Itoa(r.N),
				fmt.Sprintf("%s [%s, %s]", signed(r.Mean.Value), signed(r.Mean.Lo), signed(r.Mean.Hi)),
				fmt.Sprintf("[%s, %s]", signed(r.TInterval.Lo), signed(r.TInterval.Hi)), signed(r.Median), fmtNum(r.SD),
				fmt.Sprintf("%d / %d / %d", r.Won, r.Tied, r.Lost),
				fmt.Sprintf("%s (%s): %s", fmtStat(r.T.T), fmtStat(r.T.DF), fmtPValue(r.T.P)), fmtPValue(r.THolm),
				fmt.Sprintf("%s: %s (%s)", fmtRankSum(r.Wilcoxon.Stat), fmtPValue(r.Wilcoxon.P), wilcoxonMethod(r.Wilcoxon)), fmtPValue(r.WilcoxonHolm)})
		}
	}
	return t
}

// fmtRankSum formats a rank sum (a multiple of ½), "n/a" when undefined.
func fmtRankSum(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func wilcoxonMethod(w WilcoxonResult) string {
	if w.Method == "" {
		return "no non-zero difference"
	}
	return w.Method
}

// gainSection is the report's gain over the start: per cell and over all environments, and the
// paired differences of gains where they are not those of the final scores.
func (c *Comparison) gainSection() doc {
	o := c.Options
	d := doc{heading{2, "Gain over the start"}}
	if len(c.Gains) == 0 {
		return append(d, para(fmt.Sprintf("No run has an evaluation of %s before training (eval.at_start), so there is no gain to report.", o.Metric)))
	}
	d = append(d, para(fmt.Sprintf("Each run's final score minus its evaluation before training (iteration 0: the same metric, panel and decoding), so that a method is credited with what it learned rather than with where its warm start began; over all environments on normalised scores, pooled. IQM with its %g %% bootstrap interval over runs.",
		100*o.Bootstrap.Confidence)))
	t := table{head: []string{"env", "method", "runs", "start (mean)", "final (mean)", "gain (mean)", "gain IQM [95 % CI]"}}
	for _, env := range append([]string{AllEnvs}, c.Envs...) {
		if env == AllEnvs && len(c.Envs) == 1 {
			continue
		}
		for _, g := range c.Gains {
			if g.Env == env {
				t.rows = append(t.rows, []string{env, g.Method, strconv.Itoa(g.N), fmtNum(g.Start), fmtNum(g.Final), signed(g.Gain), fmtEst(g.IQM)})
			}
		}
	}
	d = append(d, t)
	if len(c.NoStart) > 0 {
		d = append(d, para(fmt.Sprintf("Left out (no evaluation before training): %s.", strings.Join(c.NoStart, ", "))))
	}
	switch {
	case c.NoPairs != "":
	case c.startsEqual():
		d = append(d, para("Within every pair both runs scored the same before training (the same initial weights, evaluated on the same panel), so the paired differences of gains equal those of the final scores above; "+PairedCSV+" lists both."))
	default:
		d = append(d, para("Paired differences of gains (the two runs of a pair scored differently before training):"), c.pairedTable(MeasureGain))
	}
	return d
}

func fmtPct(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.0f %%", 100*v)
}

func fmtStat(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return strings.Replace(strconv.FormatFloat(v, 'f', 2, 64), "-", "−", 1)
}

// fmtCount formats a sample size ("> 100000" beyond the search, "n/a" when undefined).
func fmtCount(v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case v > maxSampleSize:
		return fmt.Sprintf("> %d", maxSampleSize)
	}
	return strconv.Itoa(int(v))
}
