// Package gridtest holds the test helpers the grid environments (maze, keydoor, sokoban, frozenlake)
// share: the checks of task seeds (CheckLayout, CheckSeeds) and of generated layouts
// (CellCounts); the independent breadth-first oracle of distances over stepped clones (Oracle) and
// the expert's play (PlayExpert, CheckOptimal); and the benchmark loop of Step over the moves. It is
// imported by tests only.
package gridtest

import (
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
	"github.com/graftrl/graftrl/envs/grid"
)

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

// Oracle is envtest.Oracle with the four moves: an independent check of Info.Distance on a
// deterministic grid env, by a backward breadth-first search over the states reachable from start.
func Oracle(t *testing.T, start envs.Env, startDist int) map[string][2]int {
	t.Helper()
	return envtest.Oracle(t, start, startDist, grid.ActionWords())
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

// MoveOptions declares the four moves of a deterministic grid env to the conformance suite: they
// are its actions and cover every transition; an invalid one costs penalty.
func MoveOptions(penalty float64) []envtest.Option {
	return []envtest.Option{envtest.ActionSet(grid.ActionWords()...), envtest.Penalty(penalty)}
}

// BenchmarkSteps measures episodes of random-looking moves on generated tasks, Resets included, as
// the rollout collector drives an env from newEnv (envtest.BenchmarkSteps); it reports steps per
// second.
func BenchmarkSteps(b *testing.B, newEnv func() (envs.Env, error)) {
	envtest.BenchmarkSteps(b, newEnv, "up", "right", "down", "left", "right", "jump", "down", "down", "left", "up", "right")
}
