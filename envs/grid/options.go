package grid

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/graftrl/graftrl/envs"
)

// MaxTurnsLimit caps max_turns of every grid env: the policy's context holds the whole episode, so
// longer caps only buy tokens spent wandering.
const MaxTurnsLimit = 100

// MaxTurnsDoc documents the max_turns option of a grid env: its defaults, and its lowest value, the
// length of the longest task.
func MaxTurnsDoc(defaults, lowest string) envs.OptionDoc {
	return envs.OptionDoc{Key: "max_turns", Default: defaults, Help: fmt.Sprintf("step cap, %s..%d", lowest, MaxTurnsLimit)}
}

// SizeNote appends " for size <size>" to the allowed values of an *envs.OptionError, for the options
// whose range depends on the grid side (see envs.NoteAllowed); it returns err.
func SizeNote(err error, size int) error {
	return envs.NoteAllowed(err, " for size "+strconv.Itoa(size))
}

// SizeDoc documents the size option of a grid env of sides lo..hi (default def) whose vocabulary
// holds the position words of sides up to covered and adds the rest from there (see Vocabulary).
func SizeDoc(def, lo, hi, covered int) envs.OptionDoc {
	return envs.OptionDoc{Key: "size", Default: strconv.Itoa(def),
		Help: fmt.Sprintf("side of the square grid, %d..%d (sizes %d..%d add r%d..r%d, c%d..c%d to the vocabulary)",
			lo, hi, covered+1, hi, covered, hi-1, covered, hi-1)}
}

// TurnCapDoc documents the turn_cap_factor option of a grid env.
func TurnCapDoc() envs.OptionDoc {
	return envs.OptionDoc{Key: "turn_cap_factor", Default: "0",
		Help: "step cap per task as a multiple of its optimal length, ⌈factor × length⌉ (0: max_turns for every task; replaces it)"}
}

// CheckTurns checks the step-cap options of env on grids of side size whose longest task takes
// longest moves: max_turns in longest..MaxTurnsLimit, so that every task stays solvable in time;
// and turn_cap_factor f, 0 (off) or at least 1 with the longest task's cap, ⌈f·longest⌉, at most
// MaxTurnsLimit turns, and not together with a max_turns other than its default for the size,
// defaultMaxTurns. The errors are *envs.OptionError naming the key.
func CheckTurns(env string, size, maxTurns, defaultMaxTurns int, f float64, longest int) error {
	const limit = MaxTurnsLimit
	if err := envs.CheckRange(env, "max_turns", maxTurns, longest, limit); err != nil {
		return SizeNote(err, size)
	}
	if f == 0 {
		return nil
	}
	if !(f >= 1 && TurnCap(f, longest) <= limit) {
		return &envs.OptionError{Env: env, Key: "turn_cap_factor", Value: f, Reason: "is out of range",
			Allowed: fmt.Sprintf("0 (off) or 1..%.3g for size %d (the longest task's cap at most %d turns)",
				float64(limit)/float64(longest), size, limit)}
	}
	if maxTurns != defaultMaxTurns {
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
