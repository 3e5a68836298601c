// Package gridtest holds the test helpers the grid environments (maze, keydoor, sokoban, frozenlake)
// share: the transcript of an env's episodes, whose hash pins what the env says and does
// (CheckGolden); the checks of task seeds (CheckLayout, CheckSeeds) and of generated layouts
// (CellCounts); the independent breadth-first oracle of distances over stepped clones (Oracle) and
// the expert's play (PlayExpert, CheckOptimal); and the benchmark loops of Step and Reset. It is
// imported by tests only.
package gridtest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
	"github.com/graftrl/graftrl/envs/grid"
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
	// goal as well as walls, traps and the step cap.
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

// Layout is what Reset shows of a task: the instruction, Info.Distance of the first observation,
// and the picture (Render), written as a raw string literal that starts with a line break.
type Layout struct {
	Instruction string
	Distance    int
	Picture     string
}

// CheckLayout resets e to task and compares what it shows with want, for the tests that pin the
// layouts of a few task seeds: the task panels of every past run depend on them.
func CheckLayout(t *testing.T, e envtest.Renderer, task int64, want Layout) {
	t.Helper()
	ins, obs := envtest.MustReset(t, e, task)
	picture := strings.TrimPrefix(want.Picture, "\n")
	if got := e.Render(); ins != want.Instruction || obs.Info.Distance != want.Distance || got != picture {
		t.Errorf("task %d: %q, distance %d\n%s\nwant %q, %d\n%s", task, ins, obs.Info.Distance, got,
			want.Instruction, want.Distance, picture)
	}
}

// CheckSeeds checks that a task seed fixes the layout and the episode (envtest.CheckLayoutSeeds): two
// instances from newEnv draw the same layout for each of task seeds 0..n-1 and play the same episode
// of a cycle of moves with an invalid action among them, and the n seeds give at least minDistinct
// layouts.
func CheckSeeds(t *testing.T, n int64, minDistinct int, newEnv func() envtest.Renderer) {
	t.Helper()
	envtest.CheckLayoutSeeds(t, newEnv, n, minDistinct, []string{"up", "right", "down", "left", "down", "jump", "right", "down"})
}

// CellCounts counts the cells of a layout of side size by content, cells being indexed as
// grid.Index does, and fails the test, naming the layout with name, where a cell off the grid is not
// the zero cell.
func CellCounts[C comparable](t *testing.T, name string, cells []C, size int) map[C]int {
	t.Helper()
	var zero C
	counts := map[C]int{}
	for i, c := range cells {
		if grid.Row(i) < size && grid.Col(i) < size {
			counts[c]++
		} else if c != zero {
			t.Fatalf("%s: cell %s off the %d×%d grid is %v", name, grid.CellKey(i), size, size, c)
		}
	}
	return counts
}

// Oracle is an independent check of Info.Distance on a deterministic env: it explores every state
// reachable from start by stepping clones with the four moves, then labels each state with its
// number of moves to success by a backward breadth-first search over the explored graph. It
// returns, for every explored state key, the label (-1 where success cannot be reached) and
// Info.Distance on entering the state (startDist for start). start must implement envs.Cloner, its
// state keys must tell its states apart, and its step cap must not cut the search short.
func Oracle(t *testing.T, start envs.Env, startDist int) map[string][2]int {
	t.Helper()
	type node struct {
		env  envs.Env
		dist int // Info.Distance on entering the state
	}
	nodes := map[string]node{start.StateKey(): {start, startDist}}
	preds := map[string][]string{}
	label := map[string]int{}
	var solvedFrom []string
	queue := []string{start.StateKey()}
	for len(queue) > 0 {
		k := queue[0]
		queue = queue[1:]
		for _, a := range grid.ActionWords() {
			c := nodes[k].env.(envs.Cloner).Clone()
			obs := envtest.MustStep(t, c, a)
			if obs.Info.Invalid {
				continue
			}
			if obs.Info.Success {
				solvedFrom = append(solvedFrom, k)
				continue
			}
			nk := c.StateKey()
			preds[nk] = append(preds[nk], k)
			if _, seen := nodes[nk]; !seen {
				nodes[nk] = node{c, obs.Info.Distance}
				queue = append(queue, nk)
			}
		}
	}
	for _, k := range solvedFrom {
		if _, ok := label[k]; !ok {
			label[k] = 1
			queue = append(queue, k)
		}
	}
	for len(queue) > 0 {
		k := queue[0]
		queue = queue[1:]
		for _, p := range preds[k] {
			if _, ok := label[p]; !ok {
				label[p] = label[k] + 1
				queue = append(queue, p)
			}
		}
	}
	out := map[string][2]int{}
	for k, n := range nodes {
		l, ok := label[k]
		if !ok {
			l = -1
		}
		out[k] = [2]int{l, n.dist}
	}
	return out
}

// PlayExpert plays the expert of e (envs.Expert) from its current state to the end of the episode
// and returns the number of steps and the last observation.
func PlayExpert(t *testing.T, e envs.Env) (int, envs.Observation) {
	t.Helper()
	for steps := 1; ; steps++ {
		a, err := e.(envs.Expert).ExpertAction()
		if err != nil {
			t.Fatal(err)
		}
		if obs := envtest.MustStep(t, e, a); obs.Over() {
			return steps, obs
		}
	}
}

// CheckOptimal resets e to task seeds 0..n-1 and checks on each task that its optimal length, as
// optimal counts it by an independent search from the state Reset left, lies in lo..hi, is the
// Info.Distance Reset reports, and is exactly the number of steps of the expert's successful
// episode. It returns the longest optimal length.
func CheckOptimal(t *testing.T, e envs.Env, n int64, lo, hi int, optimal func() int) (longest int) {
	t.Helper()
	for seed := range n {
		_, first := envtest.MustReset(t, e, seed)
		d := optimal()
		if d < lo || d > hi || first.Info.Distance != d {
			t.Fatalf("seed %d: optimal length %d (want %d..%d), Reset's distance %d", seed, d, lo, hi, first.Info.Distance)
		}
		if steps, last := PlayExpert(t, e); !last.Info.Success || steps != d {
			t.Fatalf("seed %d: expert took %d steps (success %v), optimal %d", seed, steps, last.Info.Success, d)
		}
		longest = max(longest, d)
	}
	return longest
}

// BenchmarkSteps measures episodes of random-looking actions on generated tasks, Resets included, as
// the rollout collector drives an env from newEnv; it reports steps per second. A new task every
// other episode, so that both layout generation and the cached layout are timed.
func BenchmarkSteps(b *testing.B, newEnv func() (envs.Env, error)) {
	e, err := newEnv()
	if err != nil {
		b.Fatal(err)
	}
	actions := [...]string{"up", "right", "down", "left", "right", "jump", "down", "down", "left", "up", "right"}
	seed := int64(0)
	if _, _, err := e.Reset(seed); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		obs, err := e.Step(actions[i%len(actions)])
		if err != nil {
			b.Fatal(err)
		}
		_ = e.StateKey()
		i++
		if obs.Over() {
			seed += int64(i & 1)
			if _, _, err := e.Reset(seed); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
}

// BenchmarkResets measures layout generation for a new task seed on an env from newEnv.
func BenchmarkResets(b *testing.B, newEnv func() (envs.Env, error)) {
	e, err := newEnv()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	seed := int64(0)
	for b.Loop() {
		seed++
		if _, _, err := e.Reset(seed); err != nil {
			b.Fatal(err)
		}
	}
}
