package maze

import (
	"fmt"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
)

// bfsFrom is an independent check of the generator's distances: moves from the start to the goal
// over cells that are neither walls nor traps, or -1.
func bfsFrom(l *layout, from, to int) int {
	dist := map[int]int{from: 0}
	queue := []int{from}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		if i == to {
			return dist[i]
		}
		r, c := i/stride, i%stride
		for _, rc := range [][2]int{{r - 1, c}, {r + 1, c}, {r, c - 1}, {r, c + 1}} {
			if rc[0] < 0 || rc[0] >= l.size || rc[1] < 0 || rc[1] >= l.size {
				continue
			}
			j := rc[0]*stride + rc[1]
			if _, seen := dist[j]; seen || l.cells[j] == wall || l.cells[j] == trap {
				continue
			}
			dist[j] = dist[i] + 1
			queue = append(queue, j)
		}
	}
	return -1
}

// TestGeneratedLayouts checks the generator's promises on many seeds at every size, with the default
// and the largest obstacle counts.
func TestGeneratedLayouts(t *testing.T) {
	var cfgs []Config
	for size := MinSize; size <= MaxSize; size++ {
		busy := DefaultConfig(size)
		busy.Walls, busy.Traps, busy.MaxTurns = maxWalls(size), maxTraps(size), maxDistance(size)
		none := DefaultConfig(size)
		none.Walls, none.Traps = 0, 0
		cfgs = append(cfgs, DefaultConfig(size), busy, none)
	}
	for _, cfg := range cfgs {
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		for seed := int64(-50); seed < 1000; seed++ {
			var l layout
			if err := l.generate(cfg, seed); err != nil {
				t.Fatalf("%+v seed %d: %v", cfg, seed, err)
			}
			counts := map[cell]int{}
			for i := range maxCells {
				if (row(i) >= cfg.Size || col(i) >= cfg.Size) && l.cells[i] != open {
					t.Fatalf("%+v seed %d: cell %d outside the grid is %v", cfg, seed, i, l.cells[i])
				}
				counts[l.cells[i]]++
			}
			if counts[wall] != cfg.Walls || counts[trap] != cfg.Traps || counts[goal] != 1 {
				t.Fatalf("%+v seed %d: %d walls, %d traps, %d goals", cfg, seed, counts[wall], counts[trap], counts[goal])
			}
			if l.cells[l.start] != open || l.cells[l.goal] != goal || l.start == l.goal {
				t.Fatalf("%+v seed %d: start %d goal %d", cfg, seed, l.start, l.goal)
			}
			d := bfsFrom(&l, l.start, l.goal)
			if d < cfg.Size-1 || d > maxDistance(cfg.Size) || d > cfg.MaxTurns || int(l.dist[l.start]) != d {
				t.Fatalf("%+v seed %d: start-goal distance %d (dist table %d)", cfg, seed, d, l.dist[l.start])
			}
		}
	}
}

func TestLayoutDeterminism(t *testing.T) {
	cfg := DefaultConfig(5)
	a, _ := New(cfg)
	b, _ := New(cfg)
	seen := map[string]bool{}
	for seed := range int64(200) {
		insA, obsA := envtest.MustReset(t, a, seed)
		insB, obsB := envtest.MustReset(t, b, seed)
		if a.Render() != b.Render() || insA != insB || obsA.Text != obsB.Text {
			t.Fatalf("seed %d: two instances differ:\n%s\n%s", seed, a.Render(), b.Render())
		}
		seen[a.Render()] = true
	}
	if len(seen) < 195 {
		t.Errorf("200 seeds gave %d distinct layouts", len(seen))
	}
	// Reset from another task back to a seed rebuilds the same layout; Reset on the same seed
	// (the cached layout) does too.
	envtest.MustReset(t, a, 7)
	want := a.Render()
	envtest.MustReset(t, a, 8)
	if a.Render() == want {
		t.Error("seeds 7 and 8 gave the same layout")
	}
	envtest.MustReset(t, a, 7)
	envtest.MustStep(t, a, "up")
	envtest.MustReset(t, a, 7)
	if a.Render() != want {
		t.Errorf("seed 7 again:\n%s\nwant\n%s", a.Render(), want)
	}
}

// TestLayoutGolden pins the layouts of two seeds. The task panels of every past run depend on them:
// if this fails after a Go upgrade or a generator change, the tasks changed, and results are no
// longer comparable with earlier runs.
func TestLayoutGolden(t *testing.T) {
	// Checked by hand: start to goal in 4 and 5 moves, at least size-1 = 4.
	golden := map[int64]string{
		0: "   0 1 2 3 4\n" +
			"r0 . . . . .\n" +
			"r1 . @ # # #\n" +
			"r2 . . . . .\n" +
			"r3 . . . . T\n" +
			"r4 T # G . .\n",
		1: "   0 1 2 3 4\n" +
			"r0 . G . . .\n" +
			"r1 # # . . .\n" +
			"r2 . . . # .\n" +
			"r3 T T . . .\n" +
			"r4 . . @ . #\n",
	}
	m, _ := New(DefaultConfig(5))
	for seed, want := range golden {
		envtest.MustReset(t, m, seed)
		if got := m.Render(); got != want {
			t.Errorf("seed %d:\n%s\nwant\n%s", seed, got, want)
		}
	}
}

// playExpert plays the expert from the state Reset left and returns the number of steps and the
// last observation.
func playExpert(t *testing.T, m *Maze) (int, envs.Observation) {
	t.Helper()
	var obs envs.Observation
	steps := 0
	for !m.over {
		a, err := m.ExpertAction()
		if err != nil {
			t.Fatal(err)
		}
		obs = envtest.MustStep(t, m, a)
		steps++
	}
	return steps, obs
}

// TestOptimalLengthLargeSizes checks, at the sizes of the long-horizon studies, that the optimal
// length of a task (an independent breadth-first search from the start to the goal avoiding walls
// and traps) is the distance Reset reports, lies in size-1..2*(size-1), and is exactly the length
// of the expert's successful episode.
func TestOptimalLengthLargeSizes(t *testing.T) {
	for _, size := range []int{9, MaxSize} {
		for _, cfg := range []Config{DefaultConfig(size), func() Config {
			c := DefaultConfig(size)
			c.Walls, c.Traps, c.MaxTurns = maxWalls(size), maxTraps(size), maxDistance(size)
			return c
		}()} {
			m, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			longest := 0
			for seed := int64(0); seed < 200; seed++ {
				_, first := envtest.MustReset(t, m, seed)
				optimal := bfsFrom(&m.layout, m.start, m.goal)
				if optimal < size-1 || optimal > maxDistance(size) || first.Info.Distance != optimal {
					t.Fatalf("size %d seed %d: optimal length %d, Reset's distance %d", size, seed, optimal, first.Info.Distance)
				}
				steps, last := playExpert(t, m)
				if !last.Info.Success || steps != optimal {
					t.Fatalf("size %d seed %d: expert took %d steps (success %v), optimal %d", size, seed, steps, last.Info.Success, optimal)
				}
				longest = max(longest, optimal)
			}
			if longest < size+2 {
				t.Errorf("size %d %+v: the longest of 200 tasks is %d moves; the horizon did not grow", size, cfg, longest)
			}
		}
	}
}

// TestLayoutDeterminismLargeSizes checks that a task seed fixes the layout and the episode at sizes
// 9 and 11: two instances draw the same layout for a seed and play the same episode of the same
// actions, and a seed revisited after another one draws its layout again.
func TestLayoutDeterminismLargeSizes(t *testing.T) {
	actions := []string{"up", "right", "down", "left", "down", "jump", "right", "down"}
	for _, size := range []int{9, MaxSize} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			envtest.CheckLayoutSeeds(t, func() envtest.Renderer { m, _ := New(DefaultConfig(size)); return m }, 100, 99, actions)
			a, _ := New(DefaultConfig(size))
			envtest.MustReset(t, a, 7)
			want := a.Render()
			envtest.MustReset(t, a, 8)
			envtest.MustReset(t, a, 7)
			if got := a.Render(); got != want {
				t.Errorf("seed 7 again:\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestLayoutGoldenLargeSizes pins the layout of task seed 0 at sizes 9 and 11, the sizes of the
// long-horizon studies, as TestLayoutGolden does at size 5: if it fails, their task panels changed.
func TestLayoutGoldenLargeSizes(t *testing.T) {
	// Checked by hand: 9 moves (5 up column 7, 3 left along row 1, 1 up) and 11 moves, both the
	// Manhattan distance.
	golden := map[int]struct {
		instruction string
		distance    int
		render      string
	}{
		9: {"goal r0 c4", 9, "   0 1 2 3 4 5 6 7 8\n" +
			"r0 T # . . G . . . .\n" +
			"r1 . . . . . . . . .\n" +
			"r2 # # . # . # # . .\n" +
			"r3 . . . . . T . . .\n" +
			"r4 . . . # . # # . #\n" +
			"r5 . . . # . # . . .\n" +
			"r6 . . . . . . . @ T\n" +
			"r7 . . . . . . . . .\n" +
			"r8 . . . . . T . . .\n"},
		11: {"goal r4 c9", 11, "     0  1  2  3  4  5  6  7  8  9 10\n" +
			"r0   .  .  .  .  .  .  .  .  .  .  #\n" +
			"r1   .  #  T  .  .  .  .  #  .  .  #\n" +
			"r2   .  .  .  .  .  T  .  .  .  T  .\n" +
			"r3   .  .  #  #  T  .  .  .  .  .  .\n" +
			"r4   .  .  .  .  #  .  .  #  .  G  .\n" +
			"r5   .  .  .  .  #  .  .  .  #  .  #\n" +
			"r6   .  .  T  .  .  #  .  .  .  .  .\n" +
			"r7   .  .  .  .  .  .  #  .  .  .  .\n" +
			"r8   .  .  .  .  .  .  .  .  .  .  .\n" +
			"r9   .  #  .  @  #  .  .  .  .  .  .\n" +
			"r10  .  #  .  .  .  .  .  .  .  .  .\n"},
	}
	for size, want := range golden {
		m, _ := New(DefaultConfig(size))
		ins, obs := envtest.MustReset(t, m, 0)
		if got := m.Render(); got != want.render || ins != want.instruction || obs.Info.Distance != want.distance {
			t.Errorf("size %d seed 0: %q, distance %d\n%s\nwant %q, %d\n%s", size, ins, obs.Info.Distance, got,
				want.instruction, want.distance, want.render)
		}
	}
}
