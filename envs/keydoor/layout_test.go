package keydoor

import (
	"fmt"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
	"github.com/graftrl/graftrl/envs/grid"
	"github.com/graftrl/graftrl/envs/grid/gridtest"
)

// oracle labels every state reachable from the state Reset left in k with its number of moves to
// the goal and Info.Distance on entering it (gridtest.Oracle), with the key in the state key and no
// step cap.
func oracle(t *testing.T, k *KeyDoor) map[string][2]int {
	t.Helper()
	start := k.Clone().(*KeyDoor)
	start.cfg.KeyInState = true
	start.ep.Start(1 << 30)
	return gridtest.Oracle(t, start, k.distance())
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
		for d := range grid.NumDirections {
			j, ok := grid.Neighbour(i, d, l.size)
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
				counts := gridtest.CellCounts(t, fmt.Sprintf("%+v seed %d", cfg, seed), l.cells[:], size)
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

// TestLayoutGolden pins the layouts of two seeds. The task panels of every past run depend on them:
// if this fails after a Go upgrade or a generator change, the tasks changed, and results are no
// longer comparable with earlier runs.
//
// It also checks that every task seed fixes its layout: two instances draw the same layout for a
// seed and play the same episode of the same actions, and 200 seeds give almost as many layouts.
func TestLayoutGolden(t *testing.T) {
	// Checked by hand: seed 0 takes up (key), down, down, right, down, right (door), right, up = 8;
	// seed 1 takes 3 moves right to the key, 4 to the door (left, left, up, up) and 3 to the goal.
	k, _ := New(DefaultConfig(5))
	gridtest.CheckLayout(t, k, 0, gridtest.Layout{Instruction: "key r1 c1 door r4 c3 goal r3 c4", Distance: 8, Picture: `
   0 1 2 3 4
r0 . . . # .
r1 . K . # .
r2 . @ . # .
r3 . . . # G
r4 # . . D .
`})
	gridtest.CheckLayout(t, k, 1, gridtest.Layout{Instruction: "key r3 c4 door r1 c2 goal r0 c0", Distance: 10, Picture: `
   0 1 2 3 4
r0 G . . . .
r1 # # D # #
r2 . . . # .
r3 . @ . . K
r4 . . . . .
`})
	envtest.MustReset(t, k, 0)
	for i, a := range []string{"up", "down", "down", "right", "down", "right", "right", "up"} {
		if obs := envtest.MustStep(t, k, a); obs.Info.Distance != 7-i || obs.Info.Success != (i == 7) {
			t.Fatalf("seed 0 step %d %q: %+v", i, a, obs)
		}
	}
	gridtest.CheckSeeds(t, 200, 195, func() envtest.Renderer { k, _ := New(DefaultConfig(5)); return k })
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
			longest := gridtest.CheckOptimal(t, k, 40, minDistance(size), maxDistance(size), func() int { return oracle(t, k)[k.StateKey()][0] })
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
	for _, size := range []int{9, MaxSize} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			gridtest.CheckSeeds(t, 100, 99, func() envtest.Renderer { k, _ := New(DefaultConfig(size)); return k })
		})
	}
}

// TestLayoutGoldenLargeSizes pins the layout of task seed 0 at sizes 9 and 11, the sizes of the
// long-horizon studies, as TestLayoutGolden does at size 5: if it fails, their task panels changed.
func TestLayoutGoldenLargeSizes(t *testing.T) {
	// Checked by hand: size 9 takes 4 moves to the key, 8 to the door (right along row 2, down
	// column 6), 2 to the goal; size 11 takes 4, 10 (right along row 3, down column 7) and 2.
	for size, want := range map[int]gridtest.Layout{
		9: {Instruction: "key r2 c4 door r7 c7 goal r6 c8", Distance: 14, Picture: `
   0 1 2 3 4 5 6 7 8
r0 . . . # . . . # .
r1 . . . . . . . # .
r2 . . . . K . . # .
r3 . . . . . . . # .
r4 . . @ . # . . # .
r5 . . . . . . . # .
r6 . . . . . . . # G
r7 # # . . . # . D .
r8 . . . . . . . # .
`},
		11: {Instruction: "key r3 c5 door r9 c9 goal r8 c10", Distance: 16, Picture: `
     0  1  2  3  4  5  6  7  8  9 10
r0   .  .  .  #  .  .  .  .  .  #  .
r1   .  .  .  .  .  .  .  .  .  #  .
r2   .  .  .  .  .  .  .  .  .  #  .
r3   .  .  .  .  .  K  .  .  #  #  .
r4   .  .  .  .  .  #  .  .  .  #  .
r5   .  .  .  @  .  .  .  .  .  #  .
r6   .  .  .  .  .  .  .  .  .  #  .
r7   .  .  .  .  .  .  #  .  .  #  .
r8   .  .  .  .  .  .  #  .  .  #  G
r9   #  #  .  .  .  .  .  .  .  D  .
r10  .  .  .  .  .  .  .  .  .  #  .
`},
	} {
		k, _ := New(DefaultConfig(size))
		gridtest.CheckLayout(t, k, 0, want)
	}
}
