// Command graftrl trains transformer policies with RL on multi-turn environments and compares
// advantage estimators (GRPO, GRAFT and peers). Run `graftrl --help` for the commands.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/graftrl/graftrl/config"
	_ "github.com/graftrl/graftrl/envs/all" // register every environment, the openenv client among them
	"github.com/graftrl/graftrl/internal/limits"
	"github.com/graftrl/graftrl/policy/spec"
	"github.com/graftrl/graftrl/sweep"
	"github.com/graftrl/graftrl/trainer"
)

// Exit statuses (README, Exit statuses).
const (
	exitError       = 1   // the environment failed or a fault stopped the work: the input was fine
	exitConfig      = 2   // refused input: a bad config, flag, argument, command or input file, or a run directory in use, before work started
	exitInterrupted = 75  // stopped by SIGINT/SIGTERM after writing a checkpoint: resume with --resume
	exitKilled      = 130 // a second signal: quit at once (the last checkpoint is intact)
)

// usageError marks a bad flag, argument or command (exit status 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "graftrl",
		Short: "Agentic RL with trajectory-graph credit assignment: GRPO vs GRAFT, head to head",
		Long: `graftrl trains a small transformer policy with RL on multi-turn text environments and compares
advantage estimators (GRPO, GRAFT and peers).

Start here: graftrl train --config configs/quickstart.yaml trains GRPO on a 5×5 maze in about
a minute (README.md; every command in docs/usage.md). graftrl COMMAND --help shows a command's
flags and examples.`,
		Version:       versionString(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("graftrl {{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err.Error()} })
	root.AddCommand(newTrainCmd(), newSFTCmd(), newEvalCmd(), newEnvsCmd(), newEstimatorsCmd(), newAdvantagesCmd(), newGraphCmd(), newPlayCmd(), newServeEnvCmd(),
		newSweepCmd(), newCompareCmd(), newHeadToHeadCmd(), newStudyCmd(), newAuditCmd(), newBenchCmd(), newVersionCmd())
	strictArgs(root)
	return root
}

// strictArgs makes every bad argument a usage error (exit status 2): a command's argument
// check, and an unknown subcommand of a command group (which cobra would answer with its help
// and status 0). A group given no subcommand prints its help.
func strictArgs(c *cobra.Command) {
	for _, sub := range c.Commands() {
		strictArgs(sub)
	}
	if c.HasSubCommands() && c.Run == nil && c.RunE == nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			msg := fmt.Sprintf("unknown command %q for %q (commands: %s)", args[0], cmd.CommandPath(), strings.Join(commandNames(cmd), ", "))
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += "; did you mean " + strings.Join(s, " or ") + "?"
			}
			return &usageError{msg}
		}
		c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		return
	}
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				var ue *usageError
				if errors.As(err, &ue) {
					return err
				}
				return &usageError{fmt.Sprintf("%s: %v (usage: %s)", cmd.CommandPath(), err, cmd.UseLine())}
			}
			return nil
		}
	}
}

func commandNames(c *cobra.Command) []string {
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	return names
}

// intFlagAtLeast refuses an integer flag given on the command line with a value below lo,
// naming the flag and what is allowed; a flag left out is not checked (its default applies).
func intFlagAtLeast(cmd *cobra.Command, name string, lo int, allowed string) error {
	f := cmd.Flags().Lookup(name)
	if f == nil || !f.Changed {
		return nil
	}
	v, err := cmd.Flags().GetInt(name)
	if err == nil && v < lo {
		return &usageError{fmt.Sprintf("%s: --%s %d is out of range (allowed %s)", cmd.CommandPath(), name, v, allowed)}
	}
	return err
}

// changedFlags names the flags given on the command line.
func changedFlags(cmd *cobra.Command) map[string]bool {
	set := map[string]bool{}
	cmd.Flags().Visit(func(f *pflag.Flag) { set[f.Name] = true })
	return set
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
// refused input (configuration and usage errors, an unknown backend name, an input file over its
// size limit, a run directory that cannot take the run: in use by another process, holding
// another run, resumed with another config or a shorter length), exitInterrupted for a clean
// stop on a signal, exitError for the rest (among them a valid backend this machine cannot load:
// a missing or broken plugin, no GPU). The CLI tests read statuses through it too, so the two
// cannot drift apart.
func exitStatus(err error) int {
	if err == nil {
		return 0
	}
	var ce *config.Error
	var de *trainer.DirError
	var ue *usageError
	switch {
	case errors.As(err, &ce) || errors.As(err, &de) || errors.As(err, &ue) || errors.Is(err, spec.ErrUnknownBackend) || errors.Is(err, limits.ErrTooLarge):
		return exitConfig
	case errors.Is(err, trainer.ErrInterrupted) || errors.Is(err, sweep.ErrInterrupted):
		return exitInterrupted
	}
	return exitError
}
