package grid

import "testing"

func TestParseDirection(t *testing.T) {
	tests := []struct {
		text string
		want Direction
		ok   bool
	}{
		{"up", Up, true},
		{"down", Down, true},
		{"left", Left, true},
		{"right", Right, true},
		{"UP", Up, true},
		{"Right", Right, true},
		{"  dOwN \n", Down, true},
		{"\tleft", Left, true},
		{"", 0, false},
		{"   ", 0, false},
		{"up up", 0, false},
		{"upp", 0, false},
		{"u p", 0, false},
		{"up.", 0, false},
		{"north", 0, false},
		{"rightt", 0, false},
		{"left\tright", 0, false},
		{"\x00up", 0, false},
		{"ｕｐ", 0, false},       // fullwidth letters
		{"\u212aup", 0, false}, // Kelvin sign, which Unicode folds to k
		{"ŭp", 0, false},
		{"🙂", 0, false},
		{"\xff\xfe", 0, false},
		{"invalid", 0, false},
		{"goal", 0, false},
	}
	for _, tc := range tests {
		d, ok := ParseDirection(tc.text)
		if ok != tc.ok || (ok && d != tc.want) {
			t.Errorf("ParseDirection(%q) = %v, %v; want %v, %v", tc.text, d, ok, tc.want, tc.ok)
		}
	}
}

func TestWordsAndKeys(t *testing.T) {
	if RowWord(0) != "r0" || RowWord(6) != "r6" || ColWord(3) != "c3" || CellKey(2, 5) != "r2c5" || CellKey(6, 6) != "r6c6" {
		t.Fatalf("RowWord(0)=%q RowWord(6)=%q ColWord(3)=%q CellKey(2,5)=%q CellKey(6,6)=%q",
			RowWord(0), RowWord(6), ColWord(3), CellKey(2, 5), CellKey(6, 6))
	}
	for d := range NumDirections {
		if got, ok := ParseDirection(d.Word()); !ok || got != d {
			t.Fatalf("ParseDirection(%q) = %v, %v", d.Word(), got, ok)
		}
	}
}

func TestRender(t *testing.T) {
	got := Render(2, func(r, c int) byte { return "ab"[c] + byte(2*r) })
	if want := "   0 1\nr0 a b\nr1 c d\n"; got != want {
		t.Fatalf("Render = %q, want %q", got, want)
	}
}
