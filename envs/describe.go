package envs

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"unicode"
)

// Renderer is implemented by environments that can draw their state for people.
type Renderer interface {
	Render() string
}

// Legender is implemented by environments whose Render draws symbols: Legend says what each
// symbol means, on one line ("'#' wall, '@' player, …"). Describe and Play print it.
type Legender interface {
	Legend() string
}

// Describe writes what a person needs to use an environment: its options with defaults, its
// vocabulary and turn cap, and an example episode of random actions on one task.
func Describe(w io.Writer, name string, opts Options, task int64) error {
	spec, err := Lookup(name)
	if err != nil {
		return err
	}
	env, err := spec.New(opts)
	if err != nil {
		return err
	}
	defer Close(env)
	fmt.Fprintf(w, "%s — %s\n\noptions:\n", spec.Name, spec.Description)
	for _, o := range spec.Options {
		fmt.Fprintf(w, "  %-18s default %-28s %s\n", o.Key, o.Default, o.Help)
	}
	vocab := env.Vocabulary()
	fmt.Fprintf(w, "\nmax turns: %d\nvocabulary (%d words): %s\n", env.MaxTurns(), len(vocab), strings.Join(vocab, " "))
	words := vocab
	if aw, ok := env.(ActionWorder); ok {
		words = aw.ActionWords()
		fmt.Fprintf(w, "action words: %s\n", strings.Join(words, " "))
	}
	if l, ok := env.(Legender); ok {
		fmt.Fprintf(w, "symbols of its picture (graftrl play): %s\n", l.Legend())
	}
	fmt.Fprintf(w, "\nexample episode (task %d, random actions):\n", task)
	instr, obs, err := env.Reset(task)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  instruction: %s\n  observation: %s\n", instr, obs.Text)
	rng := rand.New(rand.NewPCG(uint64(task), 7))
	for turn := 1; !obs.Over() && turn <= env.MaxTurns(); turn++ {
		action := words[rng.IntN(len(words))]
		if obs, err = env.Step(action); err != nil {
			return err
		}
		fmt.Fprintf(w, "  %2d. %-12s → %s (reward %g%s)\n", turn, action, obs.Text, obs.Reward, endNote(obs))
	}
	return nil
}

func endNote(o Observation) string {
	switch {
	case o.Info.Success:
		return fmt.Sprintf(", success, outcome %g", o.Outcome)
	case o.Done:
		return fmt.Sprintf(", done, outcome %g", o.Outcome)
	case o.Truncated:
		return ", truncated"
	case o.Info.Invalid:
		return ", invalid action"
	}
	return ""
}

// Play runs one episode with a person typing the actions: each line read from in is an action.
// The env's picture (when it has Render) and observation are written to out after every step.
// A line that cannot be meant as an action is not sent and costs no turn: an empty line, one
// holding control characters (an arrow key sends an escape sequence), and "help" or "?", which
// print the env's action words and, when it has a Legend, what its picture's symbols mean.
func Play(in io.Reader, out io.Writer, env Env, task int64) error {
	instr, obs, err := env.Reset(task)
	if err != nil {
		return err
	}
	show := func() {
		if r, ok := env.(Renderer); ok {
			fmt.Fprintln(out, r.Render())
		}
		fmt.Fprintf(out, "observation: %s\n", obs.Text)
	}
	words := env.Vocabulary()
	wordsAre := "actions use the words"
	if aw, ok := env.(ActionWorder); ok {
		words, wordsAre = aw.ActionWords(), "actions are made of"
	}
	isHelp := func(line string) bool { return line == "?" || line == "help" && !slices.Contains(words, "help") }
	help := func() {
		fmt.Fprintf(out, "type one action per line (%s: %s)", wordsAre, strings.Join(words, " "))
		if l, ok := env.(Legender); ok {
			fmt.Fprintf(out, "\nsymbols: %s", l.Legend())
		}
		fmt.Fprintf(out, "\nan empty line, an arrow key or help costs no turn; Ctrl-D ends the episode\n")
	}
	fmt.Fprintf(out, "task %d: %s\n", task, instr)
	fmt.Fprintf(out, "%s: %s (type help for help)\n", wordsAre, strings.Join(words, " "))
	show()
	sc := bufio.NewScanner(in)
	ret := 0.0
	for turn := 1; !obs.Over(); {
		fmt.Fprintf(out, "turn %d/%d> ", turn, env.MaxTurns())
		if !sc.Scan() {
			fmt.Fprintln(out)
			return sc.Err()
		}
		line := sc.Text()
		switch t := strings.TrimSpace(line); {
		case t == "":
			continue
		case isHelp(t):
			help()
			continue
		case strings.ContainsFunc(line, func(r rune) bool { return r != '\t' && unicode.IsControl(r) }):
			fmt.Fprintln(out, "not sent: the line holds control characters (an arrow key?); type the action's words, or help")
			continue
		}
		if obs, err = env.Step(line); err != nil {
			return err
		}
		turn++
		ret += obs.Reward + obs.Outcome
		fmt.Fprintf(out, "reward %g%s\n", obs.Reward, endNote(obs))
		show()
	}
	fmt.Fprintf(out, "episode over: return %g, success %v\n", ret, obs.Info.Success)
	return nil
}
