package sokoban

import (
	"strconv"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
	"github.com/graftrl/graftrl/envs/grid/gridtest"
)

// suiteOptions are the declarations of sokoban to the conformance suite: the four moves cover every
// transition, and invalid actions cost the default penalty.
func suiteOptions() []envtest.Option {
	return append(gridtest.MoveOptions(DefaultConfig(DefaultSize, 1).InvalidPenalty),
		envtest.Invalid("push", "up left", "box", "target", "r2 c3"),
		envtest.MaxVocabulary(30))
}

// TestConformance runs the envs conformance suite, expert checks included, on every room size with
// one and two boxes.
func TestConformance(t *testing.T) {
	for boxes := 1; boxes <= MaxBoxes; boxes++ {
		for size := MinSize; size <= MaxSize; size++ {
			t.Run("boxes"+strconv.Itoa(boxes)+"size"+strconv.Itoa(size), func(t *testing.T) {
				envtest.RunWithExpert(t, func() (envs.Env, error) { return New(DefaultConfig(size, boxes)) }, suiteOptions()...)
			})
		}
	}
}

// FuzzSokobanStep fuzzes the action parser through the suite's fuzz target.
func FuzzSokobanStep(f *testing.F) {
	envtest.Fuzz(f, func() (envs.Env, error) { return New(DefaultConfig(DefaultSize, 1)) }, suiteOptions()...)
}
