package maze

import (
	"fmt"

	"github.com/graftrl/graftrl/envs/grid"
)

// cell is the content of a grid cell.
type cell uint8

const (
	open cell = iota
	wall
	trap
	goal
)

// symbols are the characters of the cells (open, wall, trap, goal), in pictures and in
// the literal grids of tests.
const symbols = ".#TG"

// unreachable marks cells in dist from which the goal cannot be reached.
const unreachable = grid.Unreachable

// pcgStream is the second PCG seed word. It is part of the task identity: changing it changes the
// layout of every task seed.
const pcgStream = 0x6d617a65 // "maze"

// maxDraws bounds layout generation. At the largest obstacle counts about one draw in six is accepted,
// so reaching the bound means a bug rather than bad luck.
const maxDraws = 10_000

// layout is one maze: the cell contents and the BFS distances to the goal. It is a value type (fixed
// arrays) so that copying a Maze copies its layout.
type layout struct {
	size  int
	cells [grid.MaxCells]cell
	// dist[i] is the number of moves from cell i to the goal avoiding walls and traps, or unreachable;
	// a shortest path visits each cell once, so it is below grid.MaxCells (121), which int8 holds.
	dist        [grid.MaxCells]int8
	start, goal int
}

// look returns what lies next to i in direction d; off the grid looks like a wall, since both block.
func (l *layout) look(i int, d direction) cell {
	j, ok := grid.Neighbour(i, d, l.size)
	if !ok {
		return wall
	}
	return l.cells[j]
}

// solve fills dist by a breadth-first search from the goal over cells that are neither walls nor
// traps (moves are symmetric, so distances from the goal are distances to it).
func (l *layout) solve() {
	grid.Distances(l.dist[:], l.goal, l.size, func(j int) bool { return l.cells[j] != wall && l.cells[j] != trap })
}

// generate draws the layout of a task seed: start, goal, walls and traps on distinct cells, redrawn
// from the same random stream until the goal is reachable from the start, without stepping on a
// trap, in minDistance..maxDistance moves.
func (l *layout) generate(cfg Config, seed int64) error {
	n := cfg.Size
	obstacles := 2 + cfg.Walls + cfg.Traps
	if obstacles > n*n {
		return fmt.Errorf("maze: %d walls and %d traps do not fit a %dx%d grid", cfg.Walls, cfg.Traps, n, n)
	}
	draw := grid.NewCellDraw(seed, pcgStream, n)
	l.size = n
	for range maxDraws {
		perm := draw.Next(obstacles)
		l.cells = [grid.MaxCells]cell{}
		l.start, l.goal = perm[0], perm[1]
		for _, i := range perm[2 : 2+cfg.Walls] {
			l.cells[i] = wall
		}
		for _, i := range perm[2+cfg.Walls : obstacles] {
			l.cells[i] = trap
		}
		l.cells[l.goal] = goal
		l.solve()
		if d := int(l.dist[l.start]); d >= minDistance(n) && d <= maxDistance(n) {
			return nil
		}
	}
	return fmt.Errorf("maze: no solvable layout for task seed %d after %d draws", seed, maxDraws)
}
