package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/graftrl/graftrl/audit"
	"github.com/graftrl/graftrl/rundir"
)

// auditOptions are the flags of `graftrl audit`.
type auditOptions struct {
	run, checkpoint, checkpoints, out string
	steps, mc, tasks, slots           int
	gamma                             float64
	seed                              uint64
	quiet                             bool
	stdout, log                       io.Writer
}

func newAuditCmd() *cobra.Command {
	o := &auditOptions{}
	cmd := &cobra.Command{
		Use:   "audit --run DIR [--checkpoint N] [--steps 400] [--mc 24]",
		Short: "Measure every advantage estimator against the true step advantage, by Monte Carlo continuations",
		Long: `Audit a run's policy: roll out a fresh batch from its training panel, run every estimator on it
(grpo, drgrpo, gigpo, graphgpo, graft path/td/paper, graft td unnormalised), draw --steps steps
stratified by trajectory result and half, and measure each step's true advantage A = Q − V by
--mc continuations of its exact context that take the recorded action (Q) and --mc that let the
policy choose (V). Writes audit.json, audit.md, table.csv, summary.txt and scatter.png/.svg to
<run>/audit (or --out); with --checkpoints all, every checkpoint and the metrics over training.
Correlations are printed ± their bootstrap standard error over the audited steps.
The definitions are in audit.md and in the audit package's documentation.`,
		Example: `  # the newest checkpoint of the quickstart run (graftrl train --config configs/quickstart.yaml)
  graftrl audit --run runs/quickstart
  # the checkpoint of iteration 40, fewer steps and continuations
  graftrl audit --run runs/quickstart --checkpoint 40 --steps 200 --mc 16
  # every checkpoint, with the metrics over training
  graftrl audit --run runs/quickstart --checkpoints all`,
		Args: noArgs("--run"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.run == "" {
				return &usageError{"audit: --run DIR is required"}
			}
			if o.checkpoints != "" && o.checkpoints != "all" {
				return &usageError{fmt.Sprintf("audit: --checkpoints %q: only \"all\" is allowed", o.checkpoints)}
			}
			if o.checkpoints != "" && o.checkpoint != "" {
				return &usageError{"audit: --checkpoint and --checkpoints exclude each other"}
			}
			switch {
			case o.steps < 1:
				return &usageError{fmt.Sprintf("audit: --steps %d: must be ≥ 1", o.steps)}
			case o.mc < 2:
				return &usageError{fmt.Sprintf("audit: --mc %d: must be ≥ 2", o.mc)}
			case !(o.gamma > 0 && o.gamma <= 1):
				return &usageError{fmt.Sprintf("audit: --gamma %g: must be in (0, 1]", o.gamma)}
			case o.tasks < 0 || o.slots < 1:
				return &usageError{"audit: --tasks must be ≥ 0 and --slots ≥ 1"}
			}
			if info, err := os.Stat(filepath.Join(o.run, rundir.ConfigFile)); err != nil || info.IsDir() {
				return &usageError{fmt.Sprintf("audit: --run %s: not a run directory (no %s)", o.run, rundir.ConfigFile)}
			}
			if err := checkCheckpointFlag("audit", o.run, o.checkpoint, true); err != nil {
				return err
			}
			o.stdout, o.log = cmd.OutOrStdout(), cmd.ErrOrStderr()
			if o.quiet {
				o.log = io.Discard
			}
			return auditRun(o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.run, "run", "", "run directory (runs/<name>)")
	f.StringVar(&o.checkpoint, "checkpoint", "", "iteration number or checkpoint directory (default: the newest valid one)")
	f.StringVar(&o.checkpoints, "checkpoints", "", `"all": audit every checkpoint and plot the metrics over training`)
	f.IntVar(&o.steps, "steps", audit.DefaultSteps, "steps audited")
	f.IntVar(&o.mc, "mc", audit.DefaultMC, "Monte Carlo continuations per Q and per V")
	f.Float64Var(&o.gamma, "gamma", audit.DefaultGamma, "discount of the true return-to-go")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the batch, the step selection and the continuations")
	f.IntVar(&o.tasks, "tasks", 0, "training-panel tasks in the fresh batch (0: the run's tasks.per_iter)")
	f.IntVar(&o.slots, "slots", audit.DefaultSlots, "episodes decoded at once")
	f.StringVar(&o.out, "out", "", "output directory (default <run>/audit)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress lines")
	return cmd
}

func auditRun(o *auditOptions) error {
	out := o.out
	if out == "" {
		out = rundir.AuditPath(o.run)
	}
	results, err := audit.AuditRun(audit.RunOptions{
		Run: o.run, Checkpoint: o.checkpoint, AllCheckpoints: o.checkpoints == "all", Tasks: o.tasks, Out: out,
		Audit: audit.Options{Steps: o.steps, MC: o.mc, Gamma: o.gamma, Seed: o.seed, Slots: o.slots, Log: o.log},
	})
	if err != nil {
		return err
	}
	r := results[len(results)-1]
	fmt.Fprintln(o.stdout, r.Summary())
	fmt.Fprintln(o.stdout)
	tw := tabwriter.NewWriter(o.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, row := range r.ReportTable() {
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()
	fmt.Fprintf(o.stdout, "\nwrote %s (%.0f s)\n", out, r.Timing.Total)
	return nil
}
