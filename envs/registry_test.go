package envs

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// fakeEnv is the least Env the registry can hand out.
type fakeEnv struct{ opts Options }

func (fakeEnv) Reset(int64) (string, Observation, error) { return "", Observation{}, nil }
func (fakeEnv) Step(string) (Observation, error)         { return Observation{}, nil }
func (fakeEnv) StateKey() string                         { return "" }
func (fakeEnv) Vocabulary() []string                     { return nil }
func (fakeEnv) MaxTurns() int                            { return 1 }

var errFake = errors.New("env zz-fake-b: bad")

// Registered once per test binary: Register panics on a duplicate, so a test function (which -count
// may run twice) cannot do it.
func init() {
	Register(Spec{Name: "zz-fake-b", New: func(Options) (Env, error) { return nil, errFake }})
	Register(Spec{Name: "zz-fake-a", New: func(o Options) (Env, error) { return fakeEnv{o}, nil }})
	Register(Spec{Name: "zz-fake-closer", New: func(Options) (Env, error) { closerBuilt++; return closerEnv{}, nil }})
	Register(Spec{Name: "zz-fake-remote", New: func(Options) (Env, error) { panic("New called by CheckOptions") },
		Check: func(o Options) error {
			if o["url"] == nil {
				return errors.New("env zz-fake-remote: url is missing")
			}
			return nil
		}})
}

// closerEnv counts its Close calls.
type closerEnv struct{ fakeEnv }

var closerBuilt, closerClosed int

func (closerEnv) Close() error { closerClosed++; return nil }

// CheckOptions uses a Spec's Check and never its New when it has one; without, it builds an
// instance and closes it.
func TestCheckOptions(t *testing.T) {
	if err := CheckOptions("zz-fake-remote", Options{"url": "ws://x"}); err != nil {
		t.Fatal(err)
	}
	if err := CheckOptions("zz-fake-remote", nil); err == nil || !strings.Contains(err.Error(), "url") {
		t.Fatalf("missing url: %v", err)
	}
	if err := CheckOptions("zz-fake-b", nil); !errors.Is(err, errFake) {
		t.Fatalf("a constructor error: %v", err)
	}
	if err := CheckOptions("zz-nope", nil); err == nil || !strings.Contains(err.Error(), "unknown environment") {
		t.Fatalf("unknown env: %v", err)
	}
	closerBuilt, closerClosed = 0, 0
	if err := CheckOptions("zz-fake-closer", nil); err != nil || closerBuilt != 1 || closerClosed != 1 {
		t.Fatalf("err %v, built %d, closed %d: want one instance, closed", err, closerBuilt, closerClosed)
	}
	if err := Close(nil); err != nil {
		t.Fatal(err)
	}
}

func TestNames(t *testing.T) {
	names := Names()
	if !slices.IsSorted(names) {
		t.Errorf("Names() = %v, not sorted", names)
	}
	ia, ib := slices.Index(names, "zz-fake-a"), slices.Index(names, "zz-fake-b")
	if ia < 0 || ib != ia+1 {
		t.Errorf("Names() = %v, want zz-fake-a then zz-fake-b", names)
	}
}

func TestLookup(t *testing.T) {
	s, err := Lookup("zz-fake-a")
	if err != nil || s.Name != "zz-fake-a" {
		t.Fatalf("Lookup(zz-fake-a) = %+v, %v", s, err)
	}
	for _, name := range []string{"zz-fake", "ZZ-FAKE-A", "", "zz-fake-a "} {
		_, err := Lookup(name)
		if err == nil {
			t.Errorf("Lookup(%q): no error", name)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, `"`+name+`"`) || !strings.Contains(msg, "zz-fake-a, zz-fake-b") {
			t.Errorf("Lookup(%q) error %q should name the env and list the registered ones", name, msg)
		}
	}
}

func TestNew(t *testing.T) {
	opts := Options{"k": 1}
	e, err := New("zz-fake-a", opts)
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := e.(fakeEnv); !ok || f.opts["k"] != 1 {
		t.Errorf("New passed %+v, want the options", e)
	}
	if _, err := New("zz-fake-b", nil); err != errFake {
		t.Errorf("New(zz-fake-b) error %v, want the constructor's error unwrapped", err)
	}
	if _, err := New("nope", nil); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("New(nope) error %v", err)
	}
}

func TestRegisterPanics(t *testing.T) {
	for _, s := range []Spec{
		{Name: "zz-fake-a", New: func(Options) (Env, error) { return nil, nil }},
		{Name: "", New: func(Options) (Env, error) { return nil, nil }},
		{Name: "zz-fake-c"},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q) did not panic", s.Name)
				}
			}()
			Register(s)
		}()
	}
}

// Constructor passes the parsed options to the builder, and an error of either step comes back
// with a nil Env, not a typed nil.
func TestConstructor(t *testing.T) {
	type cfg struct{ n int }
	parse := func(o Options) (cfg, error) {
		n, _ := o["n"].(int)
		if n < 0 {
			return cfg{}, errors.New("n < 0")
		}
		return cfg{n}, nil
	}
	build := func(c cfg) (*fakeEnv, error) {
		if c.n == 0 {
			return nil, errors.New("n = 0")
		}
		return &fakeEnv{}, nil
	}
	newEnv := Constructor(parse, build)
	if e, err := newEnv(Options{"n": 2}); err != nil || e == nil {
		t.Fatalf("n = 2: %v, %v", e, err)
	}
	for _, n := range []int{-1, 0} {
		if e, err := newEnv(Options{"n": n}); err == nil || e != nil {
			t.Errorf("n = %d: env %#v, error %v; want nil and an error", n, e, err)
		}
	}
}
