package frozenlake

import (
	"fmt"
	"testing"

	"github.com/graftrl/graftrl/envs/envtest"
	"github.com/graftrl/graftrl/envs/grid/gridtest"
)

// TestGeneratedLayouts checks the generator's promises on many seeds at every size, with no, the
// default and the most holes.
func TestGeneratedLayouts(t *testing.T) {
	for size := MinSize; size <= MaxSize; size++ {
		for _, holes := range []int{0, size, maxHoles(size)} {
			cfg := DefaultConfig(size)
			cfg.Holes = holes
			for seed := int64(-20); seed < 500; seed++ {
				var l layout
				if err := l.generate(cfg, seed); err != nil {
					t.Fatalf("%+v seed %d: %v", cfg, seed, err)
				}
				counts := gridtest.CellCounts(t, fmt.Sprintf("%+v seed %d", cfg, seed), l.cells[:], size)
				if counts[hole] != holes || counts[goal] != 1 || l.cells[l.start] != ice || l.cells[l.goal] != goal {
					t.Fatalf("%+v seed %d: counts %v start %d goal %d", cfg, seed, counts, l.start, l.goal)
				}
				if d := int(l.dist[l.start]); d < minDistance(size) || d > maxDistance(size) || d > cfg.MaxTurns {
					t.Fatalf("%+v seed %d: distance %d", cfg, seed, d)
				}
			}
		}
	}
}

// TestLayoutGolden pins the lakes of two seeds. The task panels of every past run depend on them: if
// this fails after a Go upgrade or a generator change, the tasks changed, and results are no longer
// comparable with earlier runs.
//
// It also checks that every task seed fixes its lake: two instances draw the same lake for a
// seed and play the same episode of the same actions, and 200 seeds give almost as many lakes.
func TestLayoutGolden(t *testing.T) {
	// Checked by hand: start to goal in 3 and 5 moves.
	f, _ := New(DefaultConfig(4))
	gridtest.CheckLayout(t, f, 0, gridtest.Layout{Instruction: "goal r3 c2", Distance: 3, Picture: `
   0 1 2 3
r0 . H . .
r1 . H . .
r2 @ . . .
r3 H . G H
`})
	gridtest.CheckLayout(t, f, 1, gridtest.Layout{Instruction: "goal r2 c0", Distance: 5, Picture: `
   0 1 2 3
r0 H . . @
r1 . . . .
r2 G . . H
r3 . H . H
`})
	gridtest.CheckSeeds(t, 200, 190, func() envtest.Renderer { f, _ := New(DefaultConfig(4)); return f })
}
