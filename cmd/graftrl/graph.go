package main

import (
	"io"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/graftrl/graftrl/graft"
	"github.com/graftrl/graftrl/internal/strict"
	"github.com/graftrl/graftrl/rollout"
)

// graphOptions are the flags of `graftrl graph`.
type graphOptions struct {
	batch  string
	task   int
	format string
	opts   []string
	output string
	out    io.Writer
}

func newGraphCmd() *cobra.Command {
	o := &graphOptions{}
	cmd := &cobra.Command{
		Use:   "graph --batch FILE --task K [--format dot|json]",
		Short: "Export one task's trajectory graph with GRAFT node values and edge advantages",
		Long: `Exports the graph GRAFT builds for task K of a saved batch: nodes (state keys and outcome
sinks ⊥(R)) with values V, edges with action, count and mean advantage. DOT renders with
Graphviz: graftrl graph --batch F --task 0 | dot -Tpng > graph.png. GRAFT options: --opt gamma=0.9.`,
		Example: `  # batches saved by graftrl train --config configs/quickstart.yaml --save-batches=10
  graftrl graph --batch runs/quickstart/batches/iter-000010.json.gz --task 0 | dot -Tpng > graph.png
  graftrl graph --batch runs/quickstart/batches/iter-000010.json.gz --task 3 --format json --opt gamma=0.9 -o graph.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.batch == "" {
				return &usageError{"graph: --batch FILE is required"}
			}
			o.out = cmd.OutOrStdout()
			return graphRun(o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.batch, "batch", "", "batch file (runs/NAME/batches/iter-NNNNNN.json.gz)")
	f.IntVar(&o.task, "task", 0, "task index within the batch")
	f.StringVar(&o.format, "format", "dot", "dot or json")
	f.StringArrayVar(&o.opts, "opt", nil, "GRAFT option key=value (repeatable)")
	f.StringVarP(&o.output, "output", "o", "", "write to this file instead of stdout")
	return cmd
}

func graphRun(o *graphOptions) error {
	if o.format != "dot" && o.format != "json" {
		return &usageError{"graph: --format must be dot or json, got " + o.format}
	}
	opts := graft.DefaultOptions()
	m := map[string]any{}
	for _, kv := range o.opts {
		runs, err := parseEstimatorRuns("graft", []string{"graft." + kv})
		if err != nil {
			return &usageError{err.Error()}
		}
		for k, v := range runs[0].Options {
			m[k] = v
		}
	}
	// Options parseEstimatorRuns has checked (advantage.Check), decoded as the registry decodes them.
	if err := strict.DecodeMap(m, &opts); err != nil {
		return &usageError{err.Error()}
	}
	r, err := rollout.ReadReplay(o.batch)
	if err != nil {
		return &usageError{err.Error()}
	}
	if o.task < 0 || o.task >= r.Batch.Tasks {
		return &usageError{"graph: --task must be in 0.." + strconv.Itoa(r.Batch.Tasks-1)}
	}
	w := o.out
	if o.output != "" {
		f, err := os.Create(o.output)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	return graft.ExportTask(r.Batch, o.task, opts, o.format, w)
}
