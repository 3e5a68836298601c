package grid

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestParseDirection checks the move words in any case and surrounding white space, and refuses
// everything else: empty text, two words, near misses, other letters that look or fold alike.
func TestParseDirection(t *testing.T) {
	valid := map[string]Direction{
		"up": Up, "down": Down, "left": Left, "right": Right,
		"UP": Up, "Right": Right, "  dOwN \n": Down, "\tleft": Left,
	}
	for text, want := range valid {
		if d, ok := ParseDirection(text); !ok || d != want {
			t.Errorf("ParseDirection(%q) = %v, %v; want %v, true", text, d, ok, want)
		}
	}
	invalid := []string{"", "   ", "up up", "upp", "u p", "up.", "north", "rightt", "left\tright", "\x00up",
		"ｕｐ",       // fullwidth letters
		"\u212aup", // Kelvin sign, which Unicode folds to k
		"ŭp", "🙂", "\xff\xfe", "invalid", "goal"}
	for _, text := range invalid {
		if d, ok := ParseDirection(text); ok {
			t.Errorf("ParseDirection(%q) = %v, true; want false", text, d)
		}
	}
}

func TestWordsAndKeys(t *testing.T) {
	if RowWord(0) != "r0" || RowWord(6) != "r6" || ColWord(3) != "c3" || CellKey(Index(2, 5)) != "r2c5" || CellKey(Index(6, 6)) != "r6c6" {
		t.Fatalf("RowWord(0)=%q RowWord(6)=%q ColWord(3)=%q CellKey(2,5)=%q CellKey(6,6)=%q",
			RowWord(0), RowWord(6), ColWord(3), CellKey(Index(2, 5)), CellKey(Index(6, 6)))
	}
	for d := range NumDirections {
		if got, ok := ParseDirection(d.Word()); !ok || got != d {
			t.Fatalf("ParseDirection(%q) = %v, %v", d.Word(), got, ok)
		}
	}
}

func TestRender(t *testing.T) {
	got := Render(2, func(i int) byte { return "ab"[Col(i)] + byte(2*Row(i)) })
	if want := "   0 1\nr0 a b\nr1 c d\n"; got != want {
		t.Fatalf("Render = %q, want %q", got, want)
	}
}

// TestCellKeysAllCells checks every position word and cell key up to MaxSide against the
// formatted form, two-digit rows and columns included, and that the keys are unambiguous.
func TestCellKeysAllCells(t *testing.T) {
	if MaxSide < 11 {
		t.Fatalf("MaxSide = %d, want at least 11 (maze and keydoor sizes up to 11)", MaxSide)
	}
	seen := map[string]bool{}
	for r := range MaxSide {
		if got, want := RowWord(r), "r"+strconv.Itoa(r); got != want {
			t.Errorf("RowWord(%d) = %q, want %q", r, got, want)
		}
		if got, want := ColWord(r), "c"+strconv.Itoa(r); got != want {
			t.Errorf("ColWord(%d) = %q, want %q", r, got, want)
		}
		for c := range MaxSide {
			key := CellKey(Index(r, c))
			if want := fmt.Sprintf("r%dc%d", r, c); key != want {
				t.Errorf("CellKey(Index(%d, %d)) = %q, want %q", r, c, key, want)
			}
			if seen[key] {
				t.Errorf("CellKey(Index(%d, %d)) = %q twice", r, c, key)
			}
			seen[key] = true
		}
	}
	if CellKey(Index(10, 3)) != "r10c3" || CellKey(Index(1, 10)) != "r1c10" || CellKey(Index(10, 10)) != "r10c10" {
		t.Errorf("two-digit keys: %q %q %q", CellKey(Index(10, 3)), CellKey(Index(1, 10)), CellKey(Index(10, 10)))
	}
	if n := testing.AllocsPerRun(100, func() { _, _, _ = CellKey(Index(10, 9)), RowWord(10), ColWord(7) }); n != 0 {
		t.Errorf("CellKey, RowWord and ColWord allocate %v times", n)
	}
}

// TestRenderSizes keeps the drawing of sides up to 10 as it was, and widens rows and columns from
// side 11 on so that two-digit numbers stay aligned with their cells.
func TestRenderSizes(t *testing.T) {
	dot := func(i int) byte { return '.' }
	want7 := "   0 1 2 3 4 5 6\n"
	for r := range 7 {
		want7 += "r" + strconv.Itoa(r) + strings.Repeat(" .", 7) + "\n"
	}
	if got := Render(7, dot); got != want7 {
		t.Errorf("Render(7) =\n%s\nwant\n%s", got, want7)
	}
	got := Render(11, func(i int) byte {
		if Row(i) == Col(i) {
			return '@'
		}
		return '.'
	})
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 12 {
		t.Fatalf("Render(11) has %d lines:\n%s", len(lines), got)
	}
	if want := "     0  1  2  3  4  5  6  7  8  9 10"; lines[0] != want {
		t.Errorf("header %q, want %q", lines[0], want)
	}
	if want := "r0   @  .  .  .  .  .  .  .  .  .  ."; lines[1] != want {
		t.Errorf("row 0 %q, want %q", lines[1], want)
	}
	if want := "r10  .  .  .  .  .  .  .  .  .  .  @"; lines[11] != want {
		t.Errorf("row 10 %q, want %q", lines[11], want)
	}
	for _, l := range lines {
		if len(l) != len(lines[0]) {
			t.Errorf("line %q is %d wide, want %d", l, len(l), len(lines[0]))
		}
	}
}

// TestDistancesLargeGrid checks the breadth-first distances on an 11×11 grid with the cell indexing
// of the envs against Manhattan distances around a wall column, without allocating.
func TestDistancesLargeGrid(t *testing.T) {
	const size = 11
	// A wall down column 5 from row 0 to row 9: the way round is through row 10.
	blocked := func(j int) bool { return Col(j) == 5 && Row(j) < 10 }
	var dist [MaxCells]int8
	goal := 0 // r0c0
	Distances(dist[:], goal, size, func(j int) bool { return !blocked(j) })
	abs := func(x int) int { return max(x, -x) }
	for r := range size {
		for c := range size {
			i := Index(r, c)
			want := r + c
			switch {
			case blocked(i):
				want = Unreachable
			case c > 5:
				want = (10 - 0) + 5 + (10 - r) + abs(c-5) // down to row 10, across, back up
			}
			if int(dist[i]) != want {
				t.Errorf("dist r%dc%d = %d, want %d", r, c, dist[i], want)
			}
		}
	}
	if n := testing.AllocsPerRun(20, func() { Distances(dist[:], goal, size, func(j int) bool { return true }) }); n != 0 {
		t.Errorf("Distances allocates %v times", n)
	}
}

// TestCellDrawLargeGrid draws cells of an 11×11 grid: distinct, on the grid, the same for the same
// seed.
func TestCellDrawLargeGrid(t *testing.T) {
	const size = 11
	a, b := NewCellDraw(3, 1, size), NewCellDraw(3, 1, size)
	for range 5 {
		x, y := a.Next(size*size), b.Next(size*size)
		seen := map[int]bool{}
		for k, i := range x {
			if i != y[k] {
				t.Fatalf("same seed, draws differ at %d: %d vs %d", k, i, y[k])
			}
			if Row(i) >= size || Col(i) >= size || seen[i] {
				t.Fatalf("cell %d off the grid or drawn twice", i)
			}
			seen[i] = true
		}
	}
}

// TestText checks the text of positions and observations against strings written out by hand.
func TestText(t *testing.T) {
	if i := Index(10, 3); Row(i) != 10 || Col(i) != 3 || Position(i) != "r10 c3" || EndText(i, "goal") != "r10 c3 goal" {
		t.Errorf("cell r10c3: index %d, row %d, col %d, %q, %q", i, Row(i), Col(i), Position(i), EndText(i, "goal"))
	}
	look := func(d Direction) string { return [...]string{"wall", "open", "trap", "goal"}[d] }
	if got := string(AppendView(nil, false, Index(2, 3), look)); got != "r2 c3 wall open trap goal" {
		t.Errorf("AppendView = %q", got)
	}
	if got := string(AppendView([]byte("x"), true, Index(0, 10), look)); got != "xinvalid r0 c10 wall open trap goal" {
		t.Errorf("AppendView after an invalid action = %q", got)
	}
	for _, tc := range []struct {
		size, covered, largest int
		want                   string
	}{
		{5, 7, 11, "a b"},
		{7, 7, 11, "a b"},
		{8, 7, 11, "a b r7 r8 r9 r10 c7 c8 c9 c10"},
		{11, 7, 11, "a b r7 r8 r9 r10 c7 c8 c9 c10"},
		{8, 7, 8, "a b r7 c7"},
	} {
		if got := strings.Join(Vocabulary("a b", tc.size, tc.covered, tc.largest), " "); got != tc.want {
			t.Errorf("Vocabulary(size %d, covered %d, largest %d) = %q, want %q", tc.size, tc.covered, tc.largest, got, tc.want)
		}
	}
}

// TestMoves checks the offsets and neighbours of the four moves from a middle cell and from a corner.
func TestMoves(t *testing.T) {
	i := Index(2, 3)
	for d, want := range []int{Index(1, 3), Index(3, 3), Index(2, 2), Index(2, 4)} {
		if j, ok := Neighbour(i, Direction(d), 5); !ok || j != want || i+Direction(d).Offset() != want {
			t.Errorf("%s from r2c3: %d, %v, offset %d; want %d", Direction(d).Word(), j, ok, Direction(d).Offset(), want)
		}
	}
	corner := Index(4, 4)
	for d, on := range []bool{true, false, true, false} {
		if _, ok := Neighbour(corner, Direction(d), 5); ok != on {
			t.Errorf("%s from r4c4 on a 5×5 grid: on the grid %v, want %v", Direction(d).Word(), ok, on)
		}
	}
}
