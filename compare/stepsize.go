package compare

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"
)

// StepSizeCSV is the file of StepSizeTable.
const StepSizeCSV = "stepsize.csv"

// stepSizeKeys are the keys of metrics.jsonl's train lines that say how big each update was, in
// the order of the step-size table: the advantages' standard deviation (every estimator logs
// it), the gradient's norm, the approximate KL and the clip fraction of the update, and the
// relative weight change of the iteration, ‖θ_after − θ_before‖/‖θ_before‖ (logged only with
// credit diagnostics on).
func stepSizeKeys() []string {
	return []string{"est/adv_std", "grad_norm", "approx_kl", "clip_frac", "param_change"}
}

// StepStat is one step-size diagnostic of a cell.
type StepStat struct {
	// Key is the train-line key.
	Key string
	// N is the number of the cell's runs that logged it; Mean and SD are the mean and sample
	// standard deviation over those runs of each run's mean over its train iterations (Mean NaN
	// when no run logged it, SD NaN with fewer than two runs).
	N        int
	Mean, SD float64
	// Ratio is Mean over the baseline's Mean in the same environment: NaN for the baseline, and
	// where either mean is missing or the baseline's is zero.
	Ratio float64
}

// StepSizeRow is one method in one environment: its step-size diagnostics, in the order of the
// step-size table (est/adv_std, grad_norm, approx_kl, clip_frac, param_change).
type StepSizeRow struct {
	Env, Method string
	// Runs is the cell's number of runs.
	Runs  int
	Stats []StepStat
}

// stepSizes computes the step-size rows of every cell, env-major; nil when no run logged any
// step-size diagnostic.
func (c *Comparison) stepSizes() []StepSizeRow {
	var rows []StepSizeRow
	logged := false
	for _, cell := range c.Cells {
		row := StepSizeRow{Env: cell.Env, Method: cell.Method, Runs: cell.N()}
		for _, k := range stepSizeKeys() {
			var xs []float64
			for _, r := range cell.Runs {
				if v, ok := r.StepMeans[k]; ok {
					xs = append(xs, v)
				}
			}
			s := StepStat{Key: k, N: len(xs), Mean: Mean(xs), SD: math.NaN(), Ratio: math.NaN()}
			if len(xs) > 1 {
				s.SD = stat.StdDev(xs, nil)
			}
			logged = logged || len(xs) > 0
			row.Stats = append(row.Stats, s)
		}
		rows = append(rows, row)
	}
	if !logged {
		return nil
	}
	base := map[string]StepSizeRow{}
	for _, r := range rows {
		if r.Method == c.Options.Baseline {
			base[r.Env] = r
		}
	}
	for i := range rows {
		b, ok := base[rows[i].Env]
		if !ok || rows[i].Method == c.Options.Baseline {
			continue
		}
		for k := range rows[i].Stats {
			// A missing mean of the method is NaN and stays NaN in the ratio.
			if bm := b.Stats[k].Mean; bm != 0 && !math.IsNaN(bm) {
				rows[i].Stats[k].Ratio = rows[i].Stats[k].Mean / bm
			}
		}
	}
	return rows
}

// StepSizeTable is stepsize.csv: a header, then one row per environment and method with its
// runs and, for each step-size diagnostic (named without est/), the mean over the runs of each
// run's mean over its train iterations, the SD across runs, the number of runs that logged it
// and the ratio to the baseline's mean in the same environment. A cell is empty where its value
// is undefined: a diagnostic no run logged (never a zero), the SD of one run, the baseline's
// own ratio. Only the header when no run logged any step-size diagnostic.
func (c *Comparison) StepSizeTable() [][]string {
	head := []string{"env", "method", "runs"}
	for _, k := range stepSizeKeys() {
		n := strings.TrimPrefix(k, "est/")
		head = append(head, n+"_mean", n+"_sd", n+"_n", n+"_ratio")
	}
	out := [][]string{head}
	for _, r := range c.StepSizes {
		row := []string{r.Env, r.Method, strconv.Itoa(r.Runs)}
		for _, s := range r.Stats {
			row = append(row, csvNum(s.Mean), csvNum(s.SD), strconv.Itoa(s.N), csvNum(s.Ratio))
		}
		out = append(out, row)
	}
	return out
}

// stepSizeSection is the report's secondary table of the updates' sizes, when any run logged
// a step-size diagnostic.
func (c *Comparison) stepSizeSection() doc {
	if len(c.StepSizes) == 0 {
		return nil
	}
	base := c.Options.Baseline
	t := table{head: append([]string{"env", "method", "runs"}, stepSizeKeys()...)}
	for _, r := range c.StepSizes {
		line := []string{r.Env, r.Method, strconv.Itoa(r.Runs)}
		for _, s := range r.Stats {
			line = append(line, fmtStep(s, r.Runs))
		}
		t.rows = append(t.rows, line)
	}
	return doc{heading{2, "Step sizes (diagnostics)"},
		para(fmt.Sprintf("Secondary: diagnostics of the updates, not a test of the methods. This table is there to tell a bigger update (larger advantages' scale, larger gradient, KL, clip fraction or weight change) from better credit. Per environment and method, the mean over the runs of each run's mean over its train iterations, ± the SD across runs: est/adv_std, the advantages' standard deviation; grad_norm, the gradient's norm; approx_kl, the approximate KL divergence of the update; clip_frac, the share of clipped probability ratios; param_change, the iteration's relative weight change ‖θ_after − θ_before‖/‖θ_before‖ (runs with credit diagnostics on). n: the runs that logged it, where fewer than the cell's; ×r: the ratio to %s's mean in the same environment; —: no run logged it. Every number: %s.",
			base, StepSizeCSV)),
		t}
}

// fmtStep formats one step-size diagnostic of a cell of runs runs: mean ± SD across runs, with
// three significant digits (these values span orders of magnitude, a weight change of 1e-4
// beside a gradient norm of 10), the runs that logged it where fewer, and the ratio to the
// baseline; "—" when no run logged it.
func fmtStep(s StepStat, runs int) string {
	if s.N == 0 {
		return "—"
	}
	txt := fmtSig(s.Mean)
	if !math.IsNaN(s.SD) {
		txt += " ± " + fmtSig(s.SD)
	}
	if s.N < runs {
		txt += fmt.Sprintf(" (n=%d)", s.N)
	}
	if !math.IsNaN(s.Ratio) {
		txt += fmt.Sprintf("; ×%.2f", s.Ratio)
	}
	return txt
}

// fmtSig formats a number with three significant digits.
func fmtSig(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }
