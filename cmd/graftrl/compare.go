package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/graftrl/graftrl/compare"
	"github.com/graftrl/graftrl/sweep"
)

// HeadToHeadConfig is the sweep `graftrl headtohead` runs: GRPO vs GRAFT on the quickstart env.
const HeadToHeadConfig = "configs/sweeps/quickstart.yaml"

// compareOptions are the flags of `graftrl compare`.
type compareOptions struct {
	dir       string // SWEEP_OR_RUNS_DIR
	run       string // --run: a sweep config to run first
	metric    string
	baseline  string
	outDir    string
	final     string
	holm      string
	budgetTol float64
	force     bool
	partial   bool
	title     string
	workers   int
	binary    string   // graftrl executable the sweep's runs use (default: this one)
	command   string   // the command line, recorded in the report
	notes     []string // more report notes (a study's time, machine and commit)
	out       io.Writer
	log       io.Writer
}

func (o *compareOptions) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.metric, "metric", "", "eval metric to compare (default: the sweep's, else eval/success)")
	f.StringVar(&o.baseline, "baseline", "", "method the others are tested against (default: grpo when present)")
	f.StringVar(&o.outDir, "out", "", "report directory (default: DIR/report)")
	f.StringVar(&o.final, "final", "", "final score: common-budget (each run read at the common env-step budget; default for sweeps) or last (each run's last evaluation; default otherwise)")
	f.StringVar(&o.holm, "holm", "", "family of Holm's correction of the paired tests: env (within each env, over the methods; default: the sweep's compare.holm, else env) or family (once over every env's and method's comparison with the baseline)")
	f.Float64Var(&o.budgetTol, "budget-tol", -1, "with --final last: relative env-step budget spread allowed, (max-min)/max (default 0: equal budgets)")
	f.BoolVar(&o.force, "force", false, "compare runs whose budgets differ (the report says so)")
	f.BoolVar(&o.partial, "partial", false, "sweeps: compare the finished runs, leaving unfinished ones out")
	f.StringVar(&o.title, "title", "", "report title")
	f.IntVar(&o.workers, "workers", -1, "with --run: runs at once (0: one per core; default: the sweep config's workers)")
}

func newCompareCmd() *cobra.Command {
	o := &compareOptions{}
	cmd := &cobra.Command{
		Use:   "compare SWEEP_OR_RUNS_DIR | --run SWEEP.yaml",
		Short: "Compare methods head to head: statistics with confidence intervals, plots and a report",
		Long: `Compare the runs of a sweep directory (or every run under a folder) method against method:
per env and method the final scores' mean, IQM with a 95 % stratified-bootstrap CI, the
probability of improvement over the baseline and Welch's test; the aggregate over envs;
learning curves and performance profiles; plots (PNG and SVG), report.md, a self-contained
report.html and CSV files, written to DIR/report (or --out).

Paired statistics: runs of two methods with the same env, seed and initial weights (the warm
start's checksum in summary.json, or random weights from the same seed) are compared seed by
seed: the mean paired difference from the baseline with its intervals, the paired t-test and
the Wilcoxon signed-rank test (Holm-corrected over the methods in each env, or with --holm
family once over every env's and method's comparison), a variance decomposition
method × seed with the seeds a difference of 0.05 or 0.10 needs, and each run's gain over its
evaluation before training (paired.csv, variance.csv, gain.csv, plots/paired.png). Runs that
cannot be paired are named; with no pair at all the report says why.

Step sizes: where the runs' train lines carry them, each env's and method's mean advantage SD,
gradient norm, approximate KL, clip fraction and weight change, with their ratio to the
baseline's (stepsize.csv, a secondary section of the report).

Budgets: runs are compared at equal budgets in environment steps. Under --final last, runs whose
final env steps differ (beyond --budget-tol) are refused unless --force; under --final
common-budget (the default for sweeps) every run is read at its env's common budget.

--run SWEEP.yaml first runs the sweep on this machine (skipping finished runs), then compares it.

The report is written whole or not at all. The first Ctrl-C (or SIGTERM) stops the comparison at
once (with --run, the runs after their current iteration), writing no report: exit status 75,
and the same command again starts it over.`,
		Example: `  # a sweep directory written by graftrl sweep; the report goes to its report/ folder
  graftrl compare runs/sweeps/estimators
  # run the sweep here first (finished runs are skipped), then compare it
  graftrl compare --run configs/sweeps/estimators.yaml
  # every run under a folder, against GRPO, the report elsewhere
  graftrl compare runs --baseline grpo --out /tmp/report
  # a study's primary family: one Holm correction over every env's and method's comparison
  graftrl compare runs/credit --holm family`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return &usageError{fmt.Sprintf("compare: one directory expected, got %d arguments", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.dir = args[0]
			}
			if err := intFlagAtLeast(cmd, "workers", 0, "0 = one per core, or N ≥ 1; leave it out for the sweep config's workers"); err != nil {
				return err
			}
			o.out, o.log = cmd.OutOrStdout(), cmd.ErrOrStderr()
			o.command = commandLine(cmd, args)
			ctx, stop := compareContext(cmd.Context(), o)
			defer stop()
			return compareRun(ctx, o)
		},
	}
	cmd.Flags().StringVar(&o.run, "run", "", "sweep config to run locally first, then compare")
	o.flags(cmd)
	return cmd
}

func newHeadToHeadCmd() *cobra.Command {
	o := &compareOptions{}
	cmd := &cobra.Command{
		Use:   "headtohead [--workers N] [--out DIR]",
		Short: "GRPO vs GRAFT on the quickstart env, 5 seeds each: runs the sweep and writes the report",
		Long: `Shorthand for: graftrl compare --run ` + HeadToHeadConfig + `
(run it from the repository root). It trains GRPO and GRAFT with 5 seeds each at an equal
env-step budget on this machine (one process per core), then writes the comparison report to
runs/sweeps/quickstart-h2h/report/ (or --out). Running it again skips finished runs.`,
		Example: `  graftrl headtohead
  # two runs at a time, the report in another folder
  graftrl headtohead --workers 2 --out /tmp/h2h-report`,
		Args: noArgs(""),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := intFlagAtLeast(cmd, "workers", 0, "0 = one per core, or N ≥ 1; leave it out for the sweep config's workers"); err != nil {
				return err
			}
			o.out, o.log = cmd.OutOrStdout(), cmd.ErrOrStderr()
			if _, err := os.Stat(o.run); err != nil {
				return &usageError{fmt.Sprintf("headtohead: %v (run it from the repository root, or use graftrl compare --run FILE)", err)}
			}
			o.command = commandLine(cmd, nil)
			ctx, stop := interruptContext(cmd.Context(), o.log)
			defer stop()
			return compareRun(ctx, o)
		},
	}
	cmd.Flags().StringVar(&o.run, "config", HeadToHeadConfig, "the head-to-head sweep config")
	o.flags(cmd)
	return cmd
}

// compareContext is the context of a comparison: a stop signal cancels it. With --run it is
// interruptContext, which stops the training runs; a comparison alone has no runs to stop and
// says so.
func compareContext(parent context.Context, o *compareOptions) (context.Context, func()) {
	if o.run != "" {
		return interruptContext(parent, o.log)
	}
	return notifyStop(parent, func(os.Signal) {
		fmt.Fprintln(o.log, "graftrl: stopping the comparison (no report is written); Ctrl-C again to quit at once")
	}, nil)
}

// compareInterrupted is the error of a comparison stopped by a signal. It is the comparison's
// own error (compare.ErrInterrupted) and wraps sweep.ErrInterrupted, the one graftrl exits on
// with the status of an interrupted command (75): running the same command again does the
// work, as it does after an interrupted sweep.
type compareInterrupted struct{ err error }

func (e *compareInterrupted) Error() string   { return e.err.Error() }
func (e *compareInterrupted) Unwrap() []error { return []error{e.err, sweep.ErrInterrupted} }

// commandLine rebuilds the command as typed: its path, arguments and the flags that were set.
func commandLine(cmd *cobra.Command, args []string) string {
	parts := append([]string{cmd.CommandPath()}, args...)
	for _, name := range []string{"run", "config", "metric", "baseline", "out", "final", "holm", "budget-tol", "force", "partial", "title", "workers"} {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			parts = append(parts, "--"+name+"="+f.Value.String())
		}
	}
	return strings.Join(parts, " ")
}

func compareRun(ctx context.Context, o *compareOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	switch {
	case o.run != "" && o.dir != "":
		return &usageError{"compare: give a directory or --run SWEEP.yaml, not both"}
	case o.run == "" && o.dir == "":
		return &usageError{"compare: a sweep or runs directory (or --run SWEEP.yaml) is required"}
	case o.final != "" && o.final != compare.FinalLast && o.final != compare.FinalCommonBudget:
		return &usageError{fmt.Sprintf("compare: --final %q is not allowed (allowed: %s, %s)", o.final, compare.FinalCommonBudget, compare.FinalLast)}
	case o.holm != "" && o.holm != compare.HolmEnv && o.holm != compare.HolmFamily:
		return &usageError{fmt.Sprintf("compare: --holm %q is not allowed (allowed: %s, %s)", o.holm, compare.HolmEnv, compare.HolmFamily)}
	}
	if o.run != "" && o.metric != "" {
		// The runs train first: a misspelt metric is refused before they start. Runs already
		// on disk are checked against the keys they hold, once they are read.
		if err := compare.CheckMetric(o.metric, compare.Metrics()); err != nil {
			return &usageError{"compare: --metric: " + err.Error()}
		}
	}
	err := compareWork(ctx, o)
	if errors.Is(err, compare.ErrInterrupted) {
		return &compareInterrupted{err}
	}
	return err
}

// compareWork runs the sweep of --run when given, then compares the runs and writes the report.
func compareWork(ctx context.Context, o *compareOptions) error {
	t0 := time.Now()
	if o.run != "" {
		c, err := sweep.Load(o.run)
		if err != nil {
			return err
		}
		m, err := c.Prepare()
		if err != nil {
			return err
		}
		workers := c.Workers
		if o.workers >= 0 {
			workers = o.workers
		}
		if _, err := sweep.RunLocal(ctx, c.Dir(), m, sweep.LocalOptions{Workers: workers,
			Launcher: sweep.Launcher{Binary: o.binary, Out: o.log, Metric: m.Compare.Metric}}); err != nil {
			return err
		}
		o.dir = c.Dir()
	}
	if fi, err := os.Stat(o.dir); err != nil || !fi.IsDir() {
		return &usageError{fmt.Sprintf("compare: %s is not a directory", o.dir)}
	}

	var runs []*compare.Run
	var opts compare.Options
	var m *sweep.Manifest
	var skipped []string
	if sweep.IsSweepDir(o.dir) {
		var err error
		if m, err = sweep.LoadManifest(o.dir); err != nil {
			return &usageError{err.Error()}
		}
		if runs, skipped, err = sweep.CompareRuns(ctx, o.dir, m, o.partial); err != nil {
			return loadError(err)
		}
		opts = m.CompareOptions()
	} else {
		dirs, err := compare.FindRuns(o.dir)
		if err != nil {
			return &usageError{err.Error()}
		}
		if runs, err = compare.LoadRunsContext(ctx, dirs); err != nil {
			return loadError(err)
		}
	}
	if o.metric != "" {
		opts.Metric = o.metric
	}
	if o.baseline != "" {
		opts.Baseline = o.baseline
	}
	if o.final != "" {
		opts.Final = o.final
	}
	if o.holm != "" {
		opts.Holm = o.holm
	}
	if o.budgetTol >= 0 {
		opts.BudgetTolerance = o.budgetTol
	}
	opts.Force = opts.Force || o.force
	if o.title != "" {
		opts.Title = o.title
	}
	if m != nil {
		if opts.Title == "" {
			opts.Title = m.Title(runs, opts.Metric)
		}
		opts.Notes = m.Notes(runs, opts, skipped)
		opts.Levels = m.Levels()
	}
	opts.Notes = append(opts.Notes, o.notes...)
	if o.command != "" {
		opts.Notes = append(opts.Notes, "Produced by: "+o.command)
	}
	c, err := compare.CompareContext(ctx, runs, opts)
	if err != nil {
		var be *compare.BudgetError
		if errors.As(err, &be) {
			return &usageError{err.Error() + "\n(the runs of a comparison must have equal env-step budgets: pass --final common-budget to read every run at the common budget, --budget-tol 0.05 to allow a 5 % spread, or --force to compare anyway)"}
		}
		return loadError(err)
	}
	out := o.outDir
	if out == "" {
		out = filepath.Join(o.dir, sweep.ReportDir)
	}
	if err := compare.WriteReportContext(ctx, out, c); err != nil {
		return err
	}
	printComparison(o.out, c)
	fmt.Fprintf(o.out, "report: %s and %s (plots in %s, CSV files beside them); %s\n",
		filepath.Join(out, compare.ReportMarkdown), filepath.Join(out, compare.ReportHTML), filepath.Join(out, compare.PlotDir),
		time.Since(t0).Round(time.Second))
	return nil
}

// loadError is an error of reading or comparing the runs: refused input (exit status 2), but
// for an interruption, which stays what it is.
func loadError(err error) error {
	if errors.Is(err, compare.ErrInterrupted) {
		return err
	}
	return &usageError{err.Error()}
}

// printComparison prints the per-environment table of the comparison.
func printComparison(w io.Writer, c *compare.Comparison) {
	fmt.Fprintf(w, "%s\n", c.Options.Title)
	for _, b := range c.Protocol.Budgets {
		read := ""
		if b.Common > 0 {
			read = fmt.Sprintf(", scores read at %d", b.Common)
		}
		fmt.Fprintf(w, "%s: budgets %d–%d env steps%s\n", b.Env, b.Min, b.Max, read)
		for _, cell := range c.Cells {
			if cell.Env != b.Env {
				continue
			}
			p := ""
			if cell.Method != c.Options.Baseline {
				p = fmt.Sprintf("  P(> %s) %.2f [%.2f, %.2f]", c.Options.Baseline, cell.Improvement.Value, cell.Improvement.Lo, cell.Improvement.Hi)
			}
			fmt.Fprintf(w, "  %-12s n=%d  mean %.3f  IQM %.3f [%.3f, %.3f]%s\n", cell.Method, cell.N(), cell.Mean,
				cell.IQM.Value, cell.IQM.Lo, cell.IQM.Hi, p)
		}
	}
	printPaired(w, c)
	for _, warn := range c.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
}

// printPaired prints the paired differences against the baseline, the variance decomposition
// and the gain over the start, or why there is no paired table.
func printPaired(w io.Writer, c *compare.Comparison) {
	base := c.Options.Baseline
	if c.NoPairs != "" {
		fmt.Fprintf(w, "paired against %s: no paired table: %s\n", base, c.NoPairs)
	} else {
		fmt.Fprintf(w, "paired against %s (%d pairs: same env, seed and initial weights; difference, %g %% CI, ahead/tied/behind, Holm-corrected p):\n",
			base, len(c.Pairs), 100*c.Options.Bootstrap.Confidence)
		for _, env := range append([]string{compare.AllEnvs}, c.Envs...) {
			if env == compare.AllEnvs && len(c.Envs) == 1 {
				continue
			}
			for _, r := range c.PairedRows(env, compare.MeasureFinal) {
				fmt.Fprintf(w, "  %-10s %-12s n=%-3d %+.3f [%+.3f, %+.3f]  %d/%d/%d  t p=%s  Wilcoxon p=%s (%s)\n", env, r.Method, r.N,
					r.Mean.Value, r.Mean.Lo, r.Mean.Hi, r.Won, r.Tied, r.Lost, pValue(r.THolm), pValue(r.WilcoxonHolm), r.Wilcoxon.Method)
			}
		}
		for _, u := range c.Unpaired {
			fmt.Fprintf(w, "  not paired: %s\n", u)
		}
		for _, v := range c.Variance {
			seed, method, resid := v.Shares()
			fmt.Fprintf(w, "variance %s (%d methods × %d seeds): seed %.0f %%, method %.0f %%, residual %.0f %% (SD %.3f); seed pairs for %g/%g: %v/%v (unpaired runs per method: %v/%v)\n",
				v.Env, len(v.Methods), len(v.Seeds), 100*seed, 100*method, 100*resid, v.ResidSD, compare.PowerDeltaSmall, compare.PowerDeltaLarge,
				v.SeedsNeeded[0], v.SeedsNeeded[1], v.RunsPerArm[0], v.RunsPerArm[1])
		}
	}
	for _, g := range c.Gains {
		if g.Env == compare.AllEnvs && len(c.Envs) == 1 {
			continue
		}
		fmt.Fprintf(w, "gain %-10s %-12s n=%-3d start %.3f  final %.3f  gain %+.3f  IQM %+.3f [%+.3f, %+.3f]\n", g.Env, g.Method, g.N,
			g.Start, g.Final, g.Gain, g.IQM.Value, g.IQM.Lo, g.IQM.Hi)
	}
}

// pValue prints a p-value with three significant digits, "n/a" when undefined.
func pValue(p float64) string {
	if math.IsNaN(p) {
		return "n/a"
	}
	return strconv.FormatFloat(p, 'g', 3, 64)
}
