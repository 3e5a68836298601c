package frozenlake

import (
	"fmt"

	"github.com/graftrl/graftrl/envs/grid"
)

// Cells are indexed row*stride + col with a fixed stride of MaxSize whatever the lake side, so that a
// cell maps onto the position words and state keys without arithmetic on the size.
const (
	stride   = MaxSize
	maxCells = MaxSize * MaxSize
)

// cell is the content of a lake cell.
type cell uint8

const (
	ice cell = iota
	hole
	goal
)

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
	cells [maxCells]cell
	// dist[i] is the number of moves from cell i to the goal avoiding holes if no move slipped, or
	// unreachable.
	dist        [maxCells]int8
	start, goal int
}

func row(i int) int { return i / stride }
func col(i int) int { return i % stride }

// neighbour returns the cell next to i in direction d, or ok=false off the lake.
func (l *layout) neighbour(i int, d direction) (j int, ok bool) {
	return grid.Neighbour(i, d, l.size, stride)
}

// solve fills dist by a breadth-first search from the goal over cells that are not holes.
func (l *layout) solve() {
	grid.Distances(l.dist[:], l.goal, l.size, stride, func(j int) bool { return l.cells[j] != hole })
}

// generate draws the lake of a task seed: start, goal and holes on distinct cells, redrawn from the
// same random stream until the goal is reachable from the start, without entering a hole and without
// slips, in minDistance..maxDistance moves.
func (l *layout) generate(cfg Config, seed int64) error {
	n := cfg.Size
	need := 2 + cfg.Holes
	draw := grid.NewCellDraw(seed, layoutStream, n, stride)
	l.size = n
	for range maxDraws {
		perm := draw.Next(need)
		l.cells = [maxCells]cell{}
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
	n := len(rows)
	if n < 2 || n > MaxSize {
		return l, fmt.Errorf("frozenlake: lake has %d rows, want 2..%d", n, MaxSize)
	}
	l.size = n
	starts, goals := 0, 0
	for r, line := range rows {
		if len(line) != n {
			return l, fmt.Errorf("frozenlake: lake row %d %q has %d cells, want %d", r, line, len(line), n)
		}
		for c, ch := range []byte(line) {
			i := r*stride + c
			switch ch {
			case '.':
			case 'H':
				l.cells[i] = hole
			case 'S':
				l.start = i
				starts++
			case 'G':
				l.cells[i], l.goal = goal, i
				goals++
			default:
				return l, fmt.Errorf("frozenlake: lake row %d %q: unknown cell %q", r, line, ch)
			}
		}
	}
	if starts != 1 || goals != 1 {
		return l, fmt.Errorf("frozenlake: lake has %d starts and %d goals, want one of each", starts, goals)
	}
	l.solve()
	return l, nil
}
