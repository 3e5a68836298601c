package envs

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Options are the configuration options of an environment: the keys of the YAML env section other
// than name, as decoded into generic values.
type Options map[string]any

// Decode sets the fields of dst, a pointer to a struct with yaml tags, from the options. Fields whose
// key is absent keep the value they had, so dst is filled with the env's defaults beforehand. Decoding
// is strict: an unknown key or a value of the wrong type is an *OptionError naming env, the key, the
// value and what is allowed; a number with a fractional part for an integer field is a wrong type
// (yaml.v3 alone would truncate it). yaml.v3's YAML 1.1 words for booleans (yes, no, on, off) are
// accepted for bool fields. Ranges are checked by each env after Decode (see CheckRange).
func (o Options) Decode(env string, dst any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("env %s: options decode into %T, want a pointer to a struct", env, dst)
	}
	fields := map[string]reflect.Type{}
	yamlFields(rv.Elem().Type(), fields)
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	// Sorted so that the first error reported does not depend on map order.
	slices.Sort(keys)
	for _, k := range keys {
		if _, ok := fields[k]; !ok {
			allowed := make([]string, 0, len(fields))
			for f := range fields {
				allowed = append(allowed, f)
			}
			slices.Sort(allowed)
			return &OptionError{Env: env, Key: k, Value: o[k], Allowed: strings.Join(allowed, ", ")}
		}
	}
	for _, k := range keys {
		// One key at a time, so that a type error is attributed to its key: yaml.v3 reports lines
		// of a document the user never wrote.
		v := o[k]
		typeErr := &OptionError{Env: env, Key: k, Value: v, Reason: "has the wrong type", Allowed: typeWord(fields[k])}
		if v == nil || fractionalForInt(v, fields[k]) {
			// yaml.v3 would silently leave the field alone on a null, and truncate 5.5 to 5.
			return typeErr
		}
		doc, err := yaml.Marshal(map[string]any{k: v})
		if err != nil {
			return typeErr
		}
		dec := yaml.NewDecoder(bytes.NewReader(doc))
		dec.KnownFields(true)
		if err := dec.Decode(dst); err != nil {
			return typeErr
		}
	}
	return nil
}

// fractionalForInt reports a number with a fractional part (or not finite) bound for an integer field.
func fractionalForInt(v any, t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
	default:
		return false
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Float32 && rv.Kind() != reflect.Float64 {
		return false
	}
	f := rv.Float()
	return f != math.Trunc(f) || math.IsInf(f, 0)
}

// yamlFields collects the keys yaml.v3 maps onto the fields of struct type t.
func yamlFields(t reflect.Type, into map[string]reflect.Type) {
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, flags, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(","+flags+",", ",inline,") && f.Type.Kind() == reflect.Struct {
			yamlFields(f.Type, into)
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		into[name] = f.Type
	}
}

// typeWord names the values a field of type t accepts, in the words of a config file rather than Go.
func typeWord(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "integers"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "non-negative integers"
	case reflect.Float32, reflect.Float64:
		return "numbers"
	case reflect.Bool:
		return "true, false"
	case reflect.String:
		return "strings"
	case reflect.Slice, reflect.Array:
		return "lists of " + typeWord(t.Elem())
	case reflect.Map, reflect.Struct:
		return "mappings"
	case reflect.Pointer:
		return typeWord(t.Elem())
	}
	return t.String()
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
//	env maze: option "size": 9 is out of range (allowed 5..7)
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
