package maze

import (
	"fmt"

	"github.com/graftrl/graftrl/envs/grid"
)

// Cells are indexed row*stride + col with a fixed stride of MaxSize whatever the grid side, so that
// a cell index maps onto the position words and state keys without arithmetic on the size. The
// stride is not part of the task identity: the generator draws rows and columns (grid.CellDraw), so
// a task seed draws the same layout whatever MaxSize is.
const (
	stride   = MaxSize
	maxCells = MaxSize * MaxSize
)

// cell is the content of a grid cell.
type cell uint8

const (
	open cell = iota
	wall
	trap
	goal
)

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
	cells [maxCells]cell
	// dist[i] is the number of moves from cell i to the goal avoiding walls and traps, or unreachable;
	// a shortest path visits each cell once, so it is below maxCells (121), which int8 holds.
	dist        [maxCells]int8
	start, goal int
}

func row(i int) int { return i / stride }
func col(i int) int { return i % stride }

// neighbour returns the cell next to i in direction d, or ok=false off the grid.
func (l *layout) neighbour(i int, d direction) (j int, ok bool) {
	return grid.Neighbour(i, d, l.size, stride)
}

// look returns what lies next to i in direction d; off the grid looks like a wall, since both block.
func (l *layout) look(i int, d direction) cell {
	j, ok := l.neighbour(i, d)
	if !ok {
		return wall
	}
	return l.cells[j]
}

// solve fills dist by a breadth-first search from the goal over cells that are neither walls nor
// traps (moves are symmetric, so distances from the goal are distances to it).
func (l *layout) solve() {
	grid.Distances(l.dist[:], l.goal, l.size, stride, func(j int) bool { return l.cells[j] != wall && l.cells[j] != trap })
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
	draw := grid.NewCellDraw(seed, pcgStream, n, stride)
	l.size = n
	for range maxDraws {
		perm := draw.Next(obstacles)
		l.cells = [maxCells]cell{}
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

// parseLayout builds a layout from a literal grid, one string per row: '.' open, '#' wall, 'T' trap,
// 'S' start, 'G' goal. It lets tests pin down dynamics on hand-checked layouts; unlike generate it
// does not require the goal to be reachable.
func parseLayout(rows []string) (layout, error) {
	var l layout
	n := len(rows)
	if n < 2 || n > MaxSize {
		return l, fmt.Errorf("maze: grid has %d rows, want 2..%d", n, MaxSize)
	}
	l.size = n
	starts, goals := 0, 0
	for r, line := range rows {
		if len(line) != n {
			return l, fmt.Errorf("maze: grid row %d %q has %d cells, want %d", r, line, len(line), n)
		}
		for c, ch := range []byte(line) {
			i := r*stride + c
			switch ch {
			case '.':
			case '#':
				l.cells[i] = wall
			case 'T':
				l.cells[i] = trap
			case 'S':
				l.start = i
				starts++
			case 'G':
				l.cells[i] = goal
				l.goal = i
				goals++
			default:
				return l, fmt.Errorf("maze: grid row %d %q: unknown cell %q", r, line, ch)
			}
		}
	}
	if starts != 1 || goals != 1 {
		return l, fmt.Errorf("maze: grid has %d starts and %d goals, want one of each", starts, goals)
	}
	l.solve()
	return l, nil
}
