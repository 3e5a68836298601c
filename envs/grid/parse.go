package grid

import (
	"fmt"
	"strings"
)

// ParseRows reads a square layout written as text, one string per row, as the hand-built layouts of
// tests are. The side must be lo..hi; put is given the index (see Index) and the character
// of every cell, in reading order, and refuses a character the env does not allow there with an
// error, which is reported with its row. what names the layout in errors ("maze: grid").
func ParseRows(what string, rows []string, lo, hi int, put func(i int, ch byte) error) error {
	n := len(rows)
	if n < lo || n > hi {
		return fmt.Errorf("%s has %d rows, want %d..%d", what, n, lo, hi)
	}
	for r, line := range rows {
		if len(line) != n {
			return fmt.Errorf("%s row %d %q has %d cells, want %d", what, r, line, len(line), n)
		}
		for c, ch := range []byte(line) {
			if err := put(Index(r, c), ch); err != nil {
				return fmt.Errorf("%s row %d %q: %w", what, r, line, err)
			}
		}
	}
	return nil
}

// UnknownCell is the error of ParseRows's put for a character outside the env's alphabet.
func UnknownCell(ch byte) error { return fmt.Errorf("unknown cell %q", ch) }

// ParseLayout reads a square layout of side lo..hi as ParseRows does, for an env whose cells are
// drawn as the characters of symbols, in the order of their values (".#TG": open, wall, trap, goal):
// each character is written into cells (indexed by Index) as the cell it draws. The characters of
// marks (the start, the goal …) must each occur exactly once; a mark stands on the cell it draws,
// or on the first cell (symbols[0]) where it draws none. at holds the marks' cell indices, in the
// order of marks. It returns the side.
func ParseLayout[C ~uint8](what string, rows []string, lo, hi int, symbols string, cells []C, marks string) (side int, at []int, err error) {
	at = make([]int, len(marks))
	counts := make([]int, len(marks))
	err = ParseRows(what, rows, lo, hi, func(i int, ch byte) error {
		c, k := strings.IndexByte(symbols, ch), strings.IndexByte(marks, ch)
		if c < 0 && k < 0 {
			return UnknownCell(ch)
		}
		cells[i] = C(max(c, 0))
		if k >= 0 {
			at[k] = i
			counts[k]++
		}
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	for _, n := range counts {
		if n != 1 {
			return 0, nil, fmt.Errorf("%s needs one each of %s; has %s", what, commaList(strings.Split(marks, "")), commaList(counts))
		}
	}
	return len(rows), at, nil
}

// commaList writes the elements of s separated by commas: "S, K, D, G", "1, 0, 1, 1".
func commaList[T any](s []T) string {
	parts := make([]string, len(s))
	for i, x := range s {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ", ")
}
