package audit

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/graftrl/graftrl/rundir"
)

// fmtNum formats a table number: three decimals, "n/a" when undefined.
func fmtNum(v Num) string {
	if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
		return "n/a"
	}
	return strconv.FormatFloat(float64(v), 'f', 3, 64)
}

// fmtSE formats a number with its standard error, "0.410 ± 0.040"; the number alone when the
// error is undefined (an audit written before standard errors existed).
func fmtSE(v, se Num) string {
	if math.IsNaN(float64(v)) || math.IsNaN(float64(se)) || math.IsInf(float64(se), 0) {
		return fmtNum(v)
	}
	return fmtNum(v) + " ± " + fmtNum(se)
}

// Table is the audit's main table (table.csv): per estimator, the correlations with the truth
// and their bootstrap standard errors (columns pearson_r_se and spearman_rho_se), the sign
// agreement, the scale-matched error and the bias on the two diagnostic slices.
func (r *Result) Table() [][]string { return r.metricsTable(false) }

// ReportTable is Table for reading (audit.md, the output of graftrl audit): each correlation
// and its standard error in one cell, "0.410 ± 0.040", under the header pearson_r or
// spearman_rho.
func (r *Result) ReportTable() [][]string { return r.metricsTable(true) }

func (r *Result) metricsTable(merged bool) [][]string {
	head := []string{"estimator", "pearson_r", "pearson_r_se", "spearman_rho", "spearman_rho_se"}
	if merged {
		head = []string{"estimator", "pearson_r", "spearman_rho"}
	}
	out := [][]string{append(head, "sign_agreement", "scale_c", "mse", "nmse",
		"bias_"+SliceFailedProgress, "bias_"+SliceSuccessNoProgress)}
	for _, m := range r.Metrics {
		row := []string{m.Label, fmtNum(m.Pearson), fmtNum(m.PearsonSE), fmtNum(m.Spearman), fmtNum(m.SpearmanSE)}
		if merged {
			row = []string{m.Label, fmtSE(m.Pearson, m.PearsonSE), fmtSE(m.Spearman, m.SpearmanSE)}
		}
		row = append(row, fmtNum(m.Sign), fmtNum(m.Scale), fmtNum(m.MSE), fmtNum(m.NMSE))
		for _, s := range m.Slices {
			row = append(row, fmtNum(s.Bias))
		}
		out = append(out, row)
	}
	return out
}

// Summary is one paragraph saying what was audited and how (written to summary.txt).
func (r *Result) Summary() string {
	ckpt := "the audited policy"
	if r.Checkpoint != "" {
		ckpt = fmt.Sprintf("checkpoint %s (iteration %d)", filepath.Base(r.Checkpoint), r.Iter)
	}
	return fmt.Sprintf("Audit of %s on %s: %d steps of a fresh batch of %d episodes (%d tasks × %d, success %.2f), stratified by trajectory result × half; "+
		"Q and V of each from %d + %d Monte Carlo continuations of its exact context, γ = %g. "+
		"Truth: variance %s, Monte Carlo noise floor %s (a perfect estimator's correlation ceiling %s); %s of steps (%d audited) have a resolved sign (|A| ≥ %g SE), the steps the sign agreement counts. "+
		"Shares of all batch steps: %.0f %% of steps in failed trajectories made progress, %.0f %% of steps in successful ones did not. "+
		"Metrics are weighted to the whole batch; estimates are scale-matched (c) for MSE and bias.",
		ckpt, r.Env, len(r.Steps), r.Batch.Episodes, r.Batch.Tasks, r.Batch.Group, r.Batch.Success,
		r.Settings.MC, r.Settings.MC, r.Settings.Gamma,
		fmtNum(r.Truth.Var), fmtNum(r.Truth.NoiseFloor), fmtNum(r.Truth.Ceiling), fmtPct(r.Truth.Resolved), r.Truth.ResolvedSteps, r.Settings.Z,
		100*r.Shares.FailedProgress, 100*r.Shares.SuccessNoProgress)
}

func fmtPct(v Num) string {
	if math.IsNaN(float64(v)) {
		return "n/a"
	}
	return fmt.Sprintf("%.0f %%", 100*float64(v))
}

// Write writes the audit into dir: audit.json (every audited step with its truth, standard
// errors and each estimator's value, and all statistics), audit.md (tables and definitions),
// table.csv, summary.txt and the scatter plot as PNG and SVG.
func (r *Result) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	data, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.AuditJSON), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if err := writeCSV(filepath.Join(dir, rundir.AuditTable), r.Table()); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.AuditSummary), []byte(r.Summary()+"\n"), 0o644); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.AuditMarkdown), []byte(r.Markdown()), 0o644); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	f, err := ScatterFigure(r)
	if err != nil {
		return err
	}
	for _, ext := range []string{".png", ".svg"} {
		if err := f.Save(filepath.Join(dir, rundir.AuditScatter+ext)); err != nil {
			return err
		}
	}
	return nil
}

// readResult reads an audit.json written by Write (its tests read one back).
func readResult(path string) (*Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

func writeCSV(path string, rows [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	w := csv.NewWriter(f)
	if err := w.WriteAll(rows); err != nil {
		f.Close()
		return fmt.Errorf("audit: %s: %w", path, err)
	}
	return f.Close()
}

func mdTable(b *strings.Builder, rows [][]string) {
	fmt.Fprintf(b, "| %s |\n|%s\n", strings.Join(rows[0], " | "), strings.Repeat("---|", len(rows[0])))
	for _, r := range rows[1:] {
		fmt.Fprintf(b, "| %s |\n", strings.Join(r, " | "))
	}
	b.WriteString("\n")
}

// Markdown renders the audit as a report: the metrics table, the diagnostic slices, the strata,
// the scatter plot and the definitions.
func (r *Result) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Advantage audit: %s", r.Env)
	if r.Checkpoint != "" {
		fmt.Fprintf(&b, ", %s", filepath.Base(r.Checkpoint))
	}
	fmt.Fprintf(&b, "\n\n%s\n\n", r.Summary())
	if r.Run != "" {
		fmt.Fprintf(&b, "Run: `%s`; checkpoint: `%s`.\n\n", r.Run, r.Checkpoint)
	}

	b.WriteString("## Estimators against the true advantage\n\n")
	tab := r.ReportTable()
	tab[0] = []string{"estimator", "Pearson r ± SE", "Spearman ρ ± SE", "sign agreement", "scale c", "MSE", "NMSE",
		"bias: failed + progress", "bias: success + no progress"}
	mdTable(&b, tab)
	fmt.Fprintf(&b, "Truth over the audited steps (weighted): mean %s, variance %s, Monte Carlo noise floor (mean SE²) %s, correlation ceiling %s, resolved signs %s (%d audited steps); %d continuations dropped (env faults).\n\n",
		fmtNum(r.Truth.Mean), fmtNum(r.Truth.Var), fmtNum(r.Truth.NoiseFloor), fmtNum(r.Truth.Ceiling), fmtPct(r.Truth.Resolved), r.Truth.ResolvedSteps, r.Truth.Dropped)

	b.WriteString("## Diagnostic slices\n\n")
	fmt.Fprintf(&b, "Over all %d steps of the batch: %d steps in failed trajectories, of which %.1f %% made progress (the env's distance to success fell); %d steps in successful trajectories, of which %.1f %% made none (GraphGPO reports 22 %% and 65 %% on ALFWorld). Steps whose progress is unknown: %d.\n\n",
		r.Batch.Steps, r.Shares.FailedSteps, 100*r.Shares.FailedProgress, r.Shares.SuccessSteps, 100*r.Shares.SuccessNoProgress, r.Shares.Unknown)
	for k, name := range []string{SliceFailedProgress, SliceSuccessNoProgress} {
		rows := [][]string{{"estimator", "audited steps", "truth mean", "estimate mean (c·Â)", "bias", "share > 0", "truth share > 0"}}
		for _, m := range r.Metrics {
			if k >= len(m.Slices) {
				continue
			}
			s := m.Slices[k]
			rows = append(rows, []string{m.Label, strconv.Itoa(s.N), fmtNum(s.Truth), fmtNum(s.Estimate), fmtNum(s.Bias), fmtNum(s.Positive), fmtNum(s.TruthPositive)})
		}
		fmt.Fprintf(&b, "### %s\n\n", name)
		mdTable(&b, rows)
	}

	b.WriteString("## Strata\n\n")
	rows := [][]string{{"stratum", "batch steps", "audited"}}
	for _, s := range r.Strata {
		rows = append(rows, []string{s.Name, strconv.Itoa(s.Population), strconv.Itoa(s.Audited)})
	}
	mdTable(&b, rows)
	rows = [][]string{{"estimator"}}
	for _, s := range r.Strata {
		rows[0] = append(rows[0], "r in "+s.Name)
	}
	for _, m := range r.Metrics {
		row := []string{m.Label}
		for h, v := range m.ByStratum {
			se := Num(math.NaN())
			if h < len(m.ByStratumSE) {
				se = m.ByStratumSE[h]
			}
			row = append(row, fmtSE(v, se))
		}
		rows = append(rows, row)
	}
	b.WriteString("Pearson r within each stratum (unweighted) ± its bootstrap standard error:\n\n")
	mdTable(&b, rows)

	fmt.Fprintf(&b, "![estimates against the truth](%s.png)\n\n", rundir.AuditScatter)

	b.WriteString("## Definitions\n\n")
	for _, s := range Definitions(r.Settings) {
		fmt.Fprintf(&b, "- %s\n", s)
	}
	fmt.Fprintf(&b, "\n## Timing\n\nBatch %.1f s, estimators %.3f s, Monte Carlo %.1f s (%d continuations, %d decode calls, %d sampled tokens); total %.1f s.\n",
		r.Timing.Batch, r.Timing.Estimators, r.Timing.MonteCarlo, r.Timing.Continuations, r.Timing.DecodeCalls, r.Timing.SampledTokens, r.Timing.Total)
	return b.String()
}

// Definitions states what the audit's numbers mean.
func Definitions(s Settings) []string {
	return []string{
		fmt.Sprintf("Return-to-go from step t: G_t = Σ_{k≥t} γ^{k−t} r_k + γ^{T−t} R, with γ = %g, r_k the step rewards (e.g. the invalid-action penalty) and R the outcome (0 when failed or truncated).", s.Gamma),
		fmt.Sprintf("Q(s_t, a_t): the mean G_t of %d continuations that replay the trajectory's actions a_0 … a_{t−1} from the task's reset (rebuilding the exact token context and env state), take the recorded a_t and let the policy play on. V(s_t): the same with the policy sampling a_t itself. A = Q − V.", s.MC),
		"Standard errors: SE(Q) = sd/√n of the continuations' returns (sd with n − 1), the same for V; SE(A) = √(SE(Q)² + SE(V)²).",
		"Steps are drawn stratified by trajectory result (success, failure) × half (early: t < T/2, late) with equal allocation; every statistic weights a step by N_h/n_h (its stratum's batch steps per audited step), so that it estimates the statistic over all steps of the batch.",
		"Pearson r and Spearman ρ (Pearson on mid-ranks, ties averaged) of the estimator's advantage with A, weighted.",
		bootstrapDefinition(s),
		fmt.Sprintf("Sign agreement: the weighted share of steps with |A| ≥ %g SE(A) on which the estimate has A's sign (an estimate of 0 never agrees).", s.Z),
		"Scale c: the least-squares factor minimising Σ w (c·Â − A)²; MSE = Σ w (c·Â − A)² / Σ w; NMSE = MSE / (Σ w A² / Σ w): 1 is no better than predicting 0. The noise floor (mean SE(A)²) is part of every MSE.",
		"Progress: the env's distance to success d (Info.Distance) fell from s_t to s_{t+1}, both known and neither a dead end. Slices: steps of failed trajectories that made progress; steps of successful trajectories that made none. Bias = mean c·Â − mean A on the slice.",
		"graft-td-raw is GRAFT's td advantage r + γV(s′) − V(s) on the trajectory graph without the per-node normalisation (Eq. 11); every other estimator is exactly as trained (ALGORITHMS.md defaults).",
	}
}

// bootstrapDefinition defines the correlations' standard errors.
func bootstrapDefinition(s Settings) string {
	b := "a nonparametric bootstrap"
	if s.Bootstrap > 0 {
		b = fmt.Sprintf("a nonparametric bootstrap of %d resamples", s.Bootstrap)
	}
	return "± SE: the standard error of a correlation over the sampling of the audited steps, by " + b +
		" (each resample draws, within every stratum, as many audited steps as it holds, with replacement, a step keeping its weight; SE = the standard deviation of the correlation over the resamples; seeded with the audit's seed). " +
		"It is the sampling error over steps: the Monte Carlo noise of the truth, which attenuates every correlation (the correlation ceiling), is not part of it."
}

// WriteCheckpoints writes the metrics of several audits of one run (in iteration order) into
// dir: checkpoints.csv and checkpoints.md (one row per checkpoint and estimator, the correlations
// with their standard errors) and the line plot checkpoints.png/.svg.
func WriteCheckpoints(dir string, results []*Result) error {
	rows := [][]string{{"iter", "estimator", "pearson_r", "pearson_r_se", "spearman_rho", "spearman_rho_se", "sign_agreement", "nmse", "batch_success", "truth_var", "noise_floor"}}
	for _, r := range results {
		for _, m := range r.Metrics {
			rows = append(rows, []string{strconv.Itoa(r.Iter), m.Label, fmtNum(m.Pearson), fmtNum(m.PearsonSE), fmtNum(m.Spearman), fmtNum(m.SpearmanSE), fmtNum(m.Sign), fmtNum(m.NMSE),
				strconv.FormatFloat(r.Batch.Success, 'f', 3, 64), fmtNum(r.Truth.Var), fmtNum(r.Truth.NoiseFloor)})
		}
	}
	if err := writeCSV(filepath.Join(dir, rundir.AuditCheckpointsCSV), rows); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Advantage audit over training checkpoints: %s\n\n", results[0].Env)
	mdTable(&b, rows)
	fmt.Fprintf(&b, "![metrics over checkpoints](%s.png)\n", rundir.AuditCheckpointsPlot)
	if err := os.WriteFile(filepath.Join(dir, rundir.AuditCheckpointsMarkdown), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	f, err := CheckpointsFigure(results)
	if err != nil {
		return err
	}
	for _, ext := range []string{".png", ".svg"} {
		if err := f.Save(filepath.Join(dir, rundir.AuditCheckpointsPlot+ext)); err != nil {
			return err
		}
	}
	return nil
}
