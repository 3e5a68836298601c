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

// TestConformance runs the envs conformance suite, expert checks included, on every size, without
// slips, where the lake is deterministic and the suite's Bellman check of the distances applies,
// and on gymnasium's 4×4 map with its slips.
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
	for _, m := range []string{MapGymnasium4x4, MapGymnasium8x8} {
		t.Run("gymnasium"+m, func(t *testing.T) {
			cfg, err := ConfigFromOptions(envs.Options{"map": m, "slip_mode": SlipGymnasium, "max_turns": 100})
			if err != nil {
				t.Fatal(err)
			}
			// One map for every task seed: two seeds, so that the suite does not ask the tasks to differ.
			envtest.RunWithExpert(t, func() (envs.Env, error) { return New(cfg) }, append(suiteOptions(), envtest.Seeds(0, 1))...)
		})
	}
}

// FuzzFrozenLakeStep fuzzes the action parser through the suite's fuzz target.
func FuzzFrozenLakeStep(f *testing.F) {
	envtest.Fuzz(f, func() (envs.Env, error) { return New(DefaultConfig(DefaultSize)) }, suiteOptions()...)
}
