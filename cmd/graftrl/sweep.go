package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/graftrl/graftrl/sweep"
)

// sweepOptions are the flags of `graftrl sweep`.
type sweepOptions struct {
	config   string
	executor string
	workers  int
	outDir   string
	dryRun   bool
	wait     bool
	binary   string // graftrl executable the runs use (default: this one)
	out      io.Writer
	log      io.Writer
}

func newSweepCmd() *cobra.Command {
	o := &sweepOptions{}
	cmd := &cobra.Command{
		Use:   "sweep --config FILE [--executor local|slurm] [--workers N] [--dry-run]",
		Short: "Run an ablation sweep: a grid of configs (estimators × envs × seeds × any key), locally or on Slurm",
		Long: `Expand a sweep config (configs/sweeps/*.yaml; keys in configs/README.md, Sweeps) into runs with
stable names <env>-<method>-s<seed>[-key=value…] under <out_dir>/<name>/, and run them.

  local (default)  a pool of --workers processes (default one per core, each GOMAXPROCS=cores/workers);
                   Ctrl-C stops every run; running the same command again skips finished runs and
                   resumes unfinished ones from their newest checkpoint (from the beginning when
                   they wrote none)
  slurm            one job array through sbatch (one task per unfinished run, each running
                   graftrl sweep run-one --index $SLURM_ARRAY_TASK_ID); --wait waits for it

--dry-run prints the runs (and, for Slurm, the batch script) without running anything.
Then: graftrl sweep status --dir DIR, graftrl compare DIR.`,
		Example: `  # what the sweep would train, without training anything
  graftrl sweep --config configs/sweeps/estimators.yaml --dry-run
  # train it on 2 local worker processes, then compare it
  graftrl sweep --config configs/sweeps/estimators.yaml --workers 2
  graftrl compare runs/sweeps/estimators
  # one Slurm job array, waiting for it to finish
  graftrl sweep --config configs/sweeps/estimators.yaml --executor slurm --wait`,
		Args: noArgs("--config"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.config == "" {
				return &usageError{"sweep: --config FILE is required (or a subcommand: run-one, status)"}
			}
			if err := intFlagAtLeast(cmd, "workers", 0, "0 = one per core, or N ≥ 1; leave it out for the config's workers"); err != nil {
				return err
			}
			o.out, o.log = cmd.OutOrStdout(), cmd.ErrOrStderr()
			ctx, stop := interruptContext(cmd.Context(), o.log)
			defer stop()
			return sweepRun(ctx, o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.config, "config", "c", "", "sweep config file (configs/sweeps/*.yaml)")
	f.StringVar(&o.executor, "executor", "", "local or slurm (default: the config's executor)")
	f.IntVar(&o.workers, "workers", -1, "local executor: runs at once (0: one per core; default: the config's workers)")
	f.StringVar(&o.outDir, "out-dir", "", "folder of sweep directories (default: the config's out_dir)")
	f.BoolVar(&o.dryRun, "dry-run", false, "print what would run (and the Slurm batch script) without running it")
	f.BoolVar(&o.wait, "wait", false, "slurm executor: wait for the job array to finish and check every run")
	cmd.AddCommand(newSweepRunOneCmd(), newSweepStatusCmd())
	return cmd
}

// loadSweep reads a sweep config and applies the flags that change where it goes.
func loadSweep(path, outDir string) (*sweep.Config, error) {
	c, err := sweep.Load(path)
	if err != nil {
		return nil, err
	}
	if outDir != "" {
		c.OutDir = outDir
	}
	return c, nil
}

func sweepRun(ctx context.Context, o *sweepOptions) error {
	c, err := loadSweep(o.config, o.outDir)
	if err != nil {
		return err
	}
	if c.Tune.On() && !o.dryRun {
		return &usageError{fmt.Sprintf("sweep: %s has a tune section, which graftrl study runs before the runs (the runs' %s depends on it); run graftrl study --config %s", o.config, c.Tune.Key, o.config)}
	}
	if c.Tune.On() {
		// A dry run shows the runs as the study trains them: with the selection's choice once
		// it has been made (tune.json), else with the base configs' value.
		if c, err = withRecordedChoice(c); err != nil {
			return err
		}
	}
	if o.executor != "" {
		if o.executor != sweep.ExecLocal && o.executor != sweep.ExecSlurm {
			return &usageError{fmt.Sprintf("sweep: --executor %q is not allowed (allowed: local, slurm)", o.executor)}
		}
		c.Executor = o.executor
	}
	if o.workers >= 0 {
		c.Workers = o.workers
	}
	if o.wait && c.Executor != sweep.ExecSlurm {
		return &usageError{"sweep: --wait applies to the slurm executor (the local executor always waits)"}
	}
	if o.dryRun {
		if _, err := os.Stat(c.Dir()); errors.Is(err, fs.ErrNotExist) {
			return printNewPlan(ctx, o.out, c, o.binary)
		}
		m, err := c.Plan()
		if err != nil {
			return err
		}
		return printPlan(ctx, o.out, c, m, o.binary)
	}
	m, err := c.Prepare()
	if err != nil {
		return err
	}
	if c.Executor == sweep.ExecSlurm {
		_, err := sweep.SubmitSlurm(ctx, c.Dir(), m, sweep.SlurmOptions{Binary: o.binary, Wait: o.wait, Out: o.out})
		return err
	}
	_, err = sweep.RunLocal(ctx, c.Dir(), m, sweep.LocalOptions{Workers: c.Workers,
		Launcher: sweep.Launcher{Binary: o.binary, Out: o.log, Metric: m.Compare.Metric}})
	if err == nil {
		fmt.Fprintf(o.out, "sweep %s: all %d runs finished in %s\ncompare them: graftrl compare %s\n", m.Name, len(m.Runs), c.Dir(), c.Dir())
	}
	return err
}

// printPlan is the dry run of a sweep whose directory exists: the runs merged with its manifest,
// with their state and overrides, and what would be run.
func printPlan(ctx context.Context, w io.Writer, c *sweep.Config, m *sweep.Manifest, binary string) error {
	dir := c.Dir()
	sts := sweep.Statuses(dir, m, m.Compare.Metric)
	todo := 0
	for _, st := range sts {
		if st.State != sweep.Finished {
			todo++
		}
	}
	fmt.Fprintf(w, "sweep %s: %d runs in %s (executor %s); %d to run, %d finished\n", m.Name, len(m.Runs), dir, c.Executor, todo, len(m.Runs)-todo)
	t := newPlanTable(w)
	for i, r := range m.Runs {
		t.row(&r, sts[i].State)
	}
	t.flush()
	if c.Executor == sweep.ExecSlurm {
		_, err := sweep.SubmitSlurm(ctx, dir, m, sweep.SlurmOptions{Binary: binary, DryRun: true, Out: w})
		return err
	}
	printLocalPlan(w, c, todo)
	return nil
}

// printNewPlan is the dry run of a sweep whose directory does not exist yet: every run is to run,
// so each is printed as the grid expands, and memory does not grow with the grid.
func printNewPlan(ctx context.Context, w io.Writer, c *sweep.Config, binary string) error {
	n, err := c.Size()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "sweep %s: %d runs in %s (executor %s); %d to run, 0 finished\n", c.Name, n, c.Dir(), c.Executor, n)
	t := newPlanTable(w)
	err = c.Each(func(r sweep.Run) error {
		t.row(&r, sweep.Pending)
		if ctx.Err() != nil {
			return fmt.Errorf("sweep %s: dry run stopped after %d of %d runs: %w", c.Name, r.Index+1, n, sweep.ErrInterrupted)
		}
		return nil
	})
	t.flush()
	if err != nil {
		return err
	}
	if c.Executor == sweep.ExecSlurm {
		return sweep.DryRunNewSlurm(c, n, sweep.SlurmOptions{Binary: binary, Out: w})
	}
	printLocalPlan(w, c, n)
	return nil
}

// planRowsPerFlush is how many rows of a dry run are aligned together: the table is written in
// blocks, so a large sweep streams instead of waiting for its last row.
const planRowsPerFlush = 1000

// planTable writes the dry run's table of runs.
type planTable struct {
	tw   *tabwriter.Writer
	rows int
}

func newPlanTable(w io.Writer) *planTable {
	t := &planTable{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	fmt.Fprintln(t.tw, "index\tname\tmethod\tstate\tbudget\toverrides")
	return t
}

// row writes one run: its index, name, method, state, budget and overrides (without the name
// and out_dir the sweep sets).
func (t *planTable) row(r *sweep.Run, state sweep.State) {
	budget := fmt.Sprintf("%d iterations", r.Iterations)
	if r.EnvSteps > 0 {
		budget = fmt.Sprintf("%d env steps (≤ %d it.)", r.EnvSteps, r.Iterations)
	}
	var ov []string
	for _, s := range r.Overrides {
		if !strings.HasPrefix(s, "name=") && !strings.HasPrefix(s, "out_dir=") {
			ov = append(ov, s)
		}
	}
	fmt.Fprintf(t.tw, "%d\t%s\t%s\t%s\t%s\t%s\n", r.Index, r.Name, r.Method, state, budget, strings.Join(ov, " "))
	if t.rows++; t.rows%planRowsPerFlush == 0 {
		t.tw.Flush()
	}
}

func (t *planTable) flush() { t.tw.Flush() }

// printLocalPlan says how the local executor would run todo runs.
func printLocalPlan(w io.Writer, c *sweep.Config, todo int) {
	dir := c.Dir()
	workers := c.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	workers = max(1, min(workers, todo))
	fmt.Fprintf(w, "would train %d run(s) on %d worker(s), GOMAXPROCS=%d each, each as:\n  graftrl train --config %s --out-dir %s   (output in %s)\n",
		todo, workers, max(1, runtime.NumCPU()/workers), filepath.Join(dir, sweep.ConfigDir, "<run>.yaml"),
		filepath.Join(dir, sweep.RunDir), filepath.Join(dir, sweep.LogDir, "<run>.log"))
}

// sweepDirOptions name a sweep by its directory or its config.
type sweepDirOptions struct {
	dir    string
	config string
	outDir string
}

func (o *sweepDirOptions) flags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.dir, "dir", "", "sweep directory (<out_dir>/<name>)")
	cmd.Flags().StringVarP(&o.config, "config", "c", "", "sweep config file (instead of --dir)")
	cmd.Flags().StringVar(&o.outDir, "out-dir", "", "with --config: folder of sweep directories (default: the config's out_dir)")
}

func (o *sweepDirOptions) resolve(cmdName string) (string, error) {
	switch {
	case o.dir != "" && o.config != "":
		return "", &usageError{cmdName + ": give --dir or --config, not both"}
	case o.dir != "":
		return o.dir, nil
	case o.config != "":
		c, err := loadSweep(o.config, o.outDir)
		if err != nil {
			return "", err
		}
		return c.Dir(), nil
	}
	return "", &usageError{cmdName + ": --dir SWEEP_DIR or --config FILE is required"}
}

// sweepRunOneOptions are the flags of `graftrl sweep run-one`.
type sweepRunOneOptions struct {
	sweepDirOptions
	index  int
	binary string
	log    io.Writer
}

func newSweepRunOneCmd() *cobra.Command {
	o := &sweepRunOneOptions{}
	cmd := &cobra.Command{
		Use:   "run-one --dir SWEEP_DIR --index I",
		Short: "Train run I of a sweep unless it is finished (what each Slurm array task runs)",
		Example: `  # run 0 of a sweep directory written by graftrl sweep (indices: graftrl sweep status)
  graftrl sweep run-one --dir runs/sweeps/estimators --index 0`,
		Args: noArgs("--dir"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := intFlagAtLeast(cmd, "index", 0, "0..runs−1"); err != nil {
				return err
			}
			if o.index < 0 {
				return &usageError{"sweep run-one: --index I is required"}
			}
			o.log = cmd.ErrOrStderr()
			ctx, stop := interruptContext(cmd.Context(), o.log)
			defer stop()
			return sweepRunOne(ctx, o)
		},
	}
	o.flags(cmd)
	cmd.Flags().IntVar(&o.index, "index", -1, "run index (the manifest's order; $SLURM_ARRAY_TASK_ID)")
	return cmd
}

func sweepRunOne(ctx context.Context, o *sweepRunOneOptions) error {
	dir, err := o.resolve("sweep run-one")
	if err != nil {
		return err
	}
	m, err := sweep.LoadManifest(dir)
	if err != nil {
		return &usageError{err.Error()}
	}
	if _, err := m.Run(o.index); err != nil {
		return &usageError{"sweep run-one: " + err.Error()}
	}
	l := &sweep.Launcher{Binary: o.binary, Out: o.log, Metric: m.Compare.Metric}
	if job := os.Getenv("SLURM_ARRAY_JOB_ID"); job != "" {
		l.SlurmJob = job + "_" + os.Getenv("SLURM_ARRAY_TASK_ID")
	}
	if n, err := strconv.Atoi(os.Getenv("SLURM_CPUS_PER_TASK")); err == nil && n > 0 {
		l.GOMAXPROCS = n
	}
	return sweep.RunOne(ctx, dir, o.index, l)
}

// sweepStatusOptions are the flags of `graftrl sweep status`.
type sweepStatusOptions struct {
	sweepDirOptions
	metric string
	out    io.Writer
}

func newSweepStatusCmd() *cobra.Command {
	o := &sweepStatusOptions{}
	cmd := &cobra.Command{
		Use:   "status --dir SWEEP_DIR | --config FILE",
		Short: "Show each run's state (from the run directories, and squeue for Slurm sweeps)",
		Example: `  graftrl sweep status --dir runs/sweeps/estimators
  # the same sweep named by its config, showing held-out success
  graftrl sweep status --config configs/sweeps/estimators.yaml --metric eval/heldout/success`,
		Args: noArgs("--dir"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.out = cmd.OutOrStdout()
			return sweepStatus(cmd.Context(), o)
		},
	}
	o.flags(cmd)
	cmd.Flags().StringVar(&o.metric, "metric", "", "eval metric to show (default: the sweep's compare metric, eval/success)")
	return cmd
}

func sweepStatus(ctx context.Context, o *sweepStatusOptions) error {
	dir, err := o.resolve("sweep status")
	if err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	// A directory without a manifest, or with one that names files outside it, is refused
	// input, as it is for run-one and compare.
	m, err := sweep.LoadManifest(dir)
	if err != nil {
		return &usageError{err.Error()}
	}
	metric := o.metric
	if metric == "" {
		metric = m.Compare.Metric
	}
	return sweep.PrintDirStatus(ctx, o.out, dir, metric)
}

// withRecordedChoice applies the selection a study recorded in its directory (tune.json) to
// the sweep config; without one the config is returned as it is.
func withRecordedChoice(c *sweep.Config) (*sweep.Config, error) {
	res, err := sweep.LoadTuneResult(c.Dir())
	if err != nil || res == nil {
		return c, err
	}
	return c.WithChoice(res.Chosen)
}
