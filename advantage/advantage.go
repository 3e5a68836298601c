// Package advantage is the registry of advantage estimators: each by name, with its options and
// their defaults, its one-line help and its constructor. The estimators live in grpo and graft,
// and each registers itself there (their register.go) with Register; advantage/all imports them.
// A config's estimator section is checked with Check and built once, with New.
package advantage

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/graftrl/graftrl/internal/strict"
	"github.com/graftrl/graftrl/rollout"
)

// Estimator turns a batch of trajectories into one advantage per step, plus named diagnostics.
type Estimator interface {
	Estimate(b *rollout.Batch) (rollout.Advantages, rollout.Diagnostics)
}

// Validator is an estimator's options struct: Validate reports the first option whose value is
// out of range.
type Validator interface {
	Validate() error
}

// Option is one option of a registered estimator: its config key and its default, as printed.
type Option struct {
	// Key is the option's key in the estimator section (its yaml name).
	Key string
	// Default is the option's default value, formatted with fmt.Sprint.
	Default string
}

// entry is a registered estimator, its typed options hidden behind check and build.
type entry struct {
	help string
	// groupRelative marks an estimator whose advantages compare a task's N rollouts with each
	// other: with tasks.group_size 1 it has nothing to compare and gives no signal.
	groupRelative bool
	options       []Option
	// check decodes the options over the defaults and validates them; build also constructs.
	check func(options map[string]any) error
	build func(options map[string]any) (Estimator, error)
}

// registry holds the estimators by name; Register fills it from the estimators' packages.
var registry = map[string]entry{}

// Register adds an estimator under name, with its one-line help, whether it is group-relative
// (it needs tasks.group_size ≥ 2: its advantages compare a task's rollouts with each other), its
// options struct O (yaml tags name the keys; defaults returns the defaults that a config's options
// are decoded over) and its constructor. It is called from an init function next to the
// estimator, and panics on an empty or repeated name.
func Register[O Validator](name, help string, groupRelative bool, defaults func() O, build func(O) (Estimator, error)) {
	if name == "" || defaults == nil || build == nil {
		panic("advantage: Register needs a name, defaults and a constructor")
	}
	if _, dup := registry[name]; dup {
		panic(fmt.Sprintf("advantage: estimator %q registered twice", name))
	}
	decode := func(options map[string]any) (O, error) {
		o := defaults()
		if err := strict.DecodeMap(options, &o); err != nil {
			return o, decodeError(name, options, err)
		}
		if err := o.Validate(); err != nil {
			return o, underEstimator(name, err)
		}
		return o, nil
	}
	registry[name] = entry{
		help:          help,
		groupRelative: groupRelative,
		options:       optionsOf(defaults()),
		check: func(options map[string]any) error {
			_, err := decode(options)
			return err
		},
		build: func(options map[string]any) (Estimator, error) {
			o, err := decode(options)
			if err != nil {
				return nil, err
			}
			est, err := build(o)
			if err != nil {
				return nil, underEstimator(name, err)
			}
			return est, nil
		},
	}
}

// OptionError is an estimator option refused: an unknown key, a value of the wrong type, or a
// value out of range (an estimator's Validate reports these with OutOfRange and NotAllowed). It
// names the key, the value and what is allowed, worded as internal/strict words a key of a
// config it refuses; Check and New give the key's path as a config has it (estimator.KEY):
//
//	unknown key "estimator.gama" (allowed under estimator: eps, gamma, lambda, …)
//	key "estimator.gamma": value "high" has the wrong type (allowed numbers)
//	key "estimator.gamma": value 1 is out of range (allowed (0, 1))
type OptionError struct {
	// Key is the option's key: its path in a config (estimator.gamma) from Check and New, the
	// key alone (gamma) from an estimator's Validate.
	Key string
	// Value is the value given (unused for an unknown key).
	Value any
	// Reason says what is wrong with the value ("is out of range"); empty for an unknown key.
	Reason string
	// Allowed says what is allowed: the keys beside an unknown key, else the values.
	Allowed string
}

// Error formats the refusal (see OptionError).
func (e *OptionError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("unknown key %q (allowed under %s: %s)", e.Key, keyParent(e.Key), e.Allowed)
	}
	return fmt.Sprintf("key %q: value %s %s (allowed %s)", e.Key, formatValue(e.Value), e.Reason, e.Allowed)
}

// OutOfRange is the error of an estimator's Validate for option key whose value is outside what
// is allowed ("(0, 1)", "finite numbers > 0").
func OutOfRange(key string, value any, allowed string) error {
	return &OptionError{Key: key, Value: value, Reason: "is out of range", Allowed: allowed}
}

// NotAllowed is the error of an estimator's Validate for option key whose value is none of the
// words allowed (`"path", "td" or "paper"`).
func NotAllowed(key string, value any, allowed string) error {
	return &OptionError{Key: key, Value: value, Reason: "is not allowed", Allowed: allowed}
}

// keyParent names the mapping a key path is in: estimator for estimator.gamma, the top level
// for a key alone.
func keyParent(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[:i]
	}
	return "the top level"
}

// formatValue writes a value as a config has it: strings quoted, so that a number given as text
// ("5") is told apart from a number, and no value as null.
func formatValue(v any) string {
	if v == nil {
		return "null"
	}
	if reflect.ValueOf(v).Kind() == reflect.String {
		return strconv.Quote(fmt.Sprint(v))
	}
	return fmt.Sprint(v)
}

// decodeError words a refusal of the strict decoder, whose key paths start at the options, as
// an *OptionError under estimator; an error of another kind names the estimator.
func decodeError(name string, options map[string]any, err error) error {
	var se *strict.Error
	if !errors.As(err, &se) {
		return fmt.Errorf("estimator %s: %w", name, err)
	}
	key, _, _ := strings.Cut(se.Key, ".")
	key, _, _ = strings.Cut(key, "[")
	if se.Unknown {
		return &OptionError{Key: "estimator." + key, Allowed: strings.Join(se.Allowed, ", ")}
	}
	return &OptionError{Key: "estimator." + key, Value: options[key], Reason: "has the wrong type", Allowed: strict.Words(se.Type)}
}

// underEstimator puts the key of an estimator's *OptionError under estimator, as a config has
// it; an error of another kind names the estimator.
func underEstimator(name string, err error) error {
	var oe *OptionError
	if !errors.As(err, &oe) {
		return fmt.Errorf("estimator %s: %w", name, err)
	}
	under := *oe
	under.Key = "estimator." + oe.Key
	return &under
}

// optionsOf lists the keys of an options struct (their yaml names) with the values it holds.
func optionsOf(defaults any) []Option {
	v := reflect.ValueOf(defaults)
	var out []Option
	for i := range v.NumField() {
		f := v.Type().Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || key == "-" {
			continue
		}
		if key == "" {
			key = strings.ToLower(f.Name)
		}
		out = append(out, Option{Key: key, Default: fmt.Sprint(v.Field(i).Interface())})
	}
	return out
}

// Names lists the registered estimators, sorted.
func Names() []string {
	return slices.Sorted(maps.Keys(registry))
}

// GroupRelative lists the estimators that need tasks.group_size ≥ 2: their advantages compare a
// task's rollouts with each other (grpo, drgrpo, gigpo, graphgpo).
func GroupRelative() []string {
	var names []string
	for _, n := range Names() {
		if registry[n].groupRelative {
			names = append(names, n)
		}
	}
	return names
}

// Help returns the one-line description of an estimator ("" for an unknown name).
func Help(name string) string { return registry[name].help }

// Options lists an estimator's options with their defaults, in the order of its options struct
// (nil for an unknown name).
func Options(name string) []Option { return slices.Clone(registry[name].options) }

// lookup finds a registered estimator, or words the unknown name as an error.
func lookup(name string) (entry, error) {
	e, ok := registry[name]
	if !ok {
		return e, fmt.Errorf("estimator.name: unknown estimator %q (allowed: %s)", name, strings.Join(Names(), ", "))
	}
	return e, nil
}

// Check reports whether the named estimator accepts its config options (the estimator section
// without name), without building it: the name is registered, the options decode strictly
// (internal/strict) over the estimator's defaults, and their values are in range. Its errors are
// those of New.
func Check(name string, options map[string]any) error {
	e, err := lookup(name)
	if err != nil {
		return err
	}
	return e.check(options)
}

// New builds the named estimator from its config options (the estimator section without name),
// decoded strictly (internal/strict) over the estimator's defaults. Unknown names, unknown keys and
// bad values are errors naming the key and what is allowed.
func New(name string, options map[string]any) (Estimator, error) {
	e, err := lookup(name)
	if err != nil {
		return nil, err
	}
	return e.build(options)
}
