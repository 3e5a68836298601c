package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/graftrl/graftrl/advantage"
)

func newEstimatorsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "estimators [NAME ...]",
		Short: "List the advantage estimators with their help and options (defaults)",
		Long: `List the registered advantage estimators (all, or those named): each one's help, whether it
needs tasks.group_size ≥ 2, and its options with their defaults. A config's estimator section
names one and sets its options: estimator: {name: graft, mode: td}, or on the command line
--estimator graft --set estimator.mode=td.`,
		Example: `  graftrl estimators
  graftrl estimators graft gigpo`,
		RunE: func(cmd *cobra.Command, args []string) error {
			names := args
			if len(names) == 0 {
				names = advantage.Names()
			}
			for _, name := range names {
				if err := advantage.Check(name, nil); err != nil {
					return &usageError{err.Error()}
				}
			}
			for i, name := range names {
				if i > 0 {
					fmt.Fprintln(cmd.OutOrStdout())
				}
				describeEstimator(cmd.OutOrStdout(), name)
			}
			return nil
		},
	}
}

// describeEstimator writes an estimator's help, its group_size need and its options.
func describeEstimator(w io.Writer, name string) {
	fmt.Fprintf(w, "%s — %s\n", name, advantage.Help(name))
	for _, n := range advantage.GroupRelative() {
		if n == name {
			fmt.Fprintln(w, "  group-relative: needs tasks.group_size ≥ 2")
		}
	}
	fmt.Fprintln(w, "  options (defaults):")
	for _, o := range advantage.Options(name) {
		fmt.Fprintf(w, "    %-18s %s\n", o.Key, o.Default)
	}
}

// estimatorList is one line per registered estimator, name and help, for train's help.
func estimatorList() string {
	var b strings.Builder
	for _, name := range advantage.Names() {
		fmt.Fprintf(&b, "\n  %-10s %s", name, advantage.Help(name))
	}
	return b.String()
}
