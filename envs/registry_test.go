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
