package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/graftrl/graftrl/trainer"
)

// trainOptions are the flags of `graftrl train`.
type trainOptions struct {
	config     string
	sets       []string
	estimator  string
	backend    string
	name       string
	seed       int64
	iterations int
	outDir     string
	quiet      bool
	saveBatch  int
	out        io.Writer
	progress   bool
}

func newTrainCmd() *cobra.Command {
	o := &trainOptions{}
	cmd := &cobra.Command{
		Use:   "train --config FILE [--set key=value ...]",
		Short: "Train a policy: collect → estimate → update → evaluate, logging to runs/<name>/",
		Long: `Train a policy from a YAML config (see configs/README.md for every key).

Flags override the file: --set key.path=value (repeatable), and shorthands --estimator,
--backend, --seed, --iterations, --name, --out-dir. --estimator replaces the estimator
section (its options return to defaults; add --set estimator.KEY=VALUE after it) and, unless
--name is given, appends the estimator to the run name.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.config == "" {
				return &usageError{"train: --config FILE is required"}
			}
			o.out = cmd.ErrOrStderr()
			o.progress = isTerminal(os.Stderr)
			return trainRun(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.config, "config", "c", "", "YAML config file")
	f.StringArrayVar(&o.sets, "set", nil, "override a config key: key.path=value (repeatable)")
	f.StringVar(&o.estimator, "estimator", "", "advantage estimator: "+joinNames(trainer.EstimatorNames()))
	f.StringVar(&o.backend, "backend", "", "GoMLX backend: go (default), xla:cpu, xla:cuda")
	f.StringVar(&o.name, "name", "", "run name (directory under out_dir)")
	f.Int64Var(&o.seed, "seed", -1, "run seed")
	f.IntVar(&o.iterations, "iterations", 0, "number of iterations")
	f.StringVar(&o.outDir, "out-dir", "", "directory of run directories")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no per-iteration log lines")
	f.IntVar(&o.saveBatch, "save-batches", 0, "save every k-th iteration's rollout batch to runs/<name>/batches (1: every one)")
	f.Lookup("save-batches").NoOptDefVal = "1"
	return cmd
}

// overrides turns the shorthand flags into --set overrides, applied before the explicit ones.
func (o *trainOptions) overrides(cfgName string) []string {
	var out []string
	if o.estimator != "" {
		out = append(out, "estimator="+o.estimator)
		if o.name == "" && cfgName != "" {
			out = append(out, "name="+cfgName+"-"+o.estimator)
		}
	}
	if o.backend != "" {
		out = append(out, "backend="+o.backend)
	}
	if o.name != "" {
		out = append(out, "name="+o.name)
	}
	if o.seed >= 0 {
		out = append(out, "seed="+strconv.FormatInt(o.seed, 10))
	}
	if o.iterations > 0 {
		out = append(out, "iterations="+strconv.Itoa(o.iterations))
	}
	if o.saveBatch > 0 {
		out = append(out, "save_batches="+strconv.Itoa(o.saveBatch))
	}
	if o.outDir != "" {
		out = append(out, "out_dir="+o.outDir)
	}
	return append(out, o.sets...)
}

func trainRun(ctx context.Context, o *trainOptions) error {
	base, err := trainer.Load(o.config, o.sets)
	if err != nil {
		return err
	}
	cfg, err := trainer.Load(o.config, o.overrides(base.Name))
	if err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	t, err := trainer.New(cfg, trainer.Options{Out: o.out, Progress: o.progress, Quiet: o.quiet})
	if err != nil {
		return err
	}
	fmt.Fprintf(o.out, "graftrl: training %s on %s with %s (%d iterations) → %s\n", cfg.Name, cfg.Env.Name,
		cfg.Estimator.Name, cfg.Iterations, t.Dir())
	s, err := t.Run(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.out, "graftrl: done in %.0fs: %d iterations, %d env steps; %s\n", s.Seconds, s.Iterations, s.EnvSteps,
		trainer.EvalSummary(s.Final))
	return nil
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

func joinNames(names []string) string {
	s := ""
	for i, n := range names {
		if i > 0 {
			s += "|"
		}
		s += n
	}
	return s
}
