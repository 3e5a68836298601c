package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/graftrl/graftrl/study"
	"github.com/graftrl/graftrl/sweep"
)

// DefaultStudyConfig is the study `graftrl study` runs without --config.
const DefaultStudyConfig = "configs/study.yaml"

// studyOptions are the flags of `graftrl study`.
type studyOptions struct {
	config     string
	executor   string
	out        string
	report     string
	workers    int
	auditSteps int
	auditMC    int
	// auditFlags records that --audit-steps or --audit-mc were given: they then override the
	// config's audit section.
	auditStepsSet, auditMCSet bool
	noAudit                   bool
	binary                    string // graftrl executable the runs use (default: this one)
	command                   string
	out1, log                 io.Writer
}

func newStudyCmd() *cobra.Command {
	o := &studyOptions{}
	cmd := &cobra.Command{
		Use:   "study [--config configs/study.yaml] [--executor local|slurm] [--out DIR]",
		Short: "Run the study (every estimator on every env, paired seeds) and write its report",
		Long: `Run a study: a sweep whose bases are one training config per environment and whose grid is
estimators × seeds (configs/study.yaml), so every run of an (env, seed) starts from the same
warm start. It trains the grid locally (--workers processes) or as one Slurm job array
(--executor slurm, which waits for the array), audits a mid-training checkpoint per environment
(the baseline's run of the first seed: each estimator against the Monte Carlo true advantage),
then writes the comparison report with the ranking in words, the state-sharing and audit
columns, the study's wall and CPU time, the machine and the commit.

A tune section selects one key per method first (configs/credit.yaml: the learning rate, on
tuning seeds the evaluation never uses, by the rule the config states), under DIR/tune; an
audit section chooses which methods and bases are audited; bases with levels get the paired
differences along their difficulty axes in the report.

Running it again skips finished runs and audits, so an interrupted study continues where it
stopped, and a finished one only rewrites its report.

  --out DIR      the study directory (default: the config's out_dir/name)
  --report DIR   where the report goes (default: DIR/report)`,
		Example: `  graftrl study
  # the credit-assignment study: learning rates selected first, then 192 runs and 8 audits
  graftrl study --config configs/credit.yaml
  # as one Slurm job array (the command waits for it), without the audits
  graftrl study --executor slurm --no-audit
  # 4 local runs at a time, the study directory elsewhere
  graftrl study --workers 4 --out /tmp/study`,
		Args: noArgs("--config"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.out1, o.log = cmd.OutOrStdout(), cmd.ErrOrStderr()
			o.auditStepsSet, o.auditMCSet = cmd.Flags().Changed("audit-steps"), cmd.Flags().Changed("audit-mc")
			o.command = commandLineOf(cmd, []string{"config", "executor", "out", "report", "workers", "audit-steps", "audit-mc", "no-audit"})
			ctx, stop := interruptContext(cmd.Context(), o.log)
			defer stop()
			return studyRun(ctx, o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.config, "config", "c", DefaultStudyConfig, "study config (a sweep config with bases: one per env)")
	f.StringVar(&o.executor, "executor", "", "local or slurm (default: the config's executor)")
	f.StringVar(&o.out, "out", "", "study directory (default: the config's out_dir/name)")
	f.StringVar(&o.report, "report", "", "report directory (default: the study directory's report/)")
	f.IntVar(&o.workers, "workers", -1, "local executor: runs at once (0: one per core; default: the config's workers)")
	f.IntVar(&o.auditSteps, "audit-steps", 120, "steps audited per run (overrides the config's audit.steps)")
	f.IntVar(&o.auditMC, "audit-mc", 16, "Monte Carlo continuations per Q and per V in the audits (overrides audit.mc)")
	f.BoolVar(&o.noAudit, "no-audit", false, "skip the advantage audits")
	return cmd
}

// commandLineOf rebuilds the command as typed: its path and the named flags that were set.
func commandLineOf(cmd *cobra.Command, names []string) string {
	parts := []string{cmd.CommandPath()}
	for _, name := range names {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			parts = append(parts, "--"+name+"="+f.Value.String())
		}
	}
	return strings.Join(parts, " ")
}

// studyRun checks the flags, applies them to the study config, runs the study (study.Run) and
// writes its report with the study's notes.
func studyRun(ctx context.Context, o *studyOptions) error {
	switch {
	case o.auditSteps < 1:
		return &usageError{fmt.Sprintf("study: --audit-steps %d: must be ≥ 1", o.auditSteps)}
	case o.auditMC < 2:
		return &usageError{fmt.Sprintf("study: --audit-mc %d: must be ≥ 2", o.auditMC)}
	case o.executor != "" && o.executor != sweep.ExecLocal && o.executor != sweep.ExecSlurm:
		return &usageError{fmt.Sprintf("study: --executor %q is not allowed (allowed: local, slurm)", o.executor)}
	}
	c, err := loadSweep(o.config, "")
	if err != nil {
		return err
	}
	if o.out != "" {
		c.OutDir, c.Name = filepath.Dir(filepath.Clean(o.out)), filepath.Base(filepath.Clean(o.out))
	}
	if o.executor != "" {
		c.Executor = o.executor
	}
	if o.workers >= 0 {
		c.Workers = o.workers
	}
	if o.auditStepsSet {
		c.Audit.Steps = o.auditSteps
	}
	if o.auditMCSet {
		c.Audit.MC = o.auditMC
	}
	m, err := study.Run(ctx, c, study.Options{Binary: o.binary, AuditSteps: o.auditSteps, AuditMC: o.auditMC,
		NoAudit: o.noAudit, Build: versionString(), Log: o.log})
	if err != nil {
		return err
	}
	notes, err := study.Notes(c.Dir(), m, versionString())
	if err != nil {
		return err
	}
	return compareRun(ctx, &compareOptions{dir: c.Dir(), outDir: o.report, budgetTol: -1, workers: -1,
		command: o.command, notes: notes, out: o.out1, log: o.log})
}
