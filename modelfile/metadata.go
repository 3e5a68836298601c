package modelfile

import (
	"fmt"
	"slices"
)

// ValueType is the type of a GGUF metadata value, as the file numbers it.
type ValueType uint32

// The metadata value types of GGUF.
const (
	TypeUint8 ValueType = iota
	TypeInt8
	TypeUint16
	TypeInt16
	TypeUint32
	TypeInt32
	TypeFloat32
	TypeBool
	TypeString
	TypeArray
	TypeUint64
	TypeInt64
	TypeFloat64
)

var valueTypeNames = [...]string{"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool", "string", "array", "uint64", "int64", "float64"}

// String is the type's name ("uint32", "array"), or "type N" for a number GGUF does not define.
func (t ValueType) String() string {
	if int(t) < len(valueTypeNames) {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("type %d", uint32(t))
}

// size is the encoded size of a scalar of type t, 0 for strings and arrays (variable) and for
// unknown types.
func (t ValueType) size() int64 {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	}
	return 0
}

// Value is one metadata value: a scalar, a string, or an array whose elements all have one type
// (arrays of arrays included).
type Value struct {
	typ  ValueType
	elem ValueType // the elements' type, for an array
	v    any
}

// Type is the value's type (TypeArray for an array).
func (v Value) Type() ValueType { return v.typ }

// ElemType is the type of an array's elements; for any other value it is the value's type.
func (v Value) ElemType() ValueType {
	if v.typ == TypeArray {
		return v.elem
	}
	return v.typ
}

// Any is the value as Go holds it: uint8, int8, uint16, int16, uint32, int32, float32, bool,
// string, uint64, int64 or float64 for a scalar; for an array, a slice of one of these, or
// []Value for an array of arrays.
func (v Value) Any() any { return v.v }

// TypeName describes the value's type for messages: "uint32", "array of string", "array of
// array of int32" (nested arrays by their first element).
func (v Value) TypeName() string {
	if v.typ != TypeArray {
		return v.typ.String()
	}
	if v.elem == TypeArray {
		if a, _ := v.v.([]Value); len(a) > 0 {
			return "array of " + a[0].TypeName()
		}
		return "array of array"
	}
	return "array of " + v.elem.String()
}

// Keys are the metadata keys in the order of the file.
func (g *GGUF) Keys() []string { return slices.Clone(g.keys) }

// Value is the metadata value of key, and whether the file has it.
func (g *GGUF) Value(key string) (Value, bool) {
	v, ok := g.meta[key]
	return v, ok
}

// String is the metadata value of key, which must be a string.
func (g *GGUF) String(key string) (string, error) { return metaScalar[string](g, key, TypeString) }

// Uint32 is the metadata value of key, which must be a uint32.
func (g *GGUF) Uint32(key string) (uint32, error) { return metaScalar[uint32](g, key, TypeUint32) }

// Float32 is the metadata value of key, which must be a float32.
func (g *GGUF) Float32(key string) (float32, error) {
	return metaScalar[float32](g, key, TypeFloat32)
}

// Strings is the metadata value of key, which must be an array of strings (the vocabulary, the
// BPE merges).
func (g *GGUF) Strings(key string) ([]string, error) {
	return metaArray[string](g, key, TypeString)
}

// Float32s is the metadata value of key, which must be an array of float32 (token scores).
func (g *GGUF) Float32s(key string) ([]float32, error) {
	return metaArray[float32](g, key, TypeFloat32)
}

// Int32s is the metadata value of key, which must be an array of int32 (token types).
func (g *GGUF) Int32s(key string) ([]int32, error) { return metaArray[int32](g, key, TypeInt32) }

func metaScalar[T any](g *GGUF, key string, want ValueType) (T, error) {
	var zero T
	v, err := g.lookup(key)
	if err != nil {
		return zero, err
	}
	if v.typ != want {
		return zero, fmt.Errorf("%s: metadata key %q is %s, not %s", g.name, key, v.TypeName(), want)
	}
	return v.v.(T), nil
}

// metaArray returns the file's slice itself (not a copy): a vocabulary is large, and the
// accessors' callers build their own structures from it.
func metaArray[T any](g *GGUF, key string, want ValueType) ([]T, error) {
	v, err := g.lookup(key)
	if err != nil {
		return nil, err
	}
	if v.typ != TypeArray || v.elem != want {
		return nil, fmt.Errorf("%s: metadata key %q is %s, not array of %s", g.name, key, v.TypeName(), want)
	}
	return v.v.([]T), nil
}

func (g *GGUF) lookup(key string) (Value, error) {
	v, ok := g.meta[key]
	if !ok {
		return Value{}, fmt.Errorf("%s: metadata key %q is not in the file (it has %d keys)", g.name, key, len(g.keys))
	}
	return v, nil
}
