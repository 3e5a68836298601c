package host

import (
	"sync"
	"testing"

	"github.com/gomlx/gomlx/backends"

	"github.com/graftrl/graftrl/policy"
	"github.com/graftrl/graftrl/policy/spec"
)

// testBackend is one Go backend shared by the tests: the GoMLX policy is the reference the host
// engine is checked against.
var testBackend = sync.OnceValues(func() (backends.Backend, error) {
	return policy.NewBackend(policy.BackendOptions{Name: "go"})
})

// smallConfig is a two-layer model small enough for exhaustive checks.
func smallConfig() spec.Config {
	return spec.Config{Vocab: 11, DModel: 16, Layers: 2, Heads: 2, DFF: 32, MaxLen: 12, InitStd: 0.3}
}

// benchConfig is the quickstart's architecture with a 64-token vocabulary.
func benchConfig() spec.Config {
	c := spec.DefaultConfig()
	c.Vocab = 64
	return c
}

// newTestPolicy builds a GoMLX policy of architecture c with seed 7.
func newTestPolicy(t testing.TB, c spec.Config) *policy.Policy {
	t.Helper()
	return newSeededPolicy(t, c, 7)
}

func newSeededPolicy(t testing.TB, c spec.Config, seed uint64) *policy.Policy {
	t.Helper()
	b, err := testBackend()
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.New(b, policy.Options{Model: c, Loss: spec.DefaultLossConfig(), Optim: spec.DefaultOptimConfig(), Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// initialWeights returns the initial weights of a policy of architecture c built with seed.
func initialWeights(t testing.TB, c spec.Config, seed uint64) [][]float32 {
	t.Helper()
	w, err := newSeededPolicy(t, c, seed).Weights()
	if err != nil {
		t.Fatal(err)
	}
	return w
}
