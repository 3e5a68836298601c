package grid

import (
	"testing"

	"github.com/graftrl/graftrl/envs"
)

// TestCheckTurns checks max_turns and turn_cap_factor on a side-5 grid whose longest task takes 8
// moves, with a limit of 100 turns and a default max_turns of 12.
func TestCheckTurns(t *testing.T) {
	for _, tc := range []struct {
		maxTurns int
		f        float64
		err      string
	}{
		{12, 0, ""},
		{8, 0, ""},
		{100, 0, ""},
		{7, 0, `env t: option "max_turns": 7 is out of range (allowed 8..100 for size 5)`},
		{101, 0, `env t: option "max_turns": 101 is out of range (allowed 8..100 for size 5)`},
		{12, 1, ""},
		{12, 12.5, ""},
		{12, 0.5, `env t: option "turn_cap_factor": 0.5 is out of range (allowed 0 (off) or 1..12.5 for size 5 (the longest task's cap at most 100 turns))`},
		{12, 12.6, `env t: option "turn_cap_factor": 12.6 is out of range (allowed 0 (off) or 1..12.5 for size 5 (the longest task's cap at most 100 turns))`},
		{20, 2, `env t: option "turn_cap_factor": 2 replaces max_turns (allowed one of max_turns and turn_cap_factor)`},
	} {
		err := CheckTurns("t", 5, tc.maxTurns, 12, tc.f, 8)
		if (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("max_turns %d, turn_cap_factor %g: %v, want %s", tc.maxTurns, tc.f, err, tc.err)
		}
	}
}

// TestOptionDocs checks the docs of the options grid envs share.
func TestOptionDocs(t *testing.T) {
	want := envs.OptionDoc{Key: "size", Default: "5", Help: "side of the square grid, 5..11 (sizes 8..11 add r7..r10, c7..c10 to the vocabulary)"}
	if got := SizeDoc(5, 5, 11, 7); got != want {
		t.Errorf("SizeDoc = %+v, want %+v", got, want)
	}
	if got := DefaultsBySize(5, 7, func(size int) int { return 2 * (size - 3) }); got != "4, 6, 8 (size 5..7)" {
		t.Errorf("DefaultsBySize = %q", got)
	}
}
