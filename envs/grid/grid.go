// Package grid holds what the grid environments (maze, keydoor, frozenlake, sokoban) share, so that
// each env keeps only what makes it itself (its cells, layout generator, rules and words):
//
//   - the cells of a grid, indexed row·MaxSide + column whatever the side, the four moves, the
//     breadth-first distances to a goal and the draw of distinct cells of a layout generator
//     (CellDraw);
//   - the text: the action words, the position words r0..r10 and c0..c10, the cell state keys
//     r0c0..r10c10, the observation of a position and its four neighbours (AppendView), the word
//     lists (Vocabulary) and the drawing frame of Render;
//   - the episode lifecycle (Episode): the layout of a task seed drawn once and kept while the seed
//     repeats, the turn count, the step cap of each task (turn_cap_factor: TaskCap, MaxCap) and
//     the accounting of a step, with the observations of its outcomes (Invalid, Moved, Success,
//     Failure);
//   - the hand-built layouts of tests read from text (ParseLayout, ParseRows);
//   - the options: the cap on max_turns and its doc, the checks and docs of turn_cap_factor, the
//     size note of option errors;
//   - the valid moves and the shortest-path expert move built on each env's own move rule.
package grid

import (
	"math/rand/v2"
	"strings"
)

// MaxSide is the largest grid side the position words and cell keys cover (maze and keydoor go up
// to 11).
const MaxSide = 11

// MaxCells bounds the cell indices of every grid: row·MaxSide + column < MaxCells.
const MaxCells = MaxSide * MaxSide

// A cell index fits the byte of Distances's queue; otherwise this constant overflows and does not
// compile.
const _ = uint8(MaxCells - 1)

// Index returns the index of the cell at row r, column c. Cells are indexed with the fixed stride
// MaxSide whatever the side of the grid, so that an index maps onto position words and state keys
// without the side; the stride is not part of any task's identity (generators draw rows and
// columns).
func Index(r, c int) int { return r*MaxSide + c }

// Row returns the row of cell i.
func Row(i int) int { return i / MaxSide }

// Col returns the column of cell i.
func Col(i int) int { return i % MaxSide }

// Direction is a move of the agent, in the order the envs list neighbours in observations.
type Direction int

// The four moves.
const (
	Up Direction = iota
	Down
	Left
	Right
	NumDirections
)

// Word returns the action word of the direction.
func (d Direction) Word() string {
	return [...]string{"up", "down", "left", "right"}[d]
}

// ActionWords returns the words move actions are made of: up, down, left, right.
func ActionWords() []string { return []string{"up", "down", "left", "right"} }

// ParseDirection reads a move action without allocating: the text, trimmed, is at most five ASCII
// letters, lower-cased into a stack buffer. Non-ASCII bytes never match, so Unicode case folding
// (the Kelvin sign folds to k) cannot sneak in a word the policy never saw.
func ParseDirection(text string) (Direction, bool) {
	var buf [5]byte
	word, ok := lowerWord(text, &buf)
	if !ok {
		return 0, false
	}
	switch string(word) {
	case "up":
		return Up, true
	case "down":
		return Down, true
	case "left":
		return Left, true
	case "right":
		return Right, true
	}
	return 0, false
}

// Look is the idle action of the grid envs that offer one (maze's idle_actions): it changes
// nothing but spends a turn, as ALFWorld's look does (see envs.Idler).
const Look = "look"

// IsLook reports whether text is the idle action Look, read as ParseDirection reads a move
// (trimmed, ASCII letters in any case).
func IsLook(text string) bool {
	var buf [5]byte
	word, ok := lowerWord(text, &buf)
	return ok && string(word) == Look
}

// lowerWord is text trimmed and lower-cased into buf without allocating; ok is false when it is
// longer than buf. Only ASCII letters are folded.
func lowerWord(text string, buf *[5]byte) (word []byte, ok bool) {
	text = strings.TrimSpace(text)
	if len(text) > len(buf) {
		return nil, false
	}
	for i := range len(text) {
		ch := text[i]
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		buf[i] = ch
	}
	return buf[:len(text)], true
}

// Offset returns the change of cell index of a move in direction d (see Index), for grids whose
// border is walled so that a move never leaves them.
func (d Direction) Offset() int {
	return [...]int{-MaxSide, MaxSide, -1, 1}[d]
}

// Neighbour returns the cell next to cell i in direction d on a size×size grid, or ok=false off the
// grid.
func Neighbour(i int, d Direction, size int) (j int, ok bool) {
	r, c := Row(i), Col(i)
	switch d {
	case Up:
		r--
	case Down:
		r++
	case Left:
		c--
	case Right:
		c++
	}
	if r < 0 || r >= size || c < 0 || c >= size {
		return 0, false
	}
	return Index(r, c), true
}

// Unreachable marks the cells Distances cannot reach.
const Unreachable = -1

// Distances fills dist (indexed by cell) with the number of moves from every cell of a size×size
// grid to goal through cells for which passable is true, by a breadth-first search from goal; cells
// it cannot reach get Unreachable. Moves are symmetric, so distances from the goal are distances to
// it.
func Distances(dist []int8, goal, size int, passable func(j int) bool) {
	for i := range dist {
		dist[i] = Unreachable
	}
	var queue [MaxCells]uint8 // cell indices, below MaxCells (checked at compile time)
	queue[0] = uint8(goal)
	dist[goal] = 0
	for head, tail := 0, 1; head < tail; head++ {
		i := int(queue[head])
		for d := range NumDirections {
			j, ok := Neighbour(i, d, size)
			if !ok || dist[j] != Unreachable || !passable(j) {
				continue
			}
			dist[j] = dist[i] + 1
			queue[tail] = uint8(j)
			tail++
		}
	}
}

// CellDraw draws distinct cells of a size×size grid from the random stream of a task seed, for
// layout generators that redraw until a layout is accepted.
type CellDraw struct {
	pcg   rand.PCG
	rng   *rand.Rand
	perm  [MaxCells]int
	cells int
}

// NewCellDraw returns a draw over a size×size grid from a PCG generator seeded by (seed, stream).
func NewCellDraw(seed int64, stream uint64, size int) *CellDraw {
	d := &CellDraw{cells: size * size}
	d.pcg.Seed(uint64(seed), stream)
	d.rng = rand.New(&d.pcg)
	for i := range d.cells {
		d.perm[i] = Index(i/size, i%size)
	}
	return d
}

// Next returns k distinct cells drawn uniformly, by a partial Fisher-Yates shuffle that continues the
// previous draw (which keeps it uniform). The slice is overwritten by the next draw.
func (d *CellDraw) Next(k int) []int {
	for i := range k {
		j := i + d.rng.IntN(d.cells-i)
		d.perm[i], d.perm[j] = d.perm[j], d.perm[i]
	}
	return d.perm[:k]
}
