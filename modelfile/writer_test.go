package modelfile

import (
	"encoding/binary"
	"math"
	"slices"
)

// The tests build their GGUF files byte by byte with ggufWriter, independently of the reader.

// kv is one metadata entry for ggufWriter: val is a Go scalar (uint8 … float64, bool, string),
// a slice of one, or arr for arrays of arrays.
type kv struct {
	key string
	val any
}

// arr is an array of arrays (or of anything given with an explicit element type).
type arr struct {
	elem ValueType
	vals []any
}

// tensorSpec is one tensor for ggufWriter: its raw data, written at the next aligned offset.
type tensorSpec struct {
	name string
	dims []uint64
	typ  TensorType
	data []byte
}

type ggufWriter struct {
	b []byte
}

func (w *ggufWriter) u32(v uint32) { w.b = binary.LittleEndian.AppendUint32(w.b, v) }
func (w *ggufWriter) u64(v uint64) { w.b = binary.LittleEndian.AppendUint64(w.b, v) }
func (w *ggufWriter) str(s string) { w.u64(uint64(len(s))); w.b = append(w.b, s...) }

// typeOf is the GGUF type of a Go value as ggufWriter writes it.
func typeOf(v any) ValueType {
	switch v.(type) {
	case uint8, []uint8:
		return TypeUint8
	case int8, []int8:
		return TypeInt8
	case uint16, []uint16:
		return TypeUint16
	case int16, []int16:
		return TypeInt16
	case uint32, []uint32:
		return TypeUint32
	case int32, []int32:
		return TypeInt32
	case float32, []float32:
		return TypeFloat32
	case bool, []bool:
		return TypeBool
	case string, []string:
		return TypeString
	case uint64, []uint64:
		return TypeUint64
	case int64, []int64:
		return TypeInt64
	case float64, []float64:
		return TypeFloat64
	}
	return TypeArray
}

// value writes v's payload (without its type).
func (w *ggufWriter) value(v any) {
	le := binary.LittleEndian
	switch x := v.(type) {
	case uint8:
		w.b = append(w.b, x)
	case int8:
		w.b = append(w.b, byte(x))
	case uint16:
		w.b = le.AppendUint16(w.b, x)
	case int16:
		w.b = le.AppendUint16(w.b, uint16(x))
	case uint32:
		w.u32(x)
	case int32:
		w.u32(uint32(x))
	case float32:
		w.u32(math.Float32bits(x))
	case bool:
		if x {
			w.b = append(w.b, 1)
		} else {
			w.b = append(w.b, 0)
		}
	case string:
		w.str(x)
	case uint64:
		w.u64(x)
	case int64:
		w.u64(uint64(x))
	case float64:
		w.u64(math.Float64bits(x))
	case arr:
		w.u32(uint32(x.elem))
		w.u64(uint64(len(x.vals)))
		for _, e := range x.vals {
			w.value(e)
		}
	default: // a slice of scalars
		var elems []any
		switch s := v.(type) {
		case []uint8:
			elems = anys(s)
		case []int8:
			elems = anys(s)
		case []uint16:
			elems = anys(s)
		case []int16:
			elems = anys(s)
		case []uint32:
			elems = anys(s)
		case []int32:
			elems = anys(s)
		case []float32:
			elems = anys(s)
		case []bool:
			elems = anys(s)
		case []string:
			elems = anys(s)
		case []uint64:
			elems = anys(s)
		case []int64:
			elems = anys(s)
		case []float64:
			elems = anys(s)
		default:
			panic("ggufWriter: unsupported value")
		}
		w.value(arr{typeOf(v), elems})
	}
}

func anys[T any](s []T) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// buildGGUF writes a complete file: header, metadata, tensor directory, padding to align, and
// each tensor's data at the next multiple of align (the reader's default is 32 when align is 0
// and no general.alignment is given).
func buildGGUF(version uint32, meta []kv, tensors []tensorSpec, align int) []byte {
	if align == 0 {
		align = DefaultAlignment
	}
	w := &ggufWriter{}
	w.b = append(w.b, "GGUF"...)
	w.u32(version)
	w.u64(uint64(len(tensors)))
	w.u64(uint64(len(meta)))
	for _, e := range meta {
		w.str(e.key)
		if _, nested := e.val.(arr); nested || isSlice(e.val) {
			w.u32(uint32(TypeArray))
		} else {
			w.u32(uint32(typeOf(e.val)))
		}
		w.value(e.val)
	}
	var offsets []uint64
	off := 0
	for _, t := range tensors {
		offsets = append(offsets, uint64(off))
		off += len(t.data)
		off = (off + align - 1) / align * align
	}
	for i, t := range tensors {
		w.str(t.name)
		w.u32(uint32(len(t.dims)))
		for _, d := range t.dims {
			w.u64(d)
		}
		w.u32(uint32(t.typ))
		w.u64(offsets[i])
	}
	for len(w.b)%align != 0 {
		w.b = append(w.b, 0)
	}
	start := len(w.b)
	for i, t := range tensors {
		w.b = append(w.b, make([]byte, start+int(offsets[i])-len(w.b))...)
		w.b = append(w.b, t.data...)
	}
	return slices.Clip(w.b)
}

func isSlice(v any) bool {
	switch v.(type) {
	case []uint8, []int8, []uint16, []int16, []uint32, []int32, []float32, []bool, []string, []uint64, []int64, []float64:
		return true
	}
	return false
}
