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

	"github.com/graftrl/graftrl/advantage"
	_ "github.com/graftrl/graftrl/advantage/all"
	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/policy/spec"
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
	// applied are the overrides loadConfig applied, and flagOf the flag as given for those that
	// a shorthand flag or --resume made (estimator=graft: --estimator graft), so that an error
	// an override brings names the flag the user typed.
	applied []string
	flagOf  map[string]string
	// readFile reads the config file (config.ReadFile when nil).
	readFile func(string) ([]byte, error)
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
--name is given, appends the estimator to the run name.

--resume DIR continues the run in DIR from its newest valid checkpoint; a run that already
reached its length is left as it is ("already finished"; nothing is written), and a larger
--set iterations=N extends it. A config that differs from the one the checkpoint was trained
with (an edited config.yaml) is refused naming the keys, and so is a run whose checkpoints
are gone while its metrics remain. One process at a time trains a run directory: a second one
is refused at once.

Estimators (--estimator NAME; graftrl estimators lists their options and defaults):` + estimatorList(),
		Example: `  # the quickstart: GRPO on a 5×5 maze, written to runs/quickstart/
  graftrl train --config configs/quickstart.yaml

  # another estimator and seed (the run goes to runs/quickstart-graft/)
  graftrl train --config configs/quickstart.yaml --estimator graft --seed 2

  # any config key, here a shorter run under another name
  graftrl train --config configs/quickstart.yaml --set iterations=20 --name short

  # continue an interrupted run; extend a finished one to 120 iterations
  graftrl train --resume runs/quickstart
  graftrl train --resume runs/quickstart --set iterations=120`,
		Args: noArgs("--config"),
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
	f.StringVar(&o.estimator, "estimator", "", "advantage estimator: "+strings.Join(advantage.Names(), "|"))
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
	case o.set["iterations"] && (o.iterations < 1 || o.iterations > config.MaxIterations):
		return &usageError{fmt.Sprintf("--iterations: %d is out of range (allowed 1..%d; leave the flag out for the config's)", o.iterations, config.MaxIterations)}
	case o.set["save-batches"] && o.saveBatch < 0:
		return &usageError{fmt.Sprintf("--save-batches: %d is out of range (allowed 0 = none, or k ≥ 1: every k-th iteration)", o.saveBatch)}
	case o.set["backend"]:
		if err := spec.ValidateBackendName(o.backend); err != nil {
			return &usageError{"--backend: " + err.Error()}
		}
	}
	return nil
}

// overrides turns the shorthand flags into --set overrides, applied before the explicit ones,
// and records which flag made each (flagOf).
func (o *trainOptions) overrides(cfgName string) []string {
	var out []string
	o.flagOf = map[string]string{}
	add := func(override, flag string) {
		out = append(out, override)
		o.flagOf[override] = flag
	}
	if o.estimator != "" {
		add("estimator="+o.estimator, "--estimator "+o.estimator)
		if o.name == "" && cfgName != "" {
			add("name="+cfgName+"-"+o.estimator, "--estimator "+o.estimator)
		}
	}
	if o.backend != "" {
		add("backend="+o.backend, "--backend "+o.backend)
	}
	if o.name != "" {
		add("name="+o.name, "--name "+o.name)
	}
	if o.set["seed"] {
		add("seed="+strconv.FormatInt(o.seed, 10), "--seed "+strconv.FormatInt(o.seed, 10))
	}
	if o.set["iterations"] {
		add("iterations="+strconv.Itoa(o.iterations), "--iterations "+strconv.Itoa(o.iterations))
	}
	if o.set["save-batches"] {
		add("save_batches="+strconv.Itoa(o.saveBatch), "--save-batches "+strconv.Itoa(o.saveBatch))
	}
	if o.outDir != "" {
		add("out_dir="+o.outDir, "--out-dir "+o.outDir)
	}
	return append(out, o.sets...)
}

// blame makes a config error say where it comes from: the flag as given (--set key=value,
// --estimator ppo, --resume DIR) when an override brought it, else the config file.
func (o *trainOptions) blame(err error, file string) error {
	var ce *config.Error
	if !errors.As(err, &ce) {
		return err
	}
	ce.Blame(file, o.applied)
	if flag, ok := o.flagOf[strings.TrimPrefix(ce.Flag, "--set ")]; ok && ce.Flag != "" {
		ce.Flag = flag
	}
	return err
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
		fmt.Fprintf(o.out, "\ngraftrl: %v: finishing this iteration and writing a checkpoint (signal again, a second or more later, to quit at once)\n", sig)
	}, func(os.Signal) {
		fmt.Fprintln(o.out, "graftrl: quitting at once; the last checkpoint is intact")
		os.Exit(exitKilled)
	})
	defer stop()
	// Every refusal (a value out of range, the run directory's lock, a run already there, a
	// resume config that differs, a policy.max_len too short for the env) comes from New, before
	// any work and before the line that says training starts.
	t, err := trainer.New(cfg, trainer.Options{Out: o.out, Progress: o.progress, Quiet: o.quiet, InstallPlugin: o.install,
		Resume: o.resume != ""})
	if err != nil {
		return o.blame(err, file) // what only the env can tell (a remote env's server) is checked here
	}
	defer t.Close()
	if t.Finished() {
		s, err := t.Run(ctx)
		if err != nil {
			return err
		}
		hint := ""
		if s.Iterations >= cfg.Iterations {
			hint = " (a larger --set iterations=N extends it)"
		}
		fmt.Fprintf(o.out, "graftrl: %s already finished (%s, %d env steps; %s): nothing to do%s\n",
			t.Dir(), iterations(s.Iterations), s.EnvSteps, trainer.EvalSummary(s.Final), hint)
		return nil
	}
	fmt.Fprintf(o.out, "graftrl: training %s on %s with %s (%s) → %s\n", cfg.Name, cfg.Env.Name,
		cfg.Estimator.Name, iterations(cfg.Iterations), t.Dir())
	s, err := t.Run(ctx)
	if err != nil {
		return err
	}
	// The closing line reads the run's start against its end, held-out panel first: whether the
	// policy learnt the task, and not only the layouts it trained on, is what the run shows.
	fmt.Fprintf(o.out, "graftrl: done in %.0fs: %s, %d env steps; %s\n", s.Seconds, iterations(s.Iterations), s.EnvSteps,
		trainer.GainSummary(trainer.StartEval(t.Dir()), s.Final))
	return nil
}

// iterations is "1 iteration" or "N iterations".
func iterations(n int) string {
	if n == 1 {
		return "1 iteration"
	}
	return strconv.Itoa(n) + " iterations"
}

// noArgs refuses positional arguments with a usage error (exit status 2); where a flag takes
// what was given as an argument (flag: "--config"), the message suggests it.
func noArgs(flag string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		hint := ""
		if flag != "" {
			hint = fmt.Sprintf("; did you mean %s %s?", flag, args[0])
		}
		name := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ") // main prints "graftrl: "
		return &usageError{fmt.Sprintf("%s: unexpected argument %q%s (usage: %s)", name, args[0], hint, cmd.UseLine())}
	}
}

// loadConfig reads the config file once: from --config, or, for --resume DIR without --config,
// the run's recorded config. It decodes it twice from those bytes (first for the run name that
// --estimator extends, then with every override) and checks keys and types; trainer.New
// validates the values. With --resume the run directory is DIR, however it is spelt and
// wherever it was moved or copied: its name and out_dir follow DIR (the trainer records them
// when the run directory moved). It returns the config and the file it came from.
func (o *trainOptions) loadConfig() (config.Config, string, error) {
	path := o.config
	var where []string
	if o.resume != "" {
		info, err := os.Stat(filepath.Join(o.resume, rundir.ConfigFile))
		if err != nil || info.IsDir() {
			return config.Config{}, "", &usageError{fmt.Sprintf("--resume %s: not a run directory (no %s)", o.resume, rundir.ConfigFile)}
		}
		if path == "" {
			path = filepath.Join(o.resume, rundir.ConfigFile)
		}
		abs, err := filepath.Abs(o.resume)
		if err != nil {
			return config.Config{}, "", &usageError{fmt.Sprintf("--resume %s: %v", o.resume, err)}
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
	o.applied = names
	read := o.readFile
	if read == nil {
		read = config.ReadFile
	}
	data, err := read(path)
	if err != nil {
		return config.Config{}, "", err
	}
	base, err := config.Decode(path, data, names)
	if err != nil {
		return config.Config{}, "", o.blame(err, path)
	}
	o.applied = append(o.overrides(base.Name), where...)
	for _, w := range where {
		o.flagOf[w] = "--resume " + o.resume
	}
	cfg, err := config.Decode(path, data, o.applied)
	if err != nil {
		return config.Config{}, "", o.blame(err, path)
	}
	return cfg, path, nil
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
