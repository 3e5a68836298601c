package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/graftrl/graftrl/envs"
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
	return cmd
}
