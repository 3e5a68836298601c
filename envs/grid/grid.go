// Package grid holds what the grid environments (maze, keydoor, frozenlake, sokoban) share: the
// four moves and their action words, the position words r0..r6 and c0..c6, the cell state keys
// r0c0..r6c6, the drawing frame of Render, the list of valid moves and the shortest-path expert
// move built on each env's own move rule, the draw of distinct cells of a layout generator
// (CellDraw), the size note of option errors (SizeNote) and the per-task step cap of
// turn_cap_factor (TurnCap, CheckTurnCapFactor). Each env keeps its own cells, layout and
// rules.
package grid

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/graftrl/graftrl/envs"
)

// MaxSide is the largest grid side the position words cover.
const MaxSide = 8

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
	text = strings.TrimSpace(text)
	var buf [5]byte
	if len(text) > len(buf) {
		return 0, false
	}
	for i := range len(text) {
		ch := text[i]
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		buf[i] = ch
	}
	switch string(buf[:len(text)]) {
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

// Constant strings sliced by index, because substrings of constants do not allocate.
const (
	// rowWords and colWords hold the words r0..r7 and c0..c7, two bytes each.
	rowWords = "r0r1r2r3r4r5r6r7"
	colWords = "c0c1c2c3c4c5c6c7"
	// cellKeys holds the state keys r0c0..r7c7, four bytes each, row-major.
	cellKeys = "r0c0r0c1r0c2r0c3r0c4r0c5r0c6r0c7r1c0r1c1r1c2r1c3r1c4r1c5r1c6r1c7r2c0r2c1r2c2r2c3r2c4" +
		"r2c5r2c6r2c7r3c0r3c1r3c2r3c3r3c4r3c5r3c6r3c7r4c0r4c1r4c2r4c3r4c4r4c5r4c6r4c7r5c0r5c1" +
		"r5c2r5c3r5c4r5c5r5c6r5c7r6c0r6c1r6c2r6c3r6c4r6c5r6c6r6c7r7c0r7c1r7c2r7c3r7c4r7c5r7c6" +
		"r7c7"
)

// RowWord returns the position word of row r (0 ≤ r < MaxSide): "r0".."r7".
func RowWord(r int) string { return rowWords[2*r : 2*r+2] }

// ColWord returns the position word of column c (0 ≤ c < MaxSide): "c0".."c7".
func ColWord(c int) string { return colWords[2*c : 2*c+2] }

// CellKey returns the state key of the cell at row r, column c: "r<R>c<C>".
func CellKey(r, c int) string { i := 4 * (r*MaxSide + c); return cellKeys[i : i+4] }

// Render draws a size×size grid for people, one row per line under a header of column numbers;
// at(r, c) gives the character of each cell.
func Render(size int, at func(r, c int) byte) string {
	var b strings.Builder
	b.WriteString("  ")
	for c := range size {
		b.WriteByte(' ')
		b.WriteByte(byte('0' + c))
	}
	for r := range size {
		b.WriteString("\nr")
		b.WriteByte(byte('0' + r))
		for c := range size {
			b.WriteByte(' ')
			b.WriteByte(at(r, c))
		}
	}
	b.WriteByte('\n')
	return b.String()
}

// Neighbour returns the cell next to cell i in direction d on a size×size grid whose cells are
// indexed row·stride + column, or ok=false off the grid.
func Neighbour(i int, d Direction, size, stride int) (j int, ok bool) {
	r, c := i/stride, i%stride
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
	return r*stride + c, true
}

// Unreachable marks the cells Distances cannot reach.
const Unreachable = -1

// Distances fills dist (indexed like Neighbour's cells) with the number of moves from every cell
// to goal through cells for which passable is true, by a breadth-first search from goal; cells it
// cannot reach get Unreachable. Moves are symmetric, so distances from the goal are distances to
// it.
func Distances(dist []int8, goal, size, stride int, passable func(j int) bool) {
	for i := range dist {
		dist[i] = Unreachable
	}
	var queue [MaxSide * MaxSide]int
	queue[0] = goal
	dist[goal] = 0
	for head, tail := 0, 1; head < tail; head++ {
		i := queue[head]
		for d := range NumDirections {
			j, ok := Neighbour(i, d, size, stride)
			if !ok || dist[j] != Unreachable || !passable(j) {
				continue
			}
			dist[j] = dist[i] + 1
			queue[tail] = j
			tail++
		}
	}
}

// Moves returns the action words of the allowed moves, in direction order, and the distance to
// success each leads to: next(d) reports whether move d is allowed and, if so, the distance after it
// (0 for success, or envs.DistDead). It serves ValidMoves and ExpertMove.
func Moves(next func(d Direction) (dist int, ok bool)) (words []string, dists []int) {
	words, dists = make([]string, 0, NumDirections), make([]int, 0, NumDirections)
	for d := range NumDirections {
		if dist, ok := next(d); ok {
			words, dists = append(words, d.Word()), append(dists, dist)
		}
	}
	return words, dists
}

// ValidMoves is the ValidActions of a grid env (see envs.ValidActioner): the words of the allowed
// moves, in direction order, while an episode runs (see Moves for next); none otherwise.
func ValidMoves(running bool, next func(d Direction) (dist int, ok bool)) []string {
	if !running {
		return nil
	}
	words, _ := Moves(next)
	return words
}

// ExpertMove is the ExpertAction of a grid env's shortest-path expert (see envs.Expert): the word of
// the allowed move that leads closest to success (see Moves for next, and envs.Closest for the
// choice: ties go to the first in direction order, and where no move leads to a known distance, the
// first allowed move). Where no episode runs or no move is allowed, the error, prefixed by the env's
// name, wraps envs.ErrNoAction.
func ExpertMove(env string, running bool, next func(d Direction) (dist int, ok bool)) (string, error) {
	if running {
		if words, dists := Moves(next); len(words) > 0 {
			return words[envs.Closest(dists)], nil
		}
	}
	return "", fmt.Errorf("%s: %w", env, envs.ErrNoAction)
}

// SizeNote appends " for size <size>" to the allowed values of an *envs.OptionError, for the options
// whose range depends on the grid side (see envs.NoteAllowed); it returns err.
func SizeNote(err error, size int) error {
	return envs.NoteAllowed(err, " for size "+strconv.Itoa(size))
}

// CellDraw draws distinct cells of a size×size grid (cells indexed row·stride + column) from the
// random stream of a task seed, for layout generators that redraw until a layout is accepted.
type CellDraw struct {
	pcg   rand.PCG
	rng   *rand.Rand
	perm  [MaxSide * MaxSide]int
	cells int
}

// NewCellDraw returns a draw over a size×size grid from a PCG generator seeded by (seed, stream).
func NewCellDraw(seed int64, stream uint64, size, stride int) *CellDraw {
	d := &CellDraw{cells: size * size}
	d.pcg.Seed(uint64(seed), stream)
	d.rng = rand.New(&d.pcg)
	for i := range d.cells {
		d.perm[i] = (i/size)*stride + i%size
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

// TurnCap is the step cap of a task whose optimal length is d under turn_cap_factor f: ⌈f·d⌉,
// less a rounding margin so that 1.1 × 10 is 11 and not 12.
func TurnCap(f float64, d int) int { return int(math.Ceil(f*float64(d) - 1e-9)) }

// TurnCapDoc documents the turn_cap_factor option of a grid env.
func TurnCapDoc() envs.OptionDoc {
	return envs.OptionDoc{Key: "turn_cap_factor", Default: "0",
		Help: "step cap per task as a multiple of its optimal length, ⌈factor × length⌉ (0: max_turns for every task; replaces it)"}
}

// CheckTurnCapFactor checks turn_cap_factor f of env on grids of the given side: 0 (off), or at
// least 1 (every task stays solvable in time) with the longest task's cap, ⌈f·longest⌉, at most
// limit turns; and not together with a max_turns other than its default for the size.
func CheckTurnCapFactor(env string, f float64, size, longest, limit int, maxTurnsSet bool) error {
	if f == 0 {
		return nil
	}
	if !(f >= 1 && TurnCap(f, longest) <= limit) {
		return &envs.OptionError{Env: env, Key: "turn_cap_factor", Value: f, Reason: "is out of range",
			Allowed: fmt.Sprintf("0 (off) or 1..%.3g for size %d (the longest task's cap at most %d turns)",
				float64(limit)/float64(longest), size, limit)}
	}
	if maxTurnsSet {
		return &envs.OptionError{Env: env, Key: "turn_cap_factor", Value: f, Reason: "replaces max_turns",
			Allowed: "one of max_turns and turn_cap_factor"}
	}
	return nil
}
