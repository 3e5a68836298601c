package maze

import (
	"fmt"
	"testing"

	"github.com/graftrl/graftrl/envs/envtest"
	"github.com/graftrl/graftrl/envs/grid"
	"github.com/graftrl/graftrl/envs/grid/gridtest"
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
		r, c := grid.Row(i), grid.Col(i)
		for _, rc := range [][2]int{{r - 1, c}, {r + 1, c}, {r, c - 1}, {r, c + 1}} {
			if rc[0] < 0 || rc[0] >= l.size || rc[1] < 0 || rc[1] >= l.size {
				continue
			}
			j := grid.Index(rc[0], rc[1])
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
		if err := busy.Validate(); err != nil {
			t.Fatal(err) // the most obstacles and the shortest cap must be valid options
		}
		none := DefaultConfig(size)
		none.Walls, none.Traps = 0, 0
		cfgs = append(cfgs, DefaultConfig(size), busy, none)
	}
	for _, cfg := range cfgs {
		for seed := int64(-50); seed < 1000; seed++ {
			var l layout
			if err := l.generate(cfg, seed); err != nil {
				t.Fatalf("%+v seed %d: %v", cfg, seed, err)
			}
			counts := gridtest.CellCounts(t, fmt.Sprintf("%+v seed %d", cfg, seed), l.cells[:], cfg.Size)
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
	m, _ := New(DefaultConfig(5))
	gridtest.CheckLayout(t, m, 0, gridtest.Layout{Instruction: "goal r4 c2", Distance: 4, Picture: `
   0 1 2 3 4
r0 . . . . .
r1 . @ # # #
r2 . . . . .
r3 . . . . T
r4 T # G . .
`})
	gridtest.CheckLayout(t, m, 1, gridtest.Layout{Instruction: "goal r0 c1", Distance: 5, Picture: `
   0 1 2 3 4
r0 . G . . .
r1 # # . . .
r2 . . . # .
r3 T T . . .
r4 . . @ . #
`})
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
			longest := gridtest.CheckOptimal(t, m, 200, size-1, maxDistance(size), func() int { return bfsFrom(&m.layout, m.start, m.goal) })
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
	for _, size := range []int{9, MaxSize} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			gridtest.CheckSeeds(t, 100, 99, func() envtest.Renderer { m, _ := New(DefaultConfig(size)); return m })
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
	for size, want := range map[int]gridtest.Layout{
		9: {Instruction: "goal r0 c4", Distance: 9, Picture: `
   0 1 2 3 4 5 6 7 8
r0 T # . . G . . . .
r1 . . . . . . . . .
r2 # # . # . # # . .
r3 . . . . . T . . .
r4 . . . # . # # . #
r5 . . . # . # . . .
r6 . . . . . . . @ T
r7 . . . . . . . . .
r8 . . . . . T . . .
`},
		11: {Instruction: "goal r4 c9", Distance: 11, Picture: `
     0  1  2  3  4  5  6  7  8  9 10
r0   .  .  .  .  .  .  .  .  .  .  #
r1   .  #  T  .  .  .  .  #  .  .  #
r2   .  .  .  .  .  T  .  .  .  T  .
r3   .  .  #  #  T  .  .  .  .  .  .
r4   .  .  .  .  #  .  .  #  .  G  .
r5   .  .  .  .  #  .  .  .  #  .  #
r6   .  .  T  .  .  #  .  .  .  .  .
r7   .  .  .  .  .  .  #  .  .  .  .
r8   .  .  .  .  .  .  .  .  .  .  .
r9   .  #  .  @  #  .  .  .  .  .  .
r10  .  #  .  .  .  .  .  .  .  .  .
`},
	} {
		m, _ := New(DefaultConfig(size))
		gridtest.CheckLayout(t, m, 0, want)
	}
}
