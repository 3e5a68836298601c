package envtest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
)

// CheckGolden checks an env as the registry makes it. Each option it documents must be a key its
// options allow (an unknown key is refused with the list of the allowed ones). And the transcripts
// of env (see Transcript) must match the hashes of a golden file, one line per configuration as
// sha256sum writes a hash and a name: the hex SHA-256 of the transcript, two spaces, and the
// options the env is made from as a JSON object. Empty lines and lines that start with '#' are
// comments.
func CheckGolden(t *testing.T, env, path string) {
	t.Helper()
	spec, err := envs.Lookup(env)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range spec.Options {
		if _, err := envs.New(env, envs.Options{d.Key + "x": 1}); err == nil || !strings.Contains(err.Error(), d.Key) {
			t.Errorf("documented key %q is not among the allowed keys: %v", d.Key, err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cases := 0
	for n, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		want, js, ok := strings.Cut(line, "  ")
		var opts envs.Options
		if err := json.Unmarshal([]byte(js), &opts); !ok || err != nil {
			t.Fatalf("%s:%d: %q is not a hash, two spaces and a JSON object of options (%v)", path, n+1, line, err)
		}
		cases++
		text, err := Transcript(env, opts)
		if err != nil {
			t.Errorf("%s:%d: %v", path, n+1, err)
			continue
		}
		sum := sha256.Sum256([]byte(text))
		if got := hex.EncodeToString(sum[:]); got != want {
			t.Errorf("%s:%d: options %s: transcript hash %s, want %s: the env's text, tasks, state keys or rewards changed (Transcript writes what it hashes)",
				path, n+1, js, got, want)
		}
	}
	if cases == 0 {
		t.Fatalf("%s: no hashes", path)
	}
}

// Transcript writes down, as text, everything an env made from opts through the registry says and
// does: its registered description and option docs, vocabulary, action words and step cap; what it
// answers before Reset; then, for each task seed of a fixed list (with seeds revisited), the
// instruction and first observation, and for every step of a fixed cycle of actions (the expert's
// among them) the observation with its rewards and Info, the state key, the picture, the valid
// actions and the expert's next action, until the episode ends and one more Step is refused. An
// env that implements envs.EpisodeSeeder is given a seed before every third Reset.
func Transcript(env string, opts envs.Options) (string, error) {
	spec, err := envs.Lookup(env)
	if err != nil {
		return "", err
	}
	e, err := envs.New(env, opts)
	if err != nil {
		return "", err
	}
	defer envs.Close(e)
	// The task seeds, in order: seeds revisited right away and later (the layout of the last task
	// is kept, an earlier one drawn again), negative and large seeds. The actions of every episode
	// cycle through script, where "" stands for the env's expert action, so that episodes reach the
	// goal as well as walls, traps and the step cap. The words are a grid env's moves; to other envs
	// they are invalid actions between the expert's.
	tasks := []int64{0, 1, 1, 2, 0, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
		22, 23, 24, 25, 26, 27, 28, 29, 3, -1, -12345, 1 << 40}
	script := []string{"up", "", "left", "jump", "", "DOWN ", "", "", "right", "", "up up", "", "down", "left", "", ""}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", spec.Name, spec.Description)
	for _, o := range spec.Options {
		fmt.Fprintf(&b, "option %s default %s: %s\n", o.Key, o.Default, o.Help)
	}
	fmt.Fprintf(&b, "vocabulary %q\nmax turns %d\n", e.Vocabulary(), e.MaxTurns())
	if aw, ok := e.(envs.ActionWorder); ok {
		fmt.Fprintf(&b, "action words %q\n", aw.ActionWords())
	}
	_, err = e.Step("up")
	fmt.Fprintf(&b, "step before reset: %v\n", err)
	state(&b, e)
	for k, task := range tasks {
		if s, ok := e.(envs.EpisodeSeeder); ok && k%3 == 2 {
			s.SeedEpisode(int64(k) * 31)
			fmt.Fprintf(&b, "seed episode %d\n", int64(k)*31)
		}
		ins, obs, err := e.Reset(task)
		if err != nil {
			return "", fmt.Errorf("task %d: %w", task, err)
		}
		fmt.Fprintf(&b, "task %d\ninstruction %q\nreset %s\nturn cap %d\n", task, ins, observation(obs), envs.TurnCapOf(e))
		state(&b, e)
		for i := 0; !obs.Over(); i++ {
			if i > e.MaxTurns() {
				return "", fmt.Errorf("task %d: not over after %d steps", task, i)
			}
			action := script[i%len(script)]
			if action == "" {
				if x, ok := e.(envs.Expert); ok {
					action, _ = x.ExpertAction()
				}
			}
			if obs, err = e.Step(action); err != nil {
				return "", fmt.Errorf("task %d step %d: %w", task, i, err)
			}
			fmt.Fprintf(&b, "step %q %s\n", action, observation(obs))
			state(&b, e)
		}
		_, err = e.Step("up")
		fmt.Fprintf(&b, "step after the end: %v\n", err)
	}
	return b.String(), nil
}

// observation writes down every field of an observation, by name, so that a field added to
// envs.Observation later does not change the transcript.
func observation(o envs.Observation) string {
	return fmt.Sprintf("%q reward %g outcome %g done %v truncated %v success %v invalid %v distance %d extra %v",
		o.Text, o.Reward, o.Outcome, o.Done, o.Truncated, o.Info.Success, o.Info.Invalid, o.Info.Distance, o.Info.Extra)
}

// state writes the state key, the picture, the valid actions and the expert's action of e.
func state(b *strings.Builder, e envs.Env) {
	fmt.Fprintf(b, "key %q\n", e.StateKey())
	if r, ok := e.(envs.Renderer); ok {
		b.WriteString(r.Render())
	}
	if v, ok := e.(envs.ValidActioner); ok {
		fmt.Fprintf(b, "valid %q\n", v.ValidActions())
	}
	if x, ok := e.(envs.Expert); ok {
		a, err := x.ExpertAction()
		fmt.Fprintf(b, "expert %q %v\n", a, err)
	}
}
