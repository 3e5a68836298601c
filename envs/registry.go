package envs

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Lookup returns the registered environment of the given name. The error of an unknown name lists
// the registered ones, since the usual cause is a typo in a config or a missing import of envs/all.
func Lookup(name string) (Spec, error) {
	s, ok := registry[name]
	if !ok {
		known := "none; is envs/all imported?"
		if names := Names(); len(names) > 0 {
			known = strings.Join(names, ", ")
		}
		return Spec{}, fmt.Errorf("envs: unknown environment %q (registered: %s)", name, known)
	}
	return s, nil
}

// Names returns the registered environment names in sorted order.
func Names() []string {
	return slices.Sorted(maps.Keys(registry))
}

// New builds an instance of the named environment from its configuration options.
func New(name string, opts Options) (Env, error) {
	s, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	// Spec.New errors already name the env and the key (see OptionError), so they are not wrapped again.
	return s.New(opts)
}

// CheckOptions checks the configuration options of the named environment without I/O: through
// its Spec's Check when it has one, else by building an instance and closing it again.
func CheckOptions(name string, opts Options) error {
	s, err := Lookup(name)
	if err != nil {
		return err
	}
	if s.Check != nil {
		return s.Check(opts)
	}
	e, err := s.New(opts)
	if err != nil {
		return err
	}
	return Close(e)
}

// Constructor makes a Spec.New from an environment's two steps: parse, which reads and checks
// the options, and build, which makes the instance. An error of either is returned with a nil
// Env (never a typed nil inside the interface).
func Constructor[C any, E Env](parse func(Options) (C, error), build func(C) (E, error)) func(Options) (Env, error) {
	return func(opts Options) (Env, error) {
		cfg, err := parse(opts)
		if err != nil {
			return nil, err
		}
		e, err := build(cfg)
		if err != nil {
			return nil, err
		}
		return e, nil
	}
}
