package maze

import (
	"strconv"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
)

// suiteOptions are the declarations of the maze to the conformance suite: the four moves cover every
// transition, and invalid actions cost the default penalty.
func suiteOptions() []envtest.Option {
	return []envtest.Option{
		envtest.ActionSet("up", "down", "left", "right"),
		envtest.Penalty(DefaultConfig(DefaultSize).InvalidPenalty),
		envtest.MaxVocabulary(48),
	}
}

// TestConformance runs the envs conformance suite, expert checks included, on every grid size, and
// on the largest obstacle counts (more trap endings and dead ends).
func TestConformance(t *testing.T) {
	for size := MinSize; size <= MaxSize; size++ {
		t.Run("size"+strconv.Itoa(size), func(t *testing.T) {
			envtest.RunWithExpert(t, func() (envs.Env, error) { return New(DefaultConfig(size)) }, suiteOptions()...)
		})
	}
	t.Run("busy", func(t *testing.T) {
		cfg := DefaultConfig(6)
		cfg.Walls, cfg.Traps = maxWalls(6), maxTraps(6)
		envtest.RunWithExpert(t, func() (envs.Env, error) { return New(cfg) }, suiteOptions()...)
	})
}

// FuzzMazeConformance runs the suite's fuzz target on the default maze.
func FuzzMazeConformance(f *testing.F) {
	envtest.Fuzz(f, func() (envs.Env, error) { return New(DefaultConfig(DefaultSize)) }, suiteOptions()...)
}
