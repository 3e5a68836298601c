package frozenlake

import (
	"fmt"

	"github.com/graftrl/graftrl/envs/grid"
)

// cell is the content of a lake cell.
type cell uint8

const (
	ice cell = iota
	hole
	goal
)

// symbols are the characters of the cells (ice, hole, goal), in pictures and in
// the literal grids of tests.
const symbols = ".HG"

// unreachable marks cells in dist from which the goal cannot be reached.
const unreachable = grid.Unreachable

// layoutStream is the second PCG seed word of layout generation. It is part of the task identity:
// changing it changes the lake of every task seed.
const layoutStream = 0x66726f7a // "froz"

// maxDraws bounds layout generation; at the largest hole counts most draws are accepted, so reaching
// the bound means a bug rather than bad luck.
const maxDraws = 10_000

// layout is one lake: the cell contents and the distances to the goal ignoring slips. It is a value
// type (fixed arrays) so that copying an env copies its layout.
type layout struct {
	size  int
	cells [grid.MaxCells]cell
	// dist[i] is the number of moves from cell i to the goal avoiding holes if no move slipped, or
	// unreachable.
	dist        [grid.MaxCells]int8
	start, goal int
}

// solve fills dist by a breadth-first search from the goal over cells that are not holes.
func (l *layout) solve() {
	grid.Distances(l.dist[:], l.goal, l.size, func(j int) bool { return l.cells[j] != hole })
}

// generate draws the lake of a task seed: start, goal and holes on distinct cells, redrawn from the
// same random stream until the goal is reachable from the start, without entering a hole and without
// slips, in minDistance..maxDistance moves.
func (l *layout) generate(cfg Config, seed int64) error {
	n := cfg.Size
	need := 2 + cfg.Holes
	draw := grid.NewCellDraw(seed, layoutStream, n)
	l.size = n
	for range maxDraws {
		perm := draw.Next(need)
		l.cells = [grid.MaxCells]cell{}
		l.start, l.goal = perm[0], perm[1]
		for _, i := range perm[2:need] {
			l.cells[i] = hole
		}
		l.cells[l.goal] = goal
		l.solve()
		if d := int(l.dist[l.start]); d >= minDistance(n) && d <= maxDistance(n) {
			return nil
		}
	}
	return fmt.Errorf("frozenlake: no solvable lake for task seed %d after %d draws", seed, maxDraws)
}

// parseLayout builds a layout from a literal lake, one string per row: '.' ice, 'H' hole, 'S' start,
// 'G' goal. It lets tests pin down dynamics on hand-checked lakes; unlike generate it does not require
// the goal to be reachable.
func parseLayout(rows []string) (layout, error) {
	var l layout
	size, at, err := grid.ParseLayout("frozenlake: lake", rows, 2, MaxSize, symbols, l.cells[:], "SG")
	if err != nil {
		return layout{}, err
	}
	l.size, l.start, l.goal = size, at[0], at[1]
	l.solve()
	return l, nil
}
