package all_test

import (
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
	_ "github.com/graftrl/graftrl/envs/all"
	"github.com/graftrl/graftrl/envs/envtest"
)

// remote are the registered envs that need a server to play: built with their defaults they must
// refuse, naming the missing url. envs/openenv plays them against graftrl's own server. (Named as
// a string: importing envs/openenv here would register it whatever all.go imports.)
var remote = map[string]bool{"openenv": true}

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
		if remote[name] {
			if _, err := envs.New(name, nil); err == nil || !strings.Contains(err.Error(), "url") {
				t.Errorf("%s with defaults: error %v, want one naming the missing url", name, err)
			}
			continue
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
}

// TestDocumentedEnvsAreRegistered holds the package comment's list of environments to the
// registry: every env it names is registered, and every registered env is named there.
func TestDocumentedEnvsAreRegistered(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "all.go", nil, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, m := range regexp.MustCompile(`(?m)^  - (\w+): `).FindAllStringSubmatch(f.Doc.Text(), -1) {
		documented = append(documented, m[1])
	}
	if len(documented) == 0 {
		t.Fatalf("the package comment lists no environment:\n%s", f.Doc.Text())
	}
	registered := envs.Names()
	for _, name := range documented {
		if !slices.Contains(registered, name) {
			t.Errorf("%s is documented in all.go but not registered (registered: %v)", name, registered)
		}
	}
	for _, name := range registered {
		if !slices.Contains(documented, name) {
			t.Errorf("%s is registered but missing from all.go's package comment (documented: %v)", name, documented)
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
		if remote[name] {
			continue // envs/openenv runs the suite through its client against graftrl's server
		}
		t.Run(name, func(t *testing.T) {
			opts := append([]envtest.Option{envtest.MaxVocabulary(60)}, declarations()[name]...)
			envtest.Run(t, func() (envs.Env, error) { return envs.New(name, nil) }, opts...)
		})
	}
}
