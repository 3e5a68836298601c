package grid

import (
	"errors"
	"reflect"
	"testing"
)

// TestParseLayout reads a layout of three cells (".#G": open, wall, goal) with a start and a goal,
// and refuses layouts of the wrong side, ragged rows, unknown characters and missing or repeated
// marks, each with its message.
func TestParseLayout(t *testing.T) {
	var cells [MaxCells]uint8
	side, at, err := ParseLayout("t: grid", []string{"S.#", "...", "#.G"}, 2, 4, ".#G", cells[:], "SG")
	if err != nil {
		t.Fatal(err)
	}
	var want [MaxCells]uint8
	want[Index(0, 2)], want[Index(2, 0)], want[Index(2, 2)] = 1, 1, 2
	if side != 3 || !reflect.DeepEqual(at, []int{Index(0, 0), Index(2, 2)}) || cells != want {
		t.Errorf("side %d, marks at %v, cells %v", side, at, cells[:3*MaxSide])
	}
	for _, tc := range []struct {
		rows []string
		want string
	}{
		{[]string{"S"}, "t: grid has 1 rows, want 2..4"},
		{[]string{"S....", ".....", ".....", ".....", "....G"}, "t: grid has 5 rows, want 2..4"},
		{[]string{"S.", "G"}, `t: grid row 1 "G" has 1 cells, want 2`},
		{[]string{"S.", ".x"}, `t: grid row 1 ".x": unknown cell 'x'`},
		{[]string{"S.", ".."}, "t: grid needs one each of S, G; has 1, 0"},
		{[]string{"SG", "S."}, "t: grid needs one each of S, G; has 2, 1"},
	} {
		if _, _, err := ParseLayout("t: grid", tc.rows, 2, 4, ".#G", cells[:], "SG"); err == nil || err.Error() != tc.want {
			t.Errorf("%q: %v, want %s", tc.rows, err, tc.want)
		}
	}
}

// TestParseRows checks that ParseRows gives put every cell in reading order and reports put's
// refusal with its row.
func TestParseRows(t *testing.T) {
	var got []int
	err := ParseRows("t: room", []string{"ab", "cd"}, 2, 2, func(i int, ch byte) error {
		got = append(got, i, int(ch))
		return nil
	})
	if want := []int{Index(0, 0), 'a', Index(0, 1), 'b', Index(1, 0), 'c', Index(1, 1), 'd'}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("put got %v, %v; want %v", got, err, want)
	}
	border := errors.New("the border must be walls")
	err = ParseRows("t: room", []string{"##", "#."}, 2, 2, func(i int, ch byte) error {
		if ch != '#' {
			return border
		}
		return nil
	})
	if !errors.Is(err, border) || err.Error() != `t: room row 1 "#.": the border must be walls` {
		t.Errorf("refused cell: %v", err)
	}
}
