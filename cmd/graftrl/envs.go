package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/graftrl/graftrl/envs"
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
	var name string
	var task int64
	cmd := &cobra.Command{
		Use:   "play --env NAME [--seed S] [--set option=value ...]",
		Short: "Play an episode of an environment in the terminal (type one action per line)",
		Long: `Play one episode of an environment: it shows the task, the env's picture (for the grid envs)
and its observation, then reads one action per line and shows the reward and the new state
after each, until the episode ends or the input does (Ctrl-D). Type help (or ?) for the env's
action words and what the picture's symbols mean; help, an empty line and an arrow key cost no
turn and are not sent to the env.`,
		Example: `  graftrl play --env sokoban
  # a 7×7 maze, task seed 3
  graftrl play --env maze --set size=7 --seed 3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				return &usageError{"play: --env NAME is required (see graftrl envs list)"}
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
	return cmd
}
