// Command graftrl trains transformer policies with RL on multi-turn environments and compares
// advantage estimators (GRPO, GRAFT and peers). Run `graftrl --help` for the commands.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/graftrl/graftrl/config"
	_ "github.com/graftrl/graftrl/envs/all" // register every environment, the openenv client among them
	"github.com/graftrl/graftrl/internal/limits"
	"github.com/graftrl/graftrl/policy/pretrained"
	"github.com/graftrl/graftrl/policy/spec"
	"github.com/graftrl/graftrl/sweep"
	"github.com/graftrl/graftrl/trainer"
)

// Exit statuses (docs/reliability.md#exit-statuses).
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
	root.AddCommand(newTrainCmd(), newSFTCmd(), newEvalCmd(), newEnvsCmd(), newEstimatorsCmd(), newAdvantagesCmd(), newGraphCmd(), newPlayCmd(), newServeEnvCmd(), newChatCmd(), newConvertCmd(),
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
				if lerr := leftoverValue(cmd, args); lerr != nil {
					return lerr
				}
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

// rawArgsKey keys the command line, as given, in the context of the command that runs: pflag
// keeps no trace of where each word stood, and leftoverValue needs to know which flag a word
// followed.
type rawArgsKey struct{}

// leftoverValue explains a refused argument that came right after a flag whose value is
// optional (a boolean, or --save-batches, whose value alone is 1) and that would have been a
// value of that flag: pflag takes such a value only after "=", so `--save-batches 1` sets the
// flag's default value and leaves "1" over. Suggesting the command's usual flag for a stray
// word (`did you mean --config 1?`) would then mislead. It returns nil when no argument is such
// a word, or when the command line is unknown (commands run without run's context).
func leftoverValue(cmd *cobra.Command, args []string) error {
	raw := rawArgs(cmd)
	if len(raw) == 0 || len(args) == 0 {
		return nil
	}
	fs := cmd.Flags()
	// The words before the arguments name the command (graftrl envs describe: two).
	names := len(strings.Fields(cmd.CommandPath())) - 1
	positional := 0
	var prev *pflag.Flag // the flag of the word before, when it took no value of its own
	for i := 0; i < len(raw); i++ {
		word := raw[i]
		after := prev
		prev = nil
		switch {
		case word == "--":
			return nil // every word after "--" is an argument by request
		case strings.HasPrefix(word, "--"):
			name, _, inline := strings.Cut(word[2:], "=")
			f := fs.Lookup(name)
			switch {
			case f == nil || inline:
			case f.NoOptDefVal != "":
				prev = f
			default:
				i++ // the next word is this flag's value
			}
		case strings.HasPrefix(word, "-") && len(word) > 1:
			// Shorthands, grouped or not: -q, -c FILE, -cFILE, -c=FILE, -qc FILE.
			for j := 1; j < len(word); j++ {
				f := fs.ShorthandLookup(word[j : j+1])
				if f == nil || (j+1 < len(word) && word[j+1] == '=') {
					break
				}
				if f.NoOptDefVal != "" {
					if j == len(word)-1 {
						prev = f
					}
					continue
				}
				if j == len(word)-1 {
					i++
				}
				break
			}
		default:
			positional++
			if positional <= names {
				continue
			}
			if after != nil && flagAccepts(after, word) {
				name := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ") // main prints "graftrl: "
				return &usageError{fmt.Sprintf("%s: unexpected argument %q after --%s, which takes a value only after \"=\" (alone it means --%s=%s); did you mean --%s=%s? (usage: %s)",
					name, word, after.Name, after.Name, after.NoOptDefVal, after.Name, word, cmd.UseLine())}
			}
		}
	}
	return nil
}

// rawArgs is the command line run put in the command's context, or nil.
func rawArgs(cmd *cobra.Command) []string {
	ctx := cmd.Context()
	if ctx == nil {
		return nil
	}
	raw, _ := ctx.Value(rawArgsKey{}).([]string)
	return raw
}

// flagAccepts reports whether word is a value of flag f's type, that is whether the user
// plausibly meant it as f's value; a word that is not (a file name after --quiet) was meant for
// something else, and the command's own message about it stands.
func flagAccepts(f *pflag.Flag, word string) bool {
	var err error
	switch f.Value.Type() {
	case "bool":
		_, err = strconv.ParseBool(word)
	case "int", "int8", "int16", "int32", "int64", "count":
		_, err = strconv.ParseInt(word, 0, 64)
	case "uint", "uint8", "uint16", "uint32", "uint64":
		_, err = strconv.ParseUint(word, 0, 64)
	case "float32", "float64":
		_, err = strconv.ParseFloat(word, 64)
	}
	return err == nil
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
	softMemoryLimit()
	root := newRootCmd()
	root.SetArgs(args)
	err := root.ExecuteContext(context.WithValue(context.Background(), rawArgsKey{}, args))
	if err != nil {
		fmt.Fprintln(os.Stderr, "graftrl:", err)
	}
	return exitStatus(err)
}

// softMemoryLimit asks the garbage collector to keep the heap under three quarters of the
// memory available at start, unless GOMEMLIMIT says otherwise. A language model's update
// allocates gigabytes of short-lived activations, which GoMLX's go backend pools between
// updates; GOGC's pacing alone lets the heap grow to twice what is live and the kernel kill the
// run, where collecting sooner keeps it within the machine. Results do not depend on it.
func softMemoryLimit() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	if avail, ok := pretrained.MemAvailable(); ok && avail > 1<<30 {
		debug.SetMemoryLimit(avail / 4 * 3)
	}
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
