package all_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
	_ "github.com/graftrl/graftrl/envs/all"
	"github.com/graftrl/graftrl/envs/envtest"
)

// TestAllRegistersEveryEnv builds each registered env with its defaults and plays one step, so an env
// added to all.go with a broken default config fails here.
func TestAllRegistersEveryEnv(t *testing.T) {
	names := envs.Names()
	if len(names) == 0 {
		t.Fatal("no environment registered")
	}
	for _, name := range names {
		s, err := envs.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if s.Description == "" || len(s.Options) == 0 {
			t.Errorf("%s: spec without description or option docs", name)
		}
		e, err := envs.New(name, nil)
		if err != nil {
			t.Fatalf("%s with defaults: %v", name, err)
		}
		if _, _, err := e.Reset(0); err != nil {
			t.Fatalf("%s Reset: %v", name, err)
		}
		if _, err := e.Step(e.Vocabulary()[0]); err != nil {
			t.Fatalf("%s Step: %v", name, err)
		}
		if _, err := envs.New(name, envs.Options{"no_such_option": 1}); err == nil || !strings.Contains(err.Error(), "no_such_option") {
			t.Errorf("%s: unknown option error %v", name, err)
		}
	}
	for _, name := range []string{"maze", "sokoban", "keydoor", "frozenlake", "toolcalc", "shop"} {
		if !slices.Contains(names, name) {
			t.Errorf("%s is not registered", name)
		}
	}
}

// declarations are what the registered environments declare to the conformance suite with their
// default options; an env missing here is held to the strictest checks (deterministic, no aliasing).
func declarations() map[string][]envtest.Option {
	return map[string][]envtest.Option{
		"frozenlake": {envtest.Stochastic()},
	}
}

// TestConformance runs the envs conformance suite on every registered environment with its default
// options, as a config that names only the env would build it.
func TestConformance(t *testing.T) {
	for _, name := range envs.Names() {
		t.Run(name, func(t *testing.T) {
			opts := append([]envtest.Option{envtest.MaxVocabulary(60)}, declarations()[name]...)
			envtest.Run(t, func() (envs.Env, error) { return envs.New(name, nil) }, opts...)
		})
	}
}
