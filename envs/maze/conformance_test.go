package maze

import (
	"strconv"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
	"github.com/graftrl/graftrl/envs/grid/gridtest"
)

// suiteOptions are the declarations of a maze of the given size to the conformance suite: the four
// moves cover every transition, invalid actions cost the default penalty, and the vocabulary is at
// most 48 words, 56 from size 8 on (the position words r7..r10 and c7..c10).
func suiteOptions(size int) []envtest.Option {
	maxVocab := 48
	if size > smallSize {
		maxVocab += 8
	}
	return append(gridtest.MoveOptions(DefaultConfig(DefaultSize).InvalidPenalty),
		envtest.MaxVocabulary(maxVocab))
}

// TestConformance runs the envs conformance suite, expert checks included, on every grid size, and
// on the largest obstacle counts (more trap endings and dead ends).
func TestConformance(t *testing.T) {
	for size := MinSize; size <= MaxSize; size++ {
		t.Run("size"+strconv.Itoa(size), func(t *testing.T) {
			envtest.RunWithExpert(t, func() (envs.Env, error) { return New(DefaultConfig(size)) }, suiteOptions(size)...)
		})
	}
	t.Run("busy", func(t *testing.T) {
		cfg := DefaultConfig(6)
		cfg.Walls, cfg.Traps = maxWalls(6), maxTraps(6)
		envtest.RunWithExpert(t, func() (envs.Env, error) { return New(cfg) }, suiteOptions(6)...)
	})
}

// TestConformanceLargeSizes runs the suite at the sizes of the long-horizon studies, 9 and 11, with
// the largest obstacle counts, with every observation option on (the longest observations), and
// with the largest per-task cap (turn_cap_factor 3).
func TestConformanceLargeSizes(t *testing.T) {
	for _, size := range []int{9, MaxSize} {
		busy := DefaultConfig(size)
		busy.Walls, busy.Traps = maxWalls(size), maxTraps(size)
		wordy := DefaultConfig(size)
		wordy.Labelled, wordy.GoalHint = true, true
		capped := DefaultConfig(size)
		capped.TurnCapFactor = 3
		for _, tc := range []struct {
			name string
			cfg  Config
		}{{"busy", busy}, {"labelled", wordy}, {"turncap", capped}} {
			cfg := tc.cfg
			t.Run(tc.name+strconv.Itoa(size), func(t *testing.T) {
				envtest.RunWithExpert(t, func() (envs.Env, error) { return New(cfg) }, suiteOptions(size)...)
			})
		}
	}
}

// TestConformanceIdle runs the suite with the idle action look (idle_actions): the moves and look
// cover every transition, look is a self-loop that spends a turn (the suite's Idle check), with
// the fixed cap and with a per-task cap.
func TestConformanceIdle(t *testing.T) {
	for _, f := range []float64{0, 4} {
		cfg := DefaultConfig(7)
		cfg.IdleActions, cfg.Labelled, cfg.GoalHint, cfg.TurnCapFactor = true, true, true, f
		t.Run(strconv.FormatFloat(f, 'g', -1, 64), func(t *testing.T) {
			opts := append(suiteOptions(7), envtest.ActionSet("look"), envtest.MaxVocabulary(49))
			envtest.RunWithExpert(t, func() (envs.Env, error) { return New(cfg) }, opts...)
		})
	}
}

// FuzzMazeConformance runs the suite's fuzz target on the default maze.
func FuzzMazeConformance(f *testing.F) {
	envtest.Fuzz(f, func() (envs.Env, error) { return New(DefaultConfig(DefaultSize)) }, suiteOptions(DefaultSize)...)
}
