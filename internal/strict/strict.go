// Package strict is graftrl's one decoder of configuration: it sets a struct from a YAML node
// (the run config, the sweep config) or from decoded values (an env's or an estimator's
// options), refusing what yaml.v3 alone would let through: an unknown key, a value of the wrong
// type, a number with a fraction (or an exponent) for an integer, a key given twice. Every
// refusal is an *Error naming the key's full path, the value as written and what is allowed.
// Ranges are checked after decoding, by the owner of the struct.
//
// Before anything is decoded, the shape of the input is bounded (Parse, Check, and DecodeMap
// for decoded values): mappings and lists nest at most MaxDepth levels, aliases repeat at most
// MaxAliasNodes nodes, and a file holds one document. Each refusal is a *ShapeError naming the
// line (or the key) and the limit; it costs a walk over what was parsed, since the cost of
// decoding can grow faster than the input.
package strict

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Error is a key the decoder refuses.
type Error struct {
	// Key is the key's full path: update.epochs, variants[0].label.
	Key string
	// Unknown says that the key itself is not allowed; Allowed then lists the keys that are.
	Unknown bool
	// Allowed are the keys allowed beside an unknown key, sorted.
	Allowed []string
	// Type is the Go type the key's value is decoded into (nil for an unknown key or a key
	// given twice); Words(Type) says what it accepts.
	Type reflect.Type
	msg  string
}

// Error formats the refusal as, for example,
//
//	unknown key "update.epochz" (allowed under update: aggregation, clip_high, …)
//	key "iterations": value "1.5" is not a valid integer
func (e *Error) Error() string { return e.msg }

// Decode sets the fields of dst, a pointer to a struct with yaml tags, from the mapping n.
// Keys that n leaves out keep the value dst had, so dst holds the defaults beforehand. A field
// whose type implements yaml.Unmarshaler reads its own value, and a yaml.Node field keeps the
// node as written. The tree is checked first (Check): a node tree parsed by other means than
// Parse is bounded as well before anything is decoded from it.
func Decode(n *yaml.Node, dst any) error {
	return DecodeAt(n, "", dst)
}

// DecodeAt is Decode for the mapping found at the key path (its errors name keys under it).
func DecodeAt(n *yaml.Node, path string, dst any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("strict: decode into %T, want a pointer to a struct", dst)
	}
	if err := Check(n, 0); err != nil {
		return err
	}
	return decodeStruct(n, rv.Elem(), path)
}

// DecodeMap is Decode for options decoded already (from YAML or JSON, or typed on a command
// line): one key at a time in sorted order, so that the first refusal does not depend on map
// order. A float with an integral value counts as an integer, since such a map keeps no trace
// of whether it was written 6 or 6.0; NaN and ±Inf are numbers but no integers. A value whose
// mappings and lists, the map itself counted, nest deeper than MaxDepth is a *ShapeError
// before anything is converted: the conversion goes through YAML text, whose indentation
// grows with the depth.
func DecodeMap(m map[string]any, dst any) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, k := range keys {
		if 1+valueDepth(reflect.ValueOf(m[k]), MaxDepth-1) > MaxDepth {
			return &ShapeError{Key: k, msg: fmt.Sprintf("key %q: mappings and lists nested deeper than %d levels (allowed at most %d, the options counting as the first)",
				k, MaxDepth, MaxDepth)}
		}
		v, err := node(m[k])
		if err != nil {
			return err
		}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, v)
	}
	return Decode(n, dst)
}

// node is the YAML node of a decoded value.
func node(v any) (*yaml.Node, error) {
	if f, ok := v.(float64); ok && f == math.Trunc(f) && !math.IsInf(f, 0) && math.Abs(f) < 1<<63 {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(int64(f), 10)}, nil
	}
	if v == nil {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	}
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return nil, err
	}
	return &n, nil
}

var unmarshaler = reflect.TypeFor[yaml.Unmarshaler]()

func decodeStruct(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.MappingNode {
		return refuse(path, v.Type(), "must be a mapping, got %s", got(n))
	}
	fields := map[string][]int{}
	collect(v.Type(), nil, fields)
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i].Value, n.Content[i+1]
		full := join(path, key)
		if seen[key] {
			return &Error{Key: full, msg: fmt.Sprintf("key %q appears twice", full)}
		}
		seen[key] = true
		index, ok := fields[key]
		if !ok {
			allowed := make([]string, 0, len(fields))
			for k := range fields {
				allowed = append(allowed, k)
			}
			slices.Sort(allowed)
			return &Error{Key: full, Unknown: true, Allowed: allowed,
				msg: fmt.Sprintf("unknown key %q (allowed %s: %s)", full, under(path), strings.Join(allowed, ", "))}
		}
		if err := decodeValue(val, v.FieldByIndex(index), full); err != nil {
			return err
		}
	}
	return nil
}

func decodeValue(n *yaml.Node, v reflect.Value, path string) error {
	t := v.Type()
	switch {
	case t == reflect.TypeFor[yaml.Node]():
		v.Set(reflect.ValueOf(*n))
		return nil
	case reflect.PointerTo(t).Implements(unmarshaler):
		if err := n.Decode(v.Addr().Interface()); err != nil {
			return &Error{Key: path, Type: t, msg: fmt.Sprintf("key %q: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))}
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		return decodeStruct(n, v, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return refuse(path, t, "must be a %s, got %s", oneWord(t), got(n))
		}
		s := reflect.MakeSlice(t, len(n.Content), len(n.Content))
		for i, item := range n.Content {
			if err := decodeValue(item, s.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	case reflect.Map, reflect.Interface:
		if err := n.Decode(v.Addr().Interface()); err != nil {
			return refuse(path, t, "value %s is not a valid %s", got(n), oneWord(t))
		}
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return refuse(path, t, "must be a %s, got %s", oneWord(t), got(n))
	}
	p := reflect.New(t)
	if n.ShortTag() == "!!null" || fraction(n, t) || n.Decode(p.Interface()) != nil {
		return refuse(path, t, "value %s is not a valid %s", got(n), oneWord(t))
	}
	v.Set(p.Elem())
	return nil
}

// fraction reports a number written with a fraction or an exponent (1.5, 2.0, 1e3) for an
// integer: yaml.v3 would truncate it silently.
func fraction(n *yaml.Node, t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return n.ShortTag() == "!!float"
	}
	return false
}

func refuse(path string, t reflect.Type, format string, args ...any) *Error {
	return &Error{Key: path, Type: t,
		msg: fmt.Sprintf("key %q: ", path) + fmt.Sprintf(format, args...)}
}

// got names a node in a message: a scalar by its value, else by its kind.
func got(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	if n.ShortTag() == "!!null" {
		return "null"
	}
	return strconv.Quote(n.Value)
}

// collect maps the keys of struct type t onto field indices, as yaml.v3 names them: the tag's
// name, else the field's name in lower case; inline structs add their keys.
func collect(t reflect.Type, prefix []int, out map[string][]int) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		index := append(slices.Clone(prefix), i)
		switch {
		case name == "-":
		case strings.Contains(","+opts+",", ",inline,") && f.Type.Kind() == reflect.Struct:
			collect(f.Type, index, out)
		case name == "":
			out[strings.ToLower(f.Name)] = index
		default:
			out[name] = index
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

var listIndex = regexp.MustCompile(`\[\d+\]`)

// under names the mapping a key is in for the list of allowed keys: "under update", "under
// variants" (for every item of the list), "at the top level".
func under(path string) string {
	if path == "" {
		return "at the top level"
	}
	return "under " + listIndex.ReplaceAllString(path, "")
}

// oneWord names the values of type t in the words of a config file: "integer", "boolean
// (true/false)", "list of strings".
func oneWord(t reflect.Type) string {
	if t == reflect.TypeFor[yaml.Node]() {
		return "value"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Bool:
		return "boolean (true/false)"
	case reflect.String:
		return "string"
	case reflect.Slice, reflect.Array:
		return "list of " + Words(t.Elem())
	case reflect.Map, reflect.Struct:
		return "mapping"
	}
	return t.String()
}

// Words names the values of type t in the plural: "integers", "true, false", "lists of
// numbers" (an env option's "allowed integers").
func Words(t reflect.Type) string {
	if t == reflect.TypeFor[yaml.Node]() {
		return "values"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true, false"
	case reflect.Slice, reflect.Array:
		return "lists of " + Words(t.Elem())
	case reflect.Pointer:
		return Words(t.Elem())
	case reflect.Map, reflect.Struct:
		return "mappings"
	case reflect.Interface:
		return "values"
	}
	return oneWord(t) + "s"
}
