package envs

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
)

// Renderer is implemented by environments that can draw their state for people.
type Renderer interface {
	Render() string
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
	fmt.Fprintf(out, "task %d: %s\n", task, instr)
	if aw, ok := env.(ActionWorder); ok {
		fmt.Fprintf(out, "actions are made of: %s\n", strings.Join(aw.ActionWords(), " "))
	}
	show()
	sc := bufio.NewScanner(in)
	ret := 0.0
	for turn := 1; !obs.Over(); turn++ {
		fmt.Fprintf(out, "turn %d/%d> ", turn, env.MaxTurns())
		if !sc.Scan() {
			fmt.Fprintln(out)
			return sc.Err()
		}
		if obs, err = env.Step(sc.Text()); err != nil {
			return err
		}
		ret += obs.Reward + obs.Outcome
		fmt.Fprintf(out, "reward %g%s\n", obs.Reward, endNote(obs))
		show()
	}
	fmt.Fprintf(out, "episode over: return %g, success %v\n", ret, obs.Info.Success)
	return nil
}
