package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/graftrl/graftrl/rundir"
	"github.com/graftrl/graftrl/trainer"
)

// evalOptions are the flags of `graftrl eval`.
type evalOptions struct {
	run        string
	checkpoint string
	json       bool
	out        io.Writer
	log        io.Writer // which checkpoint is evaluated when it is not the newest, and why
}

func newEvalCmd() *cobra.Command {
	o := &evalOptions{}
	cmd := &cobra.Command{
		Use:   "eval --run DIR [--checkpoint DIR]",
		Short: "Evaluate a run's newest (or a given) checkpoint on its fixed task panels",
		Long: `Evaluate a run's newest valid checkpoint (or --checkpoint DIR) on its fixed task panels:
greedy success on the training and held-out panels, and sampled success when the run's config
asks for it. The numbers equal the run's own evaluation of that checkpoint. eval writes nothing,
so it may evaluate a run while it trains.`,
		Example: `  # the newest checkpoint of the quickstart run
  graftrl eval --run runs/quickstart

  # an earlier checkpoint, as JSON
  graftrl eval --run runs/quickstart --checkpoint runs/quickstart/checkpoints/iter-000070 --json`,
		Args: noArgs("--run"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.run == "" {
				return &usageError{"eval: --run DIR is required"}
			}
			if info, err := os.Stat(filepath.Join(o.run, rundir.ConfigFile)); err != nil || info.IsDir() {
				return &usageError{fmt.Sprintf("--run %s: not a run directory (no %s)", o.run, rundir.ConfigFile)}
			}
			if err := checkCheckpointFlag("eval", o.run, o.checkpoint, false); err != nil {
				return err
			}
			o.out, o.log = cmd.OutOrStdout(), cmd.ErrOrStderr()
			return evalRun(o)
		},
	}
	cmd.Flags().StringVar(&o.run, "run", "", "run directory (runs/<name>)")
	cmd.Flags().StringVar(&o.checkpoint, "checkpoint", "", "checkpoint directory (default: the run's newest)")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the metrics as JSON")
	return cmd
}

func evalRun(o *evalOptions) error {
	m, err := trainer.EvaluateRun(o.run, o.checkpoint, trainer.Options{Out: o.log, Quiet: true})
	if err != nil {
		return err
	}
	if o.json {
		data, _ := json.MarshalIndent(m, "", "  ")
		fmt.Fprintln(o.out, string(data))
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(o.out, "%-40s %v\n", k, m[k])
	}
	return nil
}

// checkCheckpointFlag refuses a --checkpoint value of eval or audit (command) that names no
// valid checkpoint, as a usage error (exit status 2) naming the value and what is allowed,
// before the run's env and policy are set up: the value is input, and a mistyped one is not a
// fault of the run. An empty value (the newest valid checkpoint) passes. With iterations, as
// audit has it, a whole number N names checkpoints/iter-N of run; anything else is a directory.
// A directory that exists is verified (its manifest and checksums), as loading it would.
func checkCheckpointFlag(command, run, value string, iterations bool) error {
	if value == "" {
		return nil
	}
	list, _ := rundir.ListCheckpoints(run) // only to say what is allowed
	allowed := checkpointChoices(run, list, iterations)
	refuse := func(why string) *usageError {
		return &usageError{fmt.Sprintf("%s: --checkpoint %s: %s; allowed: %s", command, value, why, allowed)}
	}
	dir := value
	n, err := strconv.Atoi(value)
	switch {
	case iterations && err == nil && n < 0:
		return refuse("an iteration is a whole number ≥ 0")
	case iterations && err == nil:
		dir = rundir.CheckpointPath(run, n)
	}
	info, err := os.Stat(dir)
	switch {
	case err != nil && iterations && dir != value:
		return refuse(fmt.Sprintf("the run has no checkpoint of iteration %d (no %s)", n, dir))
	case err != nil:
		why := "no such directory"
		if !errors.Is(err, os.ErrNotExist) {
			why = err.Error()
		}
		refusal := refuse(why)
		// eval takes a directory; a number the run has a checkpoint of was meant as one.
		if n, aerr := strconv.Atoi(value); aerr == nil && n >= 0 {
			if c := rundir.CheckpointPath(run, n); isDir(c) {
				refusal.msg += fmt.Sprintf("; did you mean --checkpoint %s?", c)
			}
		}
		return refusal
	case !info.IsDir():
		return refuse("not a directory")
	}
	if err := trainer.VerifyCheckpoint(dir); err != nil {
		return refuse(fmt.Sprintf("not a valid checkpoint: %v", err))
	}
	return nil
}

// checkpointChoices says what --checkpoint accepts, naming the run's checkpoints (the first and
// the newest few of a long list).
func checkpointChoices(run string, list []string, iterations bool) string {
	var names []string
	for _, c := range list {
		name := filepath.Base(c)
		if iterations {
			if n, err := rundir.ParseCheckpointName(name); err == nil {
				name = strconv.Itoa(n)
			}
		}
		names = append(names, name)
	}
	if len(names) > 6 {
		names = append(names[:2:2], append([]string{"…"}, names[len(names)-3:]...)...)
	}
	switch {
	case len(names) == 0:
		return "a checkpoint directory (" + run + " has no checkpoint yet)"
	case iterations:
		return "an iteration the run has a checkpoint of (" + strings.Join(names, ", ") + ") or a checkpoint directory"
	}
	return "a checkpoint directory such as " + list[len(list)-1] + " (the run has " + strings.Join(names, ", ") + ")"
}

// isDir reports whether path is a directory.
func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}
