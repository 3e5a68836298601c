package keydoor

import (
	"strconv"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
)

// suiteOptions are the declarations of keydoor to the conformance suite: the four moves cover every
// transition, and invalid actions cost the default penalty.
func suiteOptions() []envtest.Option {
	return []envtest.Option{
		envtest.ActionSet("up", "down", "left", "right"),
		envtest.Penalty(DefaultConfig(DefaultSize).InvalidPenalty),
		envtest.Invalid("pick", "key", "open door", "up left"),
		envtest.MaxVocabulary(30),
	}
}

// TestConformance runs the envs conformance suite, expert checks included, on every size, and with
// the key left out of the state key, which the suite is told is aliasing on purpose.
func TestConformance(t *testing.T) {
	for size := MinSize; size <= MaxSize; size++ {
		t.Run("size"+strconv.Itoa(size), func(t *testing.T) {
			envtest.RunWithExpert(t, func() (envs.Env, error) { return New(DefaultConfig(size)) }, suiteOptions()...)
		})
	}
	t.Run("aliased", func(t *testing.T) {
		cfg := DefaultConfig(DefaultSize)
		cfg.KeyInState = false
		envtest.RunWithExpert(t, func() (envs.Env, error) { return New(cfg) }, append(suiteOptions(), envtest.Aliased())...)
	})
}

// FuzzKeyDoorStep fuzzes the action parser through the suite's fuzz target.
func FuzzKeyDoorStep(f *testing.F) {
	envtest.Fuzz(f, func() (envs.Env, error) { return New(DefaultConfig(DefaultSize)) }, suiteOptions()...)
}
