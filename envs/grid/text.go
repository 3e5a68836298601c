package grid

import (
	"strconv"
	"strings"
)

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

// The constants cover exactly MaxSide rows and columns: otherwise a constant below goes negative,
// which does not compile.
const (
	_ = uint(len(rowWords) - 3*MaxSide)
	_ = uint(3*MaxSide - len(rowWords))
	_ = uint(len(colWords) - 3*MaxSide)
	_ = uint(3*MaxSide - len(colWords))
	_ = uint(len(cellKeys) - 6*MaxSide*MaxSide)
	_ = uint(6*MaxSide*MaxSide - len(cellKeys))
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

// CellKey returns the state key of cell i: "r<R>c<C>", such as "r2c3" or "r10c3" (the letters keep
// two-digit rows and columns apart).
func CellKey(i int) string { return cellKeys[6*i : 6*i+wordLen(Row(i))+wordLen(Col(i))] }

// Position returns the position words of cell i: "r2 c3".
func Position(i int) string { return RowWord(Row(i)) + " " + ColWord(Col(i)) }

// AppendPosition appends the position words of cell i to b: "r2 c3".
func AppendPosition(b []byte, i int) []byte {
	b = append(b, RowWord(Row(i))...)
	b = append(b, ' ')
	return append(b, ColWord(Col(i))...)
}

// AppendView appends the observation of a grid env's non-terminal state to b: "invalid " after an
// invalid action, so that the policy can tell that the unchanged state is its own fault and not a
// no-op move; the position of cell i; then, for each direction in order, a space and the word of
// what lies one move that way, look(d).
func AppendView(b []byte, invalid bool, i int, look func(d Direction) string) []byte {
	if invalid {
		b = append(b, "invalid "...)
	}
	b = AppendPosition(b, i)
	for d := range NumDirections {
		b = append(b, ' ')
		b = append(b, look(d)...)
	}
	return b
}

// EndText is the observation of a grid env's terminal state: the position of cell i and the word of
// how the episode ended ("r4 c4 goal").
func EndText(i int, word string) string { return Position(i) + " " + word }

// Vocabulary returns the word list of a grid env of the given side: words, whose position words
// cover the sides up to covered (r0..r<covered-1>, c0..c<covered-1>), followed on a larger side by
// the position words of the rows, then of the columns, covered..largest-1, largest being the env's
// largest side. The larger sides' words come last, so that the words of the smaller sides keep
// their places (and token ids); the list is the same for every side beyond covered.
func Vocabulary(words string, size, covered, largest int) []string {
	v := strings.Fields(words)
	if size > covered {
		for r := covered; r < largest; r++ {
			v = append(v, RowWord(r))
		}
		for c := covered; c < largest; c++ {
			v = append(v, ColWord(c))
		}
	}
	return v
}

// Render draws a size×size grid (size ≤ MaxSide) for people, one row per line under a header of
// column numbers; at(i) gives the character of cell i. From size 11 on, where rows and
// columns reach two digits, row labels and columns are one character wider.
func Render(size int, at func(i int) byte) string {
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
			b.WriteByte(at(Index(r, c)))
		}
	}
	b.WriteByte('\n')
	return b.String()
}
