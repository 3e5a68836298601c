package envtest

import (
	"testing"

	"github.com/graftrl/graftrl/envs"
)

// BenchmarkSteps measures episodes of the actions, cycled, on generated tasks, Resets included, as
// the rollout collector drives an env from newEnv; it reports steps per second. A new task every
// other episode, so that both task generation and the cached task are timed.
func BenchmarkSteps(b *testing.B, newEnv func() (envs.Env, error), actions ...string) {
	e, err := newEnv()
	if err != nil {
		b.Fatal(err)
	}
	seed := int64(0)
	if _, _, err := e.Reset(seed); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		obs, err := e.Step(actions[i%len(actions)])
		if err != nil {
			b.Fatal(err)
		}
		_ = e.StateKey()
		i++
		if obs.Over() {
			seed += int64(i & 1)
			if _, _, err := e.Reset(seed); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
}

// BenchmarkResets measures task generation for a new task seed on an env from newEnv.
func BenchmarkResets(b *testing.B, newEnv func() (envs.Env, error)) {
	e, err := newEnv()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	seed := int64(0)
	for b.Loop() {
		seed++
		if _, _, err := e.Reset(seed); err != nil {
			b.Fatal(err)
		}
	}
}
