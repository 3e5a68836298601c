package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/graftrl/graftrl/advantage"
	"github.com/graftrl/graftrl/graft"
	"github.com/graftrl/graftrl/rollout"
	"github.com/graftrl/graftrl/trainer"
)

// advantagesOptions are the flags of `graftrl advantages`.
type advantagesOptions struct {
	batch      string
	estimators string
	opts       []string
	rows       int
	out        io.Writer
}

func newAdvantagesCmd() *cobra.Command {
	o := &advantagesOptions{}
	cmd := &cobra.Command{
		Use:   "advantages --batch FILE [--estimators grpo,gigpo,graphgpo,graft]",
		Short: "Compare estimators' per-step advantages on one frozen rollout batch",
		Long: `Runs each estimator on the same saved batch (train --save-batches) and prints, after where
step-level credit can matter in the batch (the share of steps that leave a state whose actions
lead to different GRAFT values, and the shares of steps that bring success no closer in
successful and failed episodes), every step's advantage side by side, then per-estimator statistics and pairwise Pearson correlation and sign
agreement. Options: --opt graft.mode=td; the same estimator twice with labels:
--estimators graft:path,graft:td --opt graft:td.mode=td.`,
		Example: `  # batches saved by graftrl train --config configs/quickstart.yaml --save-batches=10
  graftrl advantages --batch runs/quickstart/batches/iter-000010.json.gz
  # GRAFT's path and TD modes side by side, every step
  graftrl advantages --batch runs/quickstart/batches/iter-000010.json.gz --estimators graft:path,graft:td --opt graft:td.mode=td --rows 0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.batch == "" {
				return &usageError{"advantages: --batch FILE is required"}
			}
			if err := intFlagAtLeast(cmd, "rows", 0, "0 = every step, or N ≥ 1"); err != nil {
				return err
			}
			o.out = cmd.OutOrStdout()
			return advantagesRun(o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.batch, "batch", "", "batch file (runs/NAME/batches/iter-NNNNNN.json.gz)")
	f.StringVar(&o.estimators, "estimators", "grpo,gigpo,graphgpo,graft", "comma-separated estimators (name or name:label)")
	f.StringArrayVar(&o.opts, "opt", nil, "estimator option: name.key=value (repeatable)")
	f.IntVar(&o.rows, "rows", 60, "steps to print (0: all)")
	return cmd
}

func advantagesRun(o *advantagesOptions) error {
	runs, err := parseEstimatorRuns(o.estimators, o.opts)
	if err != nil {
		return &usageError{err.Error()}
	}
	r, err := rollout.ReadReplay(o.batch)
	if err != nil {
		return &usageError{err.Error()}
	}
	c, err := trainer.CompareAdvantages(r.Batch, runs)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.out, "batch %s: iteration %d, env %s, %d tasks, %d trajectories, %d steps\n",
		o.batch, r.Iter, r.Env, r.Batch.Tasks, len(c.Batch.Trajs), c.Batch.NumSteps())
	if err := writeCredit(o.out, c.Batch); err != nil {
		return err
	}
	fmt.Fprintln(o.out)
	c.WriteSteps(o.out, o.rows)
	fmt.Fprintln(o.out)
	c.WriteSummary(o.out)
	return nil
}

// writeCredit prints where step-level credit can matter in the batch: the share of steps at
// decision-relevant nodes (graft.DecisionShare, GRAFT's default options) and the shares of wasted
// steps in successful and failed episodes (rollout.CountDetours).
func writeCredit(w io.Writer, b *rollout.Batch) error {
	share, steps, err := graft.DecisionShare(b, graft.DefaultOptions())
	if err != nil {
		return err
	}
	d := rollout.CountDetours(b)
	fmt.Fprintf(w, "decision-relevant steps %.1f %% of %d (left a state whose actions lead to different values); "+
		"wasted steps %.1f %% of %d in successes, %.1f %% of %d in failures (distance known)\n",
		100*share, steps, 100*d.SuccessShare(), d.SuccessSteps, 100*d.FailShare(), d.FailSteps)
	return nil
}

// parseEstimatorRuns reads --estimators "grpo,gigpo,graft" and --opt "graft.mode=td" into the
// estimators to compare, each with its options checked. An estimator may appear twice
// with a label: "graft:td" takes options "graft:td.mode=td".
func parseEstimatorRuns(list string, opts []string) ([]trainer.EstimatorRun, error) {
	var runs []trainer.EstimatorRun
	index := map[string]int{}
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("--estimators %q: an empty name in the list (allowed: name or name:label, comma-separated; names: %s)",
				list, strings.Join(advantage.Names(), ", "))
		}
		name, _, _ := strings.Cut(item, ":")
		if _, dup := index[item]; dup {
			return nil, fmt.Errorf("--estimators: %q listed twice (label repeats as name:label)", item)
		}
		index[item] = len(runs)
		runs = append(runs, trainer.EstimatorRun{Label: item, Name: name, Options: map[string]any{}})
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("--estimators: empty list (allowed: %s)", strings.Join(advantage.Names(), ", "))
	}
	for _, o := range opts {
		kv, value, ok := strings.Cut(o, "=")
		label, key, ok2 := strings.Cut(kv, ".")
		if !ok || !ok2 {
			return nil, fmt.Errorf("--opt %q: expected estimator.key=value, e.g. graft.mode=td", o)
		}
		i, found := index[label]
		if !found {
			return nil, fmt.Errorf("--opt %q: %q is not in --estimators", o, label)
		}
		runs[i].Options[key] = parseScalar(value)
	}
	for _, r := range runs {
		if err := advantage.Check(r.Name, r.Options); err != nil {
			return nil, fmt.Errorf("%s: %w", r.Label, err)
		}
	}
	return runs, nil
}

// parseScalar reads a command-line value as a number or boolean when it is one, else a string.
func parseScalar(s string) any {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return int(v)
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		return v
	}
	if v, err := strconv.ParseBool(s); err == nil {
		return v
	}
	return s
}
