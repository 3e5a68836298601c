package envs

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/graftrl/graftrl/internal/strict"
)

// Options are the configuration options of an environment: the keys of the YAML env section other
// than name, as decoded into generic values.
type Options map[string]any

// Decode sets the fields of dst, a pointer to a struct with yaml tags, from the options. Fields whose
// key is absent keep the value they had, so dst is filled with the env's defaults beforehand. Decoding
// is strict (internal/strict): an unknown key or a value of the wrong type is an *OptionError naming
// env, the key, the value and what is allowed; a number with a fractional part for an integer field
// is a wrong type. yaml.v3's YAML 1.1 words for booleans (yes, no, on, off) are accepted for bool
// fields. Ranges are checked by each env after Decode (see CheckRange).
func (o Options) Decode(env string, dst any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("env %s: options decode into %T, want a pointer to a struct", env, dst)
	}
	err := strict.DecodeMap(o, dst)
	var se *strict.Error
	if !errors.As(err, &se) {
		var shape *strict.ShapeError
		if errors.As(err, &shape) {
			return fmt.Errorf("env %s: %w", env, err)
		}
		return err
	}
	key, _, _ := strings.Cut(se.Key, ".")
	key, _, _ = strings.Cut(key, "[")
	if se.Unknown {
		return &OptionError{Env: env, Key: key, Value: o[key], Allowed: strings.Join(se.Allowed, ", ")}
	}
	return &OptionError{Env: env, Key: key, Value: o[key], Reason: "has the wrong type", Allowed: strict.Words(se.Type)}
}

// OptionError reports an environment option that is unknown or has a value that is not allowed.
type OptionError struct {
	// Env is the environment name.
	Env string
	// Key is the option key as written in the config.
	Key string
	// Value is the value given for the key.
	Value any
	// Reason says what is wrong with the value ("is out of range"); empty for an unknown key.
	Reason string
	// Allowed says what would have been accepted: the known keys, a range, a type.
	Allowed string
}

// Error formats the error as, for example,
//
//	env maze: unknown option "szie" (allowed: size, traps, walls)
//	env maze: option "size": 12 is out of range (allowed 5..11)
func (e *OptionError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("env %s: unknown option %q (allowed: %s)", e.Env, e.Key, e.Allowed)
	}
	return fmt.Sprintf("env %s: option %q: %s %s (allowed %s)", e.Env, e.Key, formatValue(e.Value), e.Reason, e.Allowed)
}

// formatValue quotes strings so that a number given as text ("5") is told apart from a number.
func formatValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("%q", v)
	}
	return fmt.Sprint(v)
}

// CheckRange returns an *OptionError when v is outside [lo, hi] (NaN is outside every range), and
// nil otherwise. It is the check env validate functions run after Decode.
func CheckRange[T cmp.Ordered](env, key string, v, lo, hi T) error {
	if v >= lo && v <= hi {
		return nil
	}
	return &OptionError{Env: env, Key: key, Value: v, Reason: "is out of range", Allowed: fmt.Sprintf("%v..%v", lo, hi)}
}

// NoteAllowed appends note to the allowed values of err when it is an *OptionError (" for size 6"
// after a range that depends on the size), so that the message explains itself; it returns err.
func NoteAllowed(err error, note string) error {
	if oe, ok := err.(*OptionError); ok {
		oe.Allowed += note
	}
	return err
}

// CheckRewards checks the two reward options of an env: invalid_penalty in -1..0, then
// success_reward above 0 and at most 100. The errors are *OptionError naming the key.
func CheckRewards(env string, invalidPenalty, successReward float64) error {
	if err := CheckRange(env, "invalid_penalty", invalidPenalty, -1, 0); err != nil {
		return err
	}
	if !(successReward > 0 && successReward <= 100) {
		return &OptionError{Env: env, Key: "success_reward", Value: successReward,
			Reason: "is out of range", Allowed: "> 0 and <= 100"}
	}
	return nil
}

// PenaltyDoc documents the option invalid_penalty of default v: "per-step reward of an invalid
// <what>, -1..0".
func PenaltyDoc(v float64, what string) OptionDoc {
	return OptionDoc{Key: "invalid_penalty", Default: strconv.FormatFloat(v, 'g', -1, 64),
		Help: "per-step reward of an invalid " + what + ", -1..0"}
}

// SuccessDoc documents the option success_reward of default v: "outcome of <what>, > 0 and <= 100".
func SuccessDoc(v float64, what string) OptionDoc {
	return OptionDoc{Key: "success_reward", Default: strconv.FormatFloat(v, 'g', -1, 64),
		Help: "outcome of " + what + ", > 0 and <= 100"}
}
