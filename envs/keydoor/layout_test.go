package keydoor

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
)

// oracle is an independent check of the distances: it explores every state reachable from the start
// by stepping clones with the four moves, then labels each state with its number of moves to the goal
// by a backward breadth-first search over the explored graph. It returns, per explored state, the
// label (-1 when the goal is unreachable) and Info.Distance on entering it.
func oracle(t *testing.T, k *KeyDoor) map[string][2]int {
	t.Helper()
	start := k.Clone().(*KeyDoor)
	start.cfg.MaxTurns, start.cap, start.cfg.KeyInState = 1<<30, 1<<30, true
	type node struct {
		env  *KeyDoor
		dist int
	}
	nodes := map[string]node{start.StateKey(): {start, k.distance()}}
	preds := map[string][]string{}
	var label = map[string]int{}
	var queue, next []string
	queue = []string{start.StateKey()}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, a := range []string{"up", "down", "left", "right"} {
			c := nodes[s].env.Clone().(*KeyDoor)
			obs := envtest.MustStep(t, c, a)
			if obs.Info.Invalid {
				continue
			}
			if obs.Info.Success {
				if _, ok := label[s]; !ok {
					label[s] = 1
					next = append(next, s)
				}
				continue
			}
			n := c.StateKey()
			preds[n] = append(preds[n], s)
			if _, seen := nodes[n]; !seen {
				nodes[n] = node{c, obs.Info.Distance}
				queue = append(queue, n)
			}
		}
	}
	for len(next) > 0 {
		s := next[0]
		next = next[1:]
		for _, p := range preds[s] {
			if _, ok := label[p]; !ok {
				label[p] = label[s] + 1
				next = append(next, p)
			}
		}
	}
	out := map[string][2]int{}
	for s, n := range nodes {
		l, ok := label[s]
		if !ok {
			l = -1
		}
		out[s] = [2]int{l, n.dist}
	}
	return out
}

func TestDistancesMatchOracle(t *testing.T) {
	grids := [][]string{split, {"S#G", ".D.", "K#."}, {"SK#", "..D", "##G"}, {"S.#", "K#D", "..G"}, {"S.#", "K##", "#DG"}}
	var envsUnderTest []*KeyDoor
	for _, g := range grids {
		k := mustGrid(t, g, DefaultConfig(5))
		envtest.MustReset(t, k, 0)
		envsUnderTest = append(envsUnderTest, k)
	}
	for size := MinSize; size <= MaxSize; size++ {
		for seed := range int64(40) {
			k, _ := New(DefaultConfig(size))
			envtest.MustReset(t, k, seed)
			envsUnderTest = append(envsUnderTest, k)
		}
	}
	for _, k := range envsUnderTest {
		for s, ld := range oracle(t, k) {
			want := ld[0]
			if want < 0 {
				want = envs.DistDead
			}
			if ld[1] != want {
				t.Fatalf("state %q: Info.Distance %d, oracle %d\n%s", s, ld[1], want, k.Render())
			}
		}
	}
	// The door is walled off from the start side: dead from the start.
	k := mustGrid(t, []string{"S.#", "K##", "#DG"}, DefaultConfig(5))
	if _, obs := envtest.MustReset(t, k, 0); obs.Info.Distance != envs.DistDead {
		t.Errorf("walled-off door: Distance %d, want DistDead", obs.Info.Distance)
	}
}

// reachable is the set of cells reachable from `from` without entering blocked cells.
func reachable(l *layout, from int, blocked func(int) bool) map[int]bool {
	seen := map[int]bool{from: true}
	queue := []int{from}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		for d := range numDirections {
			j, ok := l.neighbour(i, d)
			if ok && !seen[j] && !blocked(j) {
				seen[j] = true
				queue = append(queue, j)
			}
		}
	}
	return seen
}

// TestGeneratedLayouts checks the generator's promises on many seeds of every size with no, the
// default and the most extra walls.
func TestGeneratedLayouts(t *testing.T) {
	for size := MinSize; size <= MaxSize; size++ {
		for _, walls := range []int{0, size - 4, maxWalls(size)} {
			cfg := DefaultConfig(size)
			cfg.Walls = walls
			for seed := int64(-20); seed < 500; seed++ {
				var l layout
				if err := l.generate(cfg, seed); err != nil {
					t.Fatalf("%+v seed %d: %v", cfg, seed, err)
				}
				counts := map[cell]int{}
				for i := range maxCells {
					if (row(i) >= size || col(i) >= size) && l.cells[i] != open {
						t.Fatalf("%+v seed %d: cell %d outside the grid is %v", cfg, seed, i, l.cells[i])
					}
					counts[l.cells[i]]++
				}
				if counts[key] != 1 || counts[door] != 1 || counts[goal] != 1 || counts[wall] != size-1+walls {
					t.Fatalf("%+v seed %d: counts %v", cfg, seed, counts)
				}
				if l.cells[l.start] != open || l.cells[l.keyAt] != key || l.cells[l.doorAt] != door || l.cells[l.goalAt] != goal {
					t.Fatalf("%+v seed %d: start %d key %d door %d goal %d", cfg, seed, l.start, l.keyAt, l.doorAt, l.goalAt)
				}
				// Without the door the goal is cut off; through it, it is reachable.
				closed := reachable(&l, l.start, func(j int) bool { return l.cells[j] == wall || l.cells[j] == door })
				opened := reachable(&l, l.start, func(j int) bool { return l.cells[j] == wall })
				if closed[l.goalAt] || !closed[l.keyAt] || !opened[l.goalAt] {
					t.Fatalf("%+v seed %d: goal reachable without the door %v, key %v, goal with it %v",
						cfg, seed, closed[l.goalAt], closed[l.keyAt], opened[l.goalAt])
				}
				if d := l.startDistance(); d < minDistance(size) || d > maxDistance(size) || d > cfg.MaxTurns {
					t.Fatalf("%+v seed %d: distance %d", cfg, seed, d)
				}
			}
		}
	}
}

func TestLayoutDeterminism(t *testing.T) {
	a, _ := New(DefaultConfig(5))
	b, _ := New(DefaultConfig(5))
	seen := map[string]bool{}
	for seed := range int64(200) {
		insA, obsA := envtest.MustReset(t, a, seed)
		insB, obsB := envtest.MustReset(t, b, seed)
		if a.Render() != b.Render() || insA != insB || !reflect.DeepEqual(obsA, obsB) {
			t.Fatalf("seed %d: two instances differ:\n%s\n%s", seed, a.Render(), b.Render())
		}
		seen[a.Render()] = true
	}
	if len(seen) < 195 {
		t.Errorf("200 seeds gave %d distinct layouts", len(seen))
	}
}

// TestLayoutGolden pins the layouts of two seeds. The task panels of every past run depend on them:
// if this fails after a Go upgrade or a generator change, the tasks changed, and results are no
// longer comparable with earlier runs.
func TestLayoutGolden(t *testing.T) {
	// Checked by hand: seed 0 takes up (key), down, down, right, down, right (door), right, up = 8.
	golden := map[int64]string{
		0: "   0 1 2 3 4\n" +
			"r0 . . . # .\n" +
			"r1 . K . # .\n" +
			"r2 . @ . # .\n" +
			"r3 . . . # G\n" +
			"r4 # . . D .\n",
		1: "   0 1 2 3 4\n" +
			"r0 G . . . .\n" +
			"r1 # # D # #\n" +
			"r2 . . . # .\n" +
			"r3 . @ . . K\n" +
			"r4 . . . . .\n",
	}
	k, _ := New(DefaultConfig(5))
	for seed, want := range golden {
		envtest.MustReset(t, k, seed)
		if got := k.Render(); got != want {
			t.Errorf("seed %d:\n%s\nwant\n%s", seed, got, want)
		}
	}
	envtest.MustReset(t, k, 0)
	for i, a := range []string{"up", "down", "down", "right", "down", "right", "right", "up"} {
		if obs := envtest.MustStep(t, k, a); obs.Info.Distance != 7-i || obs.Info.Success != (i == 7) {
			t.Fatalf("seed 0 step %d %q: %+v", i, a, obs)
		}
	}
}

func TestParseLayoutErrors(t *testing.T) {
	for _, rows := range [][]string{
		{"S"},
		{"SK", "DG", ".."},
		{"SKD", "G..", "..x"},
		{"SKD", "...", "..."},
		{"SKD", "GG.", "..."},
		{"SKDG....", "........"},
	} {
		if _, err := parseLayout(rows); err == nil {
			t.Errorf("parseLayout(%q): no error", rows)
		}
	}
}

// playExpert plays the expert from the state Reset left and returns the number of steps and the
// last observation.
func playExpert(t *testing.T, k *KeyDoor) (int, envs.Observation) {
	t.Helper()
	var obs envs.Observation
	steps := 0
	for !k.over {
		a, err := k.ExpertAction()
		if err != nil {
			t.Fatal(err)
		}
		obs = envtest.MustStep(t, k, a)
		steps++
	}
	return steps, obs
}

// TestOptimalLengthLargeSizes checks, at the sizes of the long-horizon studies, that the optimal
// length of a task (the oracle's search over the states stepped clones reach: start, key, door,
// goal) is the distance Reset reports, lies in size-1..3*size-1, and is exactly the length of the
// expert's successful episode.
func TestOptimalLengthLargeSizes(t *testing.T) {
	for _, size := range []int{9, MaxSize} {
		for _, walls := range []int{size - 4, maxWalls(size)} {
			cfg := DefaultConfig(size)
			cfg.Walls = walls
			k, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			longest := 0
			for seed := int64(0); seed < 40; seed++ {
				_, first := envtest.MustReset(t, k, seed)
				optimal := oracle(t, k)[k.StateKey()][0]
				if optimal < minDistance(size) || optimal > maxDistance(size) || first.Info.Distance != optimal {
					t.Fatalf("size %d seed %d: optimal length %d, Reset's distance %d", size, seed, optimal, first.Info.Distance)
				}
				steps, last := playExpert(t, k)
				if !last.Info.Success || steps != optimal {
					t.Fatalf("size %d seed %d: expert took %d steps (success %v), optimal %d", size, seed, steps, last.Info.Success, optimal)
				}
				longest = max(longest, optimal)
			}
			if longest < 2*size {
				t.Errorf("size %d walls %d: the longest of 40 tasks is %d moves; the horizon did not grow", size, walls, longest)
			}
		}
	}
}

// TestLayoutDeterminismLargeSizes checks that a task seed fixes the layout and the episode at sizes
// 9 and 11: two instances draw the same layout for a seed and play the same episode of the same
// actions.
func TestLayoutDeterminismLargeSizes(t *testing.T) {
	actions := []string{"up", "right", "down", "left", "down", "jump", "right", "down"}
	for _, size := range []int{9, MaxSize} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			envtest.CheckLayoutSeeds(t, func() envtest.Renderer { k, _ := New(DefaultConfig(size)); return k }, 100, 99, actions)
		})
	}
}

// TestLayoutGoldenLargeSizes pins the layout of task seed 0 at sizes 9 and 11, the sizes of the
// long-horizon studies, as TestLayoutGolden does at size 5: if it fails, their task panels changed.
func TestLayoutGoldenLargeSizes(t *testing.T) {
	// Checked by hand: size 9 takes 4 moves to the key, 8 to the door (right along row 2, down
	// column 6), 2 to the goal; size 11 takes 4, 10 (right along row 3, down column 7) and 2.
	golden := map[int]struct {
		instruction string
		distance    int
		render      string
	}{
		9: {"key r2 c4 door r7 c7 goal r6 c8", 14, "   0 1 2 3 4 5 6 7 8\n" +
			"r0 . . . # . . . # .\n" +
			"r1 . . . . . . . # .\n" +
			"r2 . . . . K . . # .\n" +
			"r3 . . . . . . . # .\n" +
			"r4 . . @ . # . . # .\n" +
			"r5 . . . . . . . # .\n" +
			"r6 . . . . . . . # G\n" +
			"r7 # # . . . # . D .\n" +
			"r8 . . . . . . . # .\n"},
		11: {"key r3 c5 door r9 c9 goal r8 c10", 16, "     0  1  2  3  4  5  6  7  8  9 10\n" +
			"r0   .  .  .  #  .  .  .  .  .  #  .\n" +
			"r1   .  .  .  .  .  .  .  .  .  #  .\n" +
			"r2   .  .  .  .  .  .  .  .  .  #  .\n" +
			"r3   .  .  .  .  .  K  .  .  #  #  .\n" +
			"r4   .  .  .  .  .  #  .  .  .  #  .\n" +
			"r5   .  .  .  @  .  .  .  .  .  #  .\n" +
			"r6   .  .  .  .  .  .  .  .  .  #  .\n" +
			"r7   .  .  .  .  .  .  #  .  .  #  .\n" +
			"r8   .  .  .  .  .  .  #  .  .  #  G\n" +
			"r9   #  #  .  .  .  .  .  .  .  D  .\n" +
			"r10  .  .  .  .  .  .  .  .  .  #  .\n"},
	}
	for size, want := range golden {
		k, _ := New(DefaultConfig(size))
		ins, obs := envtest.MustReset(t, k, 0)
		if got := k.Render(); got != want.render || ins != want.instruction || obs.Info.Distance != want.distance {
			t.Errorf("size %d seed 0: %q, distance %d\n%s\nwant %q, %d\n%s", size, ins, obs.Info.Distance, got,
				want.instruction, want.distance, want.render)
		}
	}
}
