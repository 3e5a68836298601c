package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/graftrl/graftrl/rundir"
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
	install    bool
	resume     string
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
			if o.config == "" && o.resume == "" {
				return &usageError{"train: --config FILE is required (or --resume runs/NAME)"}
			}
			o.out = cmd.ErrOrStderr()
			o.progress = isTerminal(os.Stderr)
			return trainRun(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.config, "config", "c", "", "YAML config file")
	f.StringVar(&o.resume, "resume", "", "continue the run in this directory from its newest valid checkpoint")
	f.StringArrayVar(&o.sets, "set", nil, "override a config key: key.path=value (repeatable)")
	f.StringVar(&o.estimator, "estimator", "", "advantage estimator: "+strings.Join(trainer.EstimatorNames(), "|"))
	f.StringVar(&o.backend, "backend", "", "GoMLX backend: go (default), xla:cpu, xla:cuda")
	f.StringVar(&o.name, "name", "", "run name (directory under out_dir)")
	f.Int64Var(&o.seed, "seed", -1, "run seed")
	f.IntVar(&o.iterations, "iterations", 0, "number of iterations")
	f.StringVar(&o.outDir, "out-dir", "", "directory of run directories")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no per-iteration log lines")
	f.BoolVar(&o.install, "install-plugin", false, "let GoMLX download a missing PJRT plugin for --backend xla:* (needs internet)")
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
	cfg, file, err := o.loadConfig()
	if err != nil {
		return err
	}
	// The first SIGINT/SIGTERM is a clean stop (the current iteration finishes, a checkpoint is
	// written), the second an immediate exit; the last checkpoint stays valid either way, since
	// checkpoints are renamed into place only when complete.
	ctx, stop := notifyStop(ctx, func(sig os.Signal) {
		fmt.Fprintf(o.out, "\ngraftrl: %v: finishing this iteration and writing a checkpoint (signal again to quit at once)\n", sig)
	}, func(os.Signal) {
		fmt.Fprintln(o.out, "graftrl: quitting at once; the last checkpoint is intact")
		os.Exit(exitKilled)
	})
	defer stop()
	t, err := trainer.New(cfg, trainer.Options{Out: o.out, Progress: o.progress, Quiet: o.quiet, InstallPlugin: o.install,
		Resume: o.resume != ""})
	var ce *trainer.ConfigError
	if errors.As(err, &ce) && ce.File == "" {
		ce.File = file // what only the env can tell (a remote env's server) is checked here
	}
	if err != nil {
		return err
	}
	defer t.Close()
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

// loadConfig reads the config: from --config, or, for --resume DIR without --config, the run's
// recorded config (whose name and out_dir then follow DIR, so moved run directories resume too).
// It returns the config and the file it came from.
func (o *trainOptions) loadConfig() (trainer.Config, string, error) {
	path := o.config
	var extra []string
	if o.resume != "" {
		info, err := os.Stat(filepath.Join(o.resume, rundir.ConfigFile))
		if err != nil || info.IsDir() {
			return trainer.Config{}, "", &usageError{fmt.Sprintf("--resume %s: not a run directory (no %s)", o.resume, rundir.ConfigFile)}
		}
		if path == "" {
			path = filepath.Join(o.resume, rundir.ConfigFile)
			extra = []string{"name=" + filepath.Base(filepath.Clean(o.resume)), "out_dir=" + filepath.Dir(filepath.Clean(o.resume))}
		}
	}
	base, err := trainer.Load(path, append(extra, o.sets...))
	if err != nil {
		return trainer.Config{}, "", err
	}
	cfg, err := trainer.Load(path, append(extra, o.overrides(base.Name)...))
	return cfg, path, err
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
