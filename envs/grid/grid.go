// Package grid holds what the grid environments (maze, keydoor, frozenlake, sokoban) share: the
// four moves and their action words, the position words r0..r10 and c0..c10, the cell state keys
// r0c0..r10c10, the drawing frame of Render, the list of valid moves and the shortest-path expert
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

// MaxSide is the largest grid side the position words and cell keys cover (maze and keydoor go up
// to 11).
const MaxSide = 11

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

// Constant strings sliced by index, because substrings of constants do not allocate. Each word
// or key sits in a fixed-width slot, padded with spaces, so that its place is a multiple of its
// index; the one- and two-digit rows and columns then share one layout.
const (
	// rowWords and colWords hold the words r0..r10 and c0..c10, one 3-byte slot each.
	rowWords = "r0 r1 r2 r3 r4 r5 r6 r7 r8 r9 r10"
	colWords = "c0 c1 c2 c3 c4 c5 c6 c7 c8 c9 c10"
	// cellKeys holds the state keys r0c0..r10c10, one 6-byte slot each, row-major.
	cellKeys = "r0c0  r0c1  r0c2  r0c3  r0c4  r0c5  r0c6  r0c7  r0c8  r0c9  r0c10 " +
		"r1c0  r1c1  r1c2  r1c3  r1c4  r1c5  r1c6  r1c7  r1c8  r1c9  r1c10 " +
		"r2c0  r2c1  r2c2  r2c3  r2c4  r2c5  r2c6  r2c7  r2c8  r2c9  r2c10 " +
		"r3c0  r3c1  r3c2  r3c3  r3c4  r3c5  r3c6  r3c7  r3c8  r3c9  r3c10 " +
		"r4c0  r4c1  r4c2  r4c3  r4c4  r4c5  r4c6  r4c7  r4c8  r4c9  r4c10 " +
		"r5c0  r5c1  r5c2  r5c3  r5c4  r5c5  r5c6  r5c7  r5c8  r5c9  r5c10 " +
		"r6c0  r6c1  r6c2  r6c3  r6c4  r6c5  r6c6  r6c7  r6c8  r6c9  r6c10 " +
		"r7c0  r7c1  r7c2  r7c3  r7c4  r7c5  r7c6  r7c7  r7c8  r7c9  r7c10 " +
		"r8c0  r8c1  r8c2  r8c3  r8c4  r8c5  r8c6  r8c7  r8c8  r8c9  r8c10 " +
		"r9c0  r9c1  r9c2  r9c3  r9c4  r9c5  r9c6  r9c7  r9c8  r9c9  r9c10 " +
		"r10c0 r10c1 r10c2 r10c3 r10c4 r10c5 r10c6 r10c7 r10c8 r10c9 r10c10"
)

// The constants cover exactly MaxSide rows and columns, and a cell index fits the byte of
// Distances's queue: otherwise a constant below goes negative or overflows, which does not compile.
const (
	_ = uint(len(rowWords) - 3*MaxSide)
	_ = uint(3*MaxSide - len(rowWords))
	_ = uint(len(colWords) - 3*MaxSide)
	_ = uint(3*MaxSide - len(colWords))
	_ = uint(len(cellKeys) - 6*MaxSide*MaxSide)
	_ = uint(6*MaxSide*MaxSide - len(cellKeys))
	_ = uint8(MaxSide*MaxSide - 1)
)

// wordLen is the length of the position word of row or column n: 2 up to 9 ("r9"), 3 from 10.
func wordLen(n int) int {
	if n >= 10 {
		return 3
	}
	return 2
}

// RowWord returns the position word of row r (0 ≤ r < MaxSide): "r0".."r10".
func RowWord(r int) string { return rowWords[3*r : 3*r+wordLen(r)] }

// ColWord returns the position word of column c (0 ≤ c < MaxSide): "c0".."c10".
func ColWord(c int) string { return colWords[3*c : 3*c+wordLen(c)] }

// CellKey returns the state key of the cell at row r, column c (0 ≤ r, c < MaxSide): "r<R>c<C>",
// such as "r2c3" or "r10c3" (the letters keep two-digit rows and columns apart).
func CellKey(r, c int) string {
	i := 6 * (r*MaxSide + c)
	return cellKeys[i : i+wordLen(r)+wordLen(c)]
}

// Render draws a size×size grid (size ≤ MaxSide) for people, one row per line under a header of
// column numbers; at(r, c) gives the character of each cell. From size 11 on, where rows and
// columns reach two digits, row labels and columns are one character wider.
func Render(size int, at func(r, c int) byte) string {
	pad := func(b *strings.Builder, n int) {
		for range n {
			b.WriteByte(' ')
		}
	}
	wide := 0
	if size > 10 {
		wide = 1
	}
	var b strings.Builder
	pad(&b, 2+wide)
	for c := range size {
		pad(&b, 1+wide+2-wordLen(c))
		b.WriteString(strconv.Itoa(c))
	}
	for r := range size {
		b.WriteByte('\n')
		b.WriteString(RowWord(r))
		pad(&b, wide+2-wordLen(r))
		for c := range size {
			pad(&b, 1+wide)
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
	var queue [MaxSide * MaxSide]uint8 // cell indices, below MaxSide² (checked at compile time)
	queue[0] = uint8(goal)
	dist[goal] = 0
	for head, tail := 0, 1; head < tail; head++ {
		i := int(queue[head])
		for d := range NumDirections {
			j, ok := Neighbour(i, d, size, stride)
			if !ok || dist[j] != Unreachable || !passable(j) {
				continue
			}
			dist[j] = dist[i] + 1
			queue[tail] = uint8(j)
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

// DefaultsBySize lists an option's default for every side from lo to hi, for an env's option
// docs: "4, 6, 8 (size 5..7)".
func DefaultsBySize(lo, hi int, at func(size int) int) string {
	parts := make([]string, 0, hi-lo+1)
	for size := lo; size <= hi; size++ {
		parts = append(parts, strconv.Itoa(at(size)))
	}
	return fmt.Sprintf("%s (size %d..%d)", strings.Join(parts, ", "), lo, hi)
}
