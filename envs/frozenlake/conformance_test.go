package frozenlake

import (
	"strconv"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
)

// suiteOptions are the declarations of the frozen lake to the conformance suite: the four moves are
// the actions, invalid actions cost the default penalty, and transitions are random.
func suiteOptions() []envtest.Option {
	return []envtest.Option{
		envtest.Actions("up", "down", "left", "right"),
		envtest.Penalty(DefaultConfig(DefaultSize).InvalidPenalty),
		envtest.Stochastic(),
		envtest.Invalid("slide", "up down", "hole"),
		envtest.MaxVocabulary(30),
	}
}

// TestConformance runs the envs conformance suite, expert checks included, on every size, and
// without slips, where the lake is deterministic and the suite's Bellman check of the distances
// applies.
func TestConformance(t *testing.T) {
	for size := MinSize; size <= MaxSize; size++ {
		t.Run("size"+strconv.Itoa(size), func(t *testing.T) {
			envtest.RunWithExpert(t, func() (envs.Env, error) { return New(DefaultConfig(size)) }, suiteOptions()...)
		})
	}
	t.Run("noslip", func(t *testing.T) {
		cfg := DefaultConfig(DefaultSize)
		cfg.Slip = 0
		envtest.RunWithExpert(t, func() (envs.Env, error) { return New(cfg) },
			envtest.ActionSet("up", "down", "left", "right"), envtest.Penalty(cfg.InvalidPenalty))
	})
}

// FuzzFrozenLakeStep fuzzes the action parser through the suite's fuzz target.
func FuzzFrozenLakeStep(f *testing.F) {
	envtest.Fuzz(f, func() (envs.Env, error) { return New(DefaultConfig(DefaultSize)) }, suiteOptions()...)
}
