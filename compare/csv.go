package compare

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CSV files WriteCSV writes, one per table of the report plus the plotted series.
const (
	PerEnvCSV    = "per_env.csv"
	AggregateCSV = "aggregate.csv"
	RunsCSV      = "runs.csv"
	CurvesCSV    = "curves.csv"
	ProfilesCSV  = "profiles.csv"
	PairsCSV     = "pairs.csv"
	PairedCSV    = "paired.csv"
	VarianceCSV  = "variance.csv"
	GainCSV      = "gain.csv"
)

// csvNum formats a number for the CSV files: six significant digits, empty for NaN (undefined).
func csvNum(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

func csvEst(e Estimate) []string { return []string{csvNum(e.Value), csvNum(e.Lo), csvNum(e.Hi)} }

// PairsTable is every ranking's pairs: per environment (and "all"), P(a > b) with its interval,
// a ranked above b by IQM, and whether the interval separates them.
func (c *Comparison) PairsTable() [][]string {
	rows := [][]string{{"env", "a", "b", "p_a_over_b", "p_lo", "p_hi", "separated"}}
	for _, r := range c.Rankings {
		for _, p := range r.Pairs {
			rows = append(rows, append(append([]string{p.Env, p.A, p.B}, csvEst(p.P)...), strconv.FormatBool(p.Separated())))
		}
	}
	return rows
}

// PerEnvTable is the per-environment table: one row per environment and method.
func (c *Comparison) PerEnvTable() [][]string {
	rows := [][]string{{"env", "method", "n", "seeds", "budget_min", "budget_max", "mean", "std",
		"iqm", "iqm_lo", "iqm_hi", "p_improve", "p_improve_lo", "p_improve_hi", "welch_t", "welch_df", "welch_p",
		"median", "optimality_gap"}}
	for _, cell := range c.Cells {
		var seeds []string
		for _, s := range cell.Seeds() {
			seeds = append(seeds, strconv.FormatUint(s, 10))
		}
		row := []string{cell.Env, cell.Method, strconv.Itoa(cell.N()), strings.Join(seeds, " "),
			strconv.FormatInt(cell.BudgetMin, 10), strconv.FormatInt(cell.BudgetMax, 10),
			csvNum(cell.Mean), csvNum(cell.Std)}
		row = append(row, csvEst(cell.IQM)...)
		row = append(row, csvEst(cell.Improvement)...)
		row = append(row, csvNum(cell.Welch.T), csvNum(cell.Welch.DF), csvNum(cell.Welch.P))
		row = append(row, csvNum(cell.Median), csvNum(cell.OptimalityGap))
		rows = append(rows, row)
	}
	return rows
}

// AggregateTable is the aggregate table: one row per method, on normalised scores.
func (c *Comparison) AggregateTable() [][]string {
	rows := [][]string{{"method", "envs", "n", "iqm", "iqm_lo", "iqm_hi", "mean", "mean_lo", "mean_hi",
		"p_improve", "p_improve_lo", "p_improve_hi", "median", "median_lo", "median_hi",
		"optimality_gap", "optimality_gap_lo", "optimality_gap_hi"}}
	for _, a := range c.Aggregate {
		row := []string{a.Method, strconv.Itoa(a.Envs), strconv.Itoa(a.N)}
		row = append(row, csvEst(a.IQM)...)
		row = append(row, csvEst(a.Mean)...)
		row = append(row, csvEst(a.Improvement)...)
		row = append(row, csvEst(a.Median)...)
		row = append(row, csvEst(a.OptimalityGap)...)
		rows = append(rows, row)
	}
	return rows
}

// RunsTable lists every run with its final score, its score before training and its gain (at
// full precision, so that the paired statistics can be recomputed from it exactly; empty when the
// run has no evaluation before training), and its initial weights (warm_start: the checkpoint's
// SHA-256, "random", or empty when unknown).
func (c *Comparison) RunsTable() [][]string {
	rows := [][]string{{"dir", "name", "env", "method", "estimator", "seed", "iterations", "env_steps", "tokens", "complete", "final",
		"start", "gain", "warm_start"}}
	full := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, cell := range c.Cells {
		for i, r := range cell.Runs {
			start, gain := "", ""
			if s, ok := r.Start(c.Options.Metric); ok {
				start, gain = full(s), full(cell.Scores[i]-s)
			}
			rows = append(rows, []string{r.Dir, r.Name, r.Env, r.Method, r.Estimator, strconv.FormatUint(r.Seed, 10),
				strconv.Itoa(r.Iterations), strconv.FormatInt(r.EnvSteps, 10), strconv.FormatInt(r.Tokens, 10),
				strconv.FormatBool(r.Complete), full(cell.Scores[i]), start, gain, warmStart(r)})
		}
	}
	return rows
}

// PairedTable is every paired row: per measure, environment (and "all") and method, the paired
// difference against the baseline with both tests.
func (c *Comparison) PairedTable() [][]string {
	rows := [][]string{{"measure", "env", "method", "baseline", "pairs", "mean", "mean_lo", "mean_hi", "t_lo", "t_hi", "median", "sd",
		"won", "tied", "lost", "t", "df", "p_t", "p_t_holm", "w_plus", "w_minus", "w", "p_w", "p_w_holm", "w_method", "w_nonzero"}}
	for _, r := range c.Paired {
		row := []string{r.Measure, r.Env, r.Method, c.Options.Baseline, strconv.Itoa(r.N)}
		row = append(row, csvEst(r.Mean)...)
		row = append(row, csvNum(r.TInterval.Lo), csvNum(r.TInterval.Hi), csvNum(r.Median), csvNum(r.SD), strconv.Itoa(r.Won), strconv.Itoa(r.Tied), strconv.Itoa(r.Lost),
			csvNum(r.T.T), csvNum(r.T.DF), csvNum(r.T.P), csvNum(r.THolm),
			csvNum(r.Wilcoxon.WPlus), csvNum(r.Wilcoxon.WMinus), csvNum(r.Wilcoxon.Stat), csvNum(r.Wilcoxon.P), csvNum(r.WilcoxonHolm),
			r.Wilcoxon.Method, strconv.Itoa(r.Wilcoxon.N))
		rows = append(rows, row)
	}
	return rows
}

// VarianceTable is the variance decomposition of every environment that has one.
func (c *Comparison) VarianceTable() [][]string {
	rows := [][]string{{"env", "methods", "seeds", "ss_total", "ss_seed", "ss_method", "ss_resid", "seed_share", "method_share",
		"resid_share", "resid_sd", "seed_sd", "paired_seeds_0.05", "paired_seeds_0.10", "unpaired_runs_0.05", "unpaired_runs_0.10"}}
	for _, v := range c.Variance {
		var seeds []string
		for _, s := range v.Seeds {
			seeds = append(seeds, strconv.FormatUint(s, 10))
		}
		seed, method, resid := v.Shares()
		rows = append(rows, []string{v.Env, strings.Join(v.Methods, " "), strings.Join(seeds, " "),
			csvNum(v.SSTotal), csvNum(v.SSSeed), csvNum(v.SSMethod), csvNum(v.SSResid), csvNum(seed), csvNum(method), csvNum(resid),
			csvNum(v.ResidSD), csvNum(v.SeedSD), csvNum(v.SeedsNeeded[0]), csvNum(v.SeedsNeeded[1]), csvNum(v.RunsPerArm[0]), csvNum(v.RunsPerArm[1])})
	}
	return rows
}

// GainTable is the gain over the start per cell and per method over all environments.
func (c *Comparison) GainTable() [][]string {
	rows := [][]string{{"env", "method", "n", "start", "final", "gain", "gain_iqm", "gain_iqm_lo", "gain_iqm_hi"}}
	for _, g := range c.Gains {
		rows = append(rows, append([]string{g.Env, g.Method, strconv.Itoa(g.N), csvNum(g.Start), csvNum(g.Final), csvNum(g.Gain)}, csvEst(g.IQM)...))
	}
	return rows
}

// CurvesTable holds the plotted learning curves.
func (c *Comparison) CurvesTable() [][]string {
	rows := [][]string{{"env", "method", "n", "env_steps", "iqm", "lo", "hi"}}
	for _, cv := range c.Curves {
		for k, e := range cv.IQM {
			rows = append(rows, append([]string{cv.Env, cv.Method, strconv.Itoa(cv.N), csvNum(cv.EnvSteps[k])}, csvEst(e)...))
		}
	}
	return rows
}

// ProfilesTable holds the plotted performance profiles.
func (c *Comparison) ProfilesTable() [][]string {
	rows := [][]string{{"method", "tau", "frac", "lo", "hi"}}
	for _, p := range c.Profiles {
		for k, e := range p.Frac {
			rows = append(rows, append([]string{p.Method, csvNum(p.Tau[k])}, csvEst(e)...))
		}
	}
	return rows
}

// WriteCSV writes every table and plotted series of the comparison as CSV files into dir
// (levels.csv, stepsize.csv and slopes.csv only when they have rows).
func (c *Comparison) WriteCSV(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("csv: %w", err)
	}
	for name, rows := range map[string][][]string{
		PerEnvCSV: c.PerEnvTable(), AggregateCSV: c.AggregateTable(), RunsCSV: c.RunsTable(), PairsCSV: c.PairsTable(),
		CurvesCSV: c.CurvesTable(), ProfilesCSV: c.ProfilesTable(),
		PairedCSV: c.PairedTable(), VarianceCSV: c.VarianceTable(), GainCSV: c.GainTable(), LevelsCSV: c.LevelsTable(),
		StepSizeCSV: c.StepSizeTable(), SlopesCSV: c.SlopesTable(),
	} {
		if (name == LevelsCSV || name == StepSizeCSV || name == SlopesCSV) && len(rows) < 2 {
			continue
		}
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		if err := w.WriteAll(rows); err != nil {
			return fmt.Errorf("csv %s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("csv: %w", err)
		}
	}
	return nil
}
