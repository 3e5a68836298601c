package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/trainer"
)

func newEnvsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "envs", Short: "List and describe the registered environments"}
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the registered environments",
		Args:  cobra.NoArgs,
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
		Short: "Show an environment's options, vocabulary and an example episode",
		Args:  cobra.ExactArgs(1),
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
		opts[k] = trainer.ParseScalar(v)
	}
	return opts, nil
}

func newPlayCmd() *cobra.Command {
	var sets []string
	var name string
	var task int64
	cmd := &cobra.Command{
		Use:   "play --env NAME [--seed S]",
		Short: "Play an episode of an environment in the terminal (type one action per line)",
		Args:  cobra.NoArgs,
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
