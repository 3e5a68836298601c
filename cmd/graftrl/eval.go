package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/spf13/cobra"

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
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.run == "" {
				return &usageError{"eval: --run DIR is required"}
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
