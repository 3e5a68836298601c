package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/rundir"
	"github.com/graftrl/graftrl/trainer"
)

func newEnvsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "envs", Short: "List and describe the registered environments",
		Example: `  graftrl envs list
  graftrl envs describe sokoban`}
	cmd.AddCommand(&cobra.Command{
		Use:     "list",
		Short:   "List the registered environments",
		Example: "  graftrl envs list",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, name := range envs.Names() {
				s, _ := envs.Lookup(name)
				fmt.Fprintf(cmd.OutOrStdout(), "%-12s %s\n", name, s.Description)
			}
			return nil
		},
	})
	var sets []string
	var task int64
	describe := &cobra.Command{
		Use:   "describe NAME [--set option=value ...]",
		Short: "Show an environment's options, vocabulary, picture symbols and an example episode",
		Example: `  graftrl envs describe sokoban
  # a 7×7 maze, its example episode on task 2
  graftrl envs describe maze --set size=7 --seed 2`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := envOptions(sets)
			if err != nil {
				return err
			}
			if err := envs.Describe(cmd.OutOrStdout(), args[0], opts, task); err != nil {
				return &usageError{err.Error()}
			}
			return nil
		},
	}
	describe.Flags().StringArrayVar(&sets, "set", nil, "env option key=value (repeatable)")
	describe.Flags().Int64Var(&task, "seed", 0, "task seed of the example episode")
	cmd.AddCommand(describe)
	return cmd
}

// envOptions turns key=value flags into env options (numbers and booleans parsed as such).
func envOptions(sets []string) (envs.Options, error) {
	opts := envs.Options{}
	for _, kv := range sets {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, &usageError{fmt.Sprintf("--set %q: expected option=value", kv)}
		}
		opts[k] = parseScalar(v)
	}
	return opts, nil
}

func newPlayCmd() *cobra.Command {
	var sets []string
	var name, run, ckpt string
	var task int64
	var sampled, untrained bool
	cmd := &cobra.Command{
		Use:   "play --env NAME [--seed S] [--set option=value ...] | play --run DIR [--seed S] [--sample] [--untrained | --checkpoint DIR]",
		Short: "Play an episode of an environment in the terminal (type one action per line), or watch a run's policy play one",
		Long: `Play one episode of an environment: it shows the task, the env's picture (for the grid envs)
and its observation, then reads one action per line and shows the reward and the new state
after each, until the episode ends or the input does (Ctrl-D). Type help (or ?) for the env's
action words and what the picture's symbols mean; help, an empty line and an arrow key cost no
turn and are not sent to the env.

With --run DIR, a trained run's policy plays instead (its newest valid checkpoint, or
--checkpoint DIR, or --untrained: its weights before training, e.g. the pretrained model with
fresh adapters): greedy, or sampled with --sample (seeded by --seed). It prints the episode as
the policy saw and wrote it (for a pretrained language model, the chat), then each step's
action, reward and whether the env refused it, and the outcome.`,
		Example: `  graftrl play --env sokoban
  # a 7×7 maze, task seed 3
  graftrl play --env maze --set size=7 --seed 3
  # watch a trained run's policy on task 500001 (a held-out task)
  graftrl play --run runs/lm-maze --seed 500001
  # the same task played by the model before training
  graftrl play --run runs/lm-maze --seed 500001 --untrained`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if run != "" {
				if name != "" || len(sets) > 0 {
					return &usageError{"play: --run plays the run's own env; --env and --set are for playing yourself"}
				}
				if untrained && ckpt != "" {
					return &usageError{"play: --untrained and --checkpoint each choose the weights; give one"}
				}
				return playRun(cmd.OutOrStdout(), cmd.ErrOrStderr(), run, trainer.Play{Task: task, Checkpoint: ckpt,
					Untrained: untrained, Sampled: sampled, Seed: uint64(task)})
			}
			if name == "" {
				return &usageError{"play: --env NAME is required (see graftrl envs list), or --run DIR to watch a run's policy"}
			}
			opts, err := envOptions(sets)
			if err != nil {
				return err
			}
			env, err := envs.New(name, opts)
			if err != nil {
				return &usageError{err.Error()}
			}
			defer envs.Close(env)
			return envs.Play(cmd.InOrStdin(), cmd.OutOrStdout(), env, task)
		},
	}
	cmd.Flags().StringVar(&name, "env", "", "environment name")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "env option key=value (repeatable)")
	cmd.Flags().Int64Var(&task, "seed", 0, "task seed")
	cmd.Flags().StringVar(&run, "run", "", "a run directory whose policy plays (runs/<name>)")
	cmd.Flags().StringVar(&ckpt, "checkpoint", "", "with --run: the checkpoint directory (default: the run's newest)")
	cmd.Flags().BoolVar(&untrained, "untrained", false, "with --run: play the run's weights before training (refused for a warm-started run)")
	cmd.Flags().BoolVar(&sampled, "sample", false, "with --run: sample the policy's tokens instead of taking the most likely")
	return cmd
}

// playRun prints an episode of task played by a run's policy (trainer.PlayRun).
func playRun(out, log io.Writer, run string, p trainer.Play) error {
	if info, err := os.Stat(filepath.Join(run, rundir.ConfigFile)); err != nil || info.IsDir() {
		return &usageError{fmt.Sprintf("--run %s: not a run directory (no %s)", run, rundir.ConfigFile)}
	}
	if err := checkCheckpointFlag("play", run, p.Checkpoint, false); err != nil {
		return err
	}
	ep, err := trainer.PlayRun(run, p, trainer.Options{Out: log, Quiet: true})
	if err != nil {
		return err
	}
	tr := ep.Traj
	fmt.Fprintf(out, "task %d, checkpoint %s\n", p.Task, ep.Checkpoint)
	for _, r := range ep.Rows {
		fmt.Fprintf(out, "\n%s\n", r)
	}
	fmt.Fprintln(out)
	for i, s := range tr.Steps {
		note := ""
		if s.Invalid {
			note = " (refused: invalid)"
		}
		fmt.Fprintf(out, "%2d. %-12q reward %g%s\n", i+1, s.Action, s.Reward, note)
	}
	switch {
	case tr.Err != "":
		fmt.Fprintf(out, "error: %s\n", tr.Err)
	case tr.Success:
		fmt.Fprintf(out, "success after %d steps (outcome %g)\n", len(tr.Steps), tr.Outcome)
	case tr.Truncated:
		fmt.Fprintf(out, "truncated after %d steps\n", len(tr.Steps))
	default:
		fmt.Fprintf(out, "failed after %d steps (outcome %g)\n", len(tr.Steps), tr.Outcome)
	}
	return nil
}
