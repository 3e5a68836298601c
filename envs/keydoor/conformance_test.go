package keydoor

import (
	"strconv"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
	"github.com/graftrl/graftrl/envs/grid/gridtest"
)

// suiteOptions are the declarations of keydoor of the given size to the conformance suite: the four
// moves cover every transition, invalid actions cost the default penalty, and the vocabulary is at
// most 30 words, 38 from size 8 on (the position words r7..r10 and c7..c10).
func suiteOptions(size int) []envtest.Option {
	maxVocab := 30
	if size > smallSize {
		maxVocab += 8
	}
	return append(gridtest.MoveOptions(DefaultConfig(DefaultSize).InvalidPenalty),
		envtest.Invalid("pick", "key", "open door", "up left"),
		envtest.MaxVocabulary(maxVocab))
}

// TestConformance runs the envs conformance suite, expert checks included, on every size, and with
// the key left out of the state key, which the suite is told is aliasing on purpose.
func TestConformance(t *testing.T) {
	for size := MinSize; size <= MaxSize; size++ {
		t.Run("size"+strconv.Itoa(size), func(t *testing.T) {
			envtest.RunWithExpert(t, func() (envs.Env, error) { return New(DefaultConfig(size)) }, suiteOptions(size)...)
		})
	}
	t.Run("aliased", func(t *testing.T) {
		cfg := DefaultConfig(DefaultSize)
		cfg.KeyInState = false
		envtest.RunWithExpert(t, func() (envs.Env, error) { return New(cfg) }, append(suiteOptions(DefaultSize), envtest.Aliased())...)
	})
}

// TestConformanceLargeSizes runs the suite at the sizes of the long-horizon studies, 9 and 11, with
// the most extra walls, with the largest per-task cap (turn_cap_factor 3) and with the key left
// out of the state key.
func TestConformanceLargeSizes(t *testing.T) {
	for _, size := range []int{9, MaxSize} {
		walled := DefaultConfig(size)
		walled.Walls = maxWalls(size)
		capped := DefaultConfig(size)
		capped.TurnCapFactor = 3
		aliased := DefaultConfig(size)
		aliased.KeyInState = false
		for name, cfg := range map[string]Config{"walled": walled, "turncap": capped} {
			t.Run(name+strconv.Itoa(size), func(t *testing.T) {
				envtest.RunWithExpert(t, func() (envs.Env, error) { return New(cfg) }, suiteOptions(size)...)
			})
		}
		t.Run("aliased"+strconv.Itoa(size), func(t *testing.T) {
			envtest.RunWithExpert(t, func() (envs.Env, error) { return New(aliased) }, append(suiteOptions(size), envtest.Aliased())...)
		})
	}
}

// FuzzKeyDoorStep fuzzes the action parser through the suite's fuzz target.
func FuzzKeyDoorStep(f *testing.F) {
	envtest.Fuzz(f, func() (envs.Env, error) { return New(DefaultConfig(DefaultSize)) }, suiteOptions(DefaultSize)...)
}
