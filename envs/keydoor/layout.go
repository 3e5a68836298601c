package keydoor

import (
	"fmt"
	"math/rand/v2"

	"github.com/graftrl/graftrl/envs/grid"
)

// cell is the content of a grid cell.
type cell uint8

const (
	open cell = iota
	wall
	key
	door
	goal
)

// symbols are the characters of the cells (open, wall, key, door, goal), in pictures and in
// the literal grids of tests.
const symbols = ".#KDG"

// unreachable marks states of the distance table from which the goal cannot be reached.
const unreachable = -1

// pcgStream is the second PCG seed word. It is part of the task identity: changing it changes the
// layout of every task seed.
const pcgStream = 0x6b657964 // "keyd"

// A cell index fits the byte of solve's queue; otherwise this constant overflows and does not compile.
const _ = uint8(grid.MaxCells - 1)

// maxDraws bounds layout generation; almost every draw is accepted, so reaching it means a bug.
const maxDraws = 10_000

// layout is one grid: the cell contents and the distances to the goal. It is a value type (fixed
// arrays) so that copying an env copies its layout.
type layout struct {
	size  int
	cells [grid.MaxCells]cell
	// dist[k][i] is the optimal number of moves from cell i to the goal, holding the key (k = 1) or
	// not (k = 0), or unreachable. A shortest path visits each (cell, key held) state at most once,
	// so it is below 2·size², up to 242 at size 11: more than int8 holds.
	dist                         [2][grid.MaxCells]int16
	start, keyAt, doorAt, goalAt int
}

// look returns what lies next to i in direction d; off the grid looks like a wall, since both block.
// A picked-up key is no longer on its cell.
func (l *layout) look(i int, d direction, hasKey bool) cell {
	j, ok := grid.Neighbour(i, d, l.size)
	if !ok {
		return wall
	}
	if l.cells[j] == key && hasKey {
		return open
	}
	return l.cells[j]
}

// passable reports whether the agent may enter cell j, holding the key or not.
func (l *layout) passable(j int, hasKey bool) bool {
	switch l.cells[j] {
	case wall:
		return false
	case door:
		return hasKey
	}
	return true
}

// holds returns the key state after entering cell j.
func (l *layout) holds(j int, hasKey bool) bool { return hasKey || l.cells[j] == key }

// solve fills dist by a breadth-first search backwards from the goal over (cell, key held) states.
// A state (i, k) precedes (j, k') when i is next to j, the agent may stand on i holding k (on the
// door only with the key, on the key's cell only once it is held), may enter j, and entering j
// gives k'.
func (l *layout) solve() {
	for k := range l.dist {
		for i := range l.dist[k] {
			l.dist[k][i] = unreachable
		}
	}
	type state struct {
		i uint8 // a cell index, below grid.MaxCells (checked at compile time)
		k bool
	}
	var queue [2 * grid.MaxCells]state
	tail := 0
	for _, k := range []bool{false, true} {
		l.dist[b2i(k)][l.goalAt] = 0
		queue[tail] = state{uint8(l.goalAt), k}
		tail++
	}
	for head := 0; head < tail; head++ {
		s := queue[head]
		d := l.dist[b2i(s.k)][s.i]
		for dir := range grid.NumDirections {
			i, ok := grid.Neighbour(int(s.i), dir, l.size)
			if !ok || l.cells[i] == goal {
				continue
			}
			for _, k := range []bool{false, true} {
				standable := l.passable(i, k) && (l.cells[i] != key || k)
				if !standable || l.dist[b2i(k)][i] != unreachable || !l.passable(int(s.i), k) || l.holds(int(s.i), k) != s.k {
					continue
				}
				l.dist[b2i(k)][i] = d + 1
				queue[tail] = state{uint8(i), k}
				tail++
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// startDistance is the optimal number of moves of the task.
func (l *layout) startDistance() int { return int(l.dist[0][l.start]) }

// generate draws the layout of a task seed: a wall line across the grid (a row or a column, never
// the first or last) with one door cell; the start and the key on one side of it, the goal on the
// other; extra walls anywhere else; redrawn from the same random stream until the goal can be reached
// in minDistance..maxDistance moves. The goal is then only reachable through the door, with the key.
func (l *layout) generate(cfg Config, seed int64) error {
	n := cfg.Size
	var pcg rand.PCG
	pcg.Seed(uint64(seed), pcgStream)
	rng := rand.New(&pcg)
	l.size = n
	for range maxDraws {
		l.cells = [grid.MaxCells]cell{}
		vertical := rng.IntN(2) == 0
		line := 1 + rng.IntN(n-2)
		// at maps (position along the line, position across it) onto a cell.
		at := func(along, across int) int {
			if vertical {
				return grid.Index(along, across)
			}
			return grid.Index(across, along)
		}
		for a := range n {
			l.cells[at(a, line)] = wall
		}
		l.doorAt = at(rng.IntN(n), line)
		l.cells[l.doorAt] = door
		// The start side is before or after the line; cells are drawn uniformly on their side.
		near, far := [2]int{0, line}, [2]int{line + 1, n}
		if rng.IntN(2) == 1 {
			near, far = far, near
		}
		draw := func(side [2]int) int { return at(rng.IntN(n), side[0]+rng.IntN(side[1]-side[0])) }
		l.start, l.keyAt, l.goalAt = draw(near), draw(near), draw(far)
		if l.keyAt == l.start {
			continue
		}
		l.cells[l.keyAt], l.cells[l.goalAt] = key, goal
		placed := 0
		for tries := 0; placed < cfg.Walls && tries < 100*n*n; tries++ {
			i := grid.Index(rng.IntN(n), rng.IntN(n))
			if l.cells[i] == open && i != l.start {
				l.cells[i] = wall
				placed++
			}
		}
		if placed < cfg.Walls {
			return fmt.Errorf("keydoor: %d walls do not fit a %dx%d grid", cfg.Walls, n, n)
		}
		l.solve()
		if d := l.startDistance(); d >= minDistance(n) && d <= maxDistance(n) {
			return nil
		}
	}
	return fmt.Errorf("keydoor: no solvable layout for task seed %d after %d draws", seed, maxDraws)
}
