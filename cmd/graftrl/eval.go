package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

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
