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

	"github.com/graftrl/graftrl/policy"
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
	// set names the flags given on the command line: a flag left out leaves the config's value.
	set map[string]bool
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
			o.set = changedFlags(cmd)
			if err := o.check(); err != nil {
				return err
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
	f.Int64Var(&o.seed, "seed", 0, "run seed (default: the config's)")
	f.IntVar(&o.iterations, "iterations", 0, "number of iterations (default: the config's)")
	f.StringVar(&o.outDir, "out-dir", "", "directory of run directories")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no per-iteration log lines")
	f.BoolVar(&o.install, "install-plugin", false, "let GoMLX download a missing PJRT plugin for --backend xla:* (needs internet)")
	f.IntVar(&o.saveBatch, "save-batches", 0, "save every k-th iteration's rollout batch to runs/<name>/batches (1: every one, 0: none; default: the config's)")
	f.Lookup("save-batches").NoOptDefVal = "1"
	return cmd
}

// check refuses out-of-range values of the shorthand flags, naming the flag.
func (o *trainOptions) check() error {
	switch {
	case o.set["seed"] && o.seed < 0:
		return &usageError{fmt.Sprintf("--seed: %d is out of range (allowed ≥ 0; leave the flag out for the config's seed)", o.seed)}
	case o.set["iterations"] && (o.iterations < 1 || o.iterations > trainer.MaxIterations):
		return &usageError{fmt.Sprintf("--iterations: %d is out of range (allowed 1..%d; leave the flag out for the config's)", o.iterations, trainer.MaxIterations)}
	case o.set["save-batches"] && o.saveBatch < 0:
		return &usageError{fmt.Sprintf("--save-batches: %d is out of range (allowed 0 = none, or k ≥ 1: every k-th iteration)", o.saveBatch)}
	case o.set["backend"]:
		if err := policy.ValidateBackendName(o.backend); err != nil {
			return &usageError{"--backend: " + err.Error()}
		}
	}
	return nil
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
	if o.set["seed"] {
		out = append(out, "seed="+strconv.FormatInt(o.seed, 10))
	}
	if o.set["iterations"] {
		out = append(out, "iterations="+strconv.Itoa(o.iterations))
	}
	if o.set["save-batches"] {
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
// recorded config. With --resume the run directory is DIR, however it is spelt and wherever it
// was moved or copied: its name and out_dir follow DIR (the trainer records them when the run
// directory moved). It returns the config and the file it came from.
func (o *trainOptions) loadConfig() (trainer.Config, string, error) {
	path := o.config
	var where []string
	if o.resume != "" {
		info, err := os.Stat(filepath.Join(o.resume, rundir.ConfigFile))
		if err != nil || info.IsDir() {
			return trainer.Config{}, "", &usageError{fmt.Sprintf("--resume %s: not a run directory (no %s)", o.resume, rundir.ConfigFile)}
		}
		if path == "" {
			path = filepath.Join(o.resume, rundir.ConfigFile)
		}
		abs, err := filepath.Abs(o.resume)
		if err != nil {
			return trainer.Config{}, "", &usageError{fmt.Sprintf("--resume %s: %v", o.resume, err)}
		}
		where = []string{"name=" + filepath.Base(abs), "out_dir=" + filepath.Dir(abs)}
	}
	// The run name --estimator extends is the file's, or the one a --set gives; the other --set
	// overrides wait until the estimator is switched, since estimator.KEY applies to the new one.
	var names []string
	for _, kv := range o.sets {
		if strings.HasPrefix(kv, "name=") {
			names = append(names, kv)
		}
	}
	base, err := trainer.LoadUnvalidated(path, names)
	if err != nil {
		return trainer.Config{}, "", err
	}
	cfg, err := trainer.Load(path, append(o.overrides(base.Name), where...))
	return cfg, path, err
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
