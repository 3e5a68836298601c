// Command graftrl trains transformer policies with RL on multi-turn environments and compares
// advantage estimators (GRPO, GRAFT and peers). Run `graftrl --help` for the commands.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	_ "github.com/graftrl/graftrl/envs/all" // register every environment, the openenv client among them
	"github.com/graftrl/graftrl/trainer"
)

// Exit statuses.
const (
	exitError       = 1   // a failure during work
	exitConfig      = 2   // bad configuration, flags or input, refused before work started
	exitInterrupted = 75  // stopped by SIGINT/SIGTERM after writing a checkpoint: resume with --resume
	exitKilled      = 130 // a second signal: quit at once (the last checkpoint is intact)
)

// usageError marks a bad flag or argument (exit status 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "graftrl",
		Short:         "Agentic RL with trajectory-graph credit assignment: GRPO vs GRAFT, head to head",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err.Error()} })
	root.AddCommand(newTrainCmd(), newSFTCmd(), newEvalCmd(), newEnvsCmd(), newAdvantagesCmd(), newGraphCmd(), newPlayCmd(), newServeEnvCmd(),
		newSweepCmd(), newCompareCmd(), newHeadToHeadCmd(), newStudyCmd(), newAuditCmd(), newBenchCmd())
	return root
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	root := newRootCmd()
	root.SetArgs(args)
	err := root.Execute()
	if err != nil {
		fmt.Fprintln(os.Stderr, "graftrl:", err)
	}
	return exitStatus(err)
}

// exitStatus maps a command's error to the process's exit status: 0 for none, exitConfig for
// configuration and usage errors, exitInterrupted for a clean stop on a signal, exitError for the
// rest. The CLI tests read statuses through it too, so the two cannot drift apart.
func exitStatus(err error) int {
	if err == nil {
		return 0
	}
	var ce *trainer.ConfigError
	var ue *usageError
	switch {
	case errors.As(err, &ce) || errors.As(err, &ue):
		return exitConfig
	case errors.Is(err, trainer.ErrInterrupted):
		return exitInterrupted
	}
	return exitError
}
