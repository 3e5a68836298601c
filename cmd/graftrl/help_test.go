package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// exampleArgs splits an example line as a shell would for the cases examples use: leading
// VAR=value assignments dropped, the line cut at a pipe or a redirection, '…' and "…" quoting.
func exampleArgs(line string) []string {
	var args []string
	var cur strings.Builder
	var quote rune
	inArg := false
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inArg = r, true
		case r == ' ' || r == '\t':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if inArg {
		args = append(args, cur.String())
	}
	for len(args) > 0 && strings.Contains(args[0], "=") && !strings.HasPrefix(args[0], "-") {
		args = args[1:]
	}
	for i, a := range args {
		if a == "|" || a == ">" || a == ">>" || a == "2>&1" {
			return args[:i]
		}
	}
	return args
}

// Every command's --help has an Examples section (cobra's Example field), and every example is a
// real command line: it names an existing command, its flags exist and take the values given, and
// its arguments pass the command's argument check. The root, which lists the commands, need not
// have one; one it has is checked.
func TestHelpExamples(t *testing.T) {
	exempt := map[string]bool{"graftrl": true}
	var all []*cobra.Command
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Name() == "help" || c.Name() == "completion" {
			return
		}
		all = append(all, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
	if len(all) < 18 {
		t.Fatalf("only %d commands found", len(all))
	}
	for _, c := range all {
		path := c.CommandPath()
		if c.Example == "" {
			if !exempt[path] {
				t.Errorf("%s: no Example in its help", path)
			}
			continue
		}
		help, _, code := cli(t, append(strings.Fields(path)[1:], "--help")...)
		if code != 0 || !strings.Contains(help, "\nExamples:\n"+c.Example+"\n") {
			t.Errorf("%s --help (status %d) lacks its Examples section:\n%s", path, code, help)
		}
		lines := 0
		for _, line := range strings.Split(c.Example, "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			lines++
			args := exampleArgs(line)
			if len(args) < 1 || args[0] != "graftrl" {
				t.Errorf("%s: example %q does not run graftrl", path, line)
				continue
			}
			root := newRootCmd()
			cmd, rest, err := root.Find(args[1:])
			if err != nil {
				t.Errorf("%s: example %q: %v", path, line, err)
				continue
			}
			cmd.InitDefaultHelpFlag()
			cmd.InitDefaultVersionFlag()
			if err := cmd.ParseFlags(rest); err != nil {
				t.Errorf("%s: example %q: %v", path, line, err)
				continue
			}
			if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
				t.Errorf("%s: example %q: %v", path, line, err)
			}
		}
		if lines == 0 {
			t.Errorf("%s: its Example holds no command line", path)
		}
	}
}

// play's help says how to ask for help during the game and that such lines cost no turn.
func TestPlayHelp(t *testing.T) {
	out, _, code := cli(t, "play", "--help")
	for _, want := range []string{"Type help (or ?) for the env's", "what the picture's symbols mean", "cost no\nturn"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("play --help (status %d) lacks %q:\n%s", code, want, out)
		}
	}
}
