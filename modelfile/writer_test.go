package modelfile

import "slices"

// The reader's tests build their files with buildGGUF: the metadata through WriteGGUF's encoder
// (whose bytes TestGGUFValueBytes pins by hand), the tensor directory and data by hand. The
// directory stays hand-built because the tests need what WriteGGUF does not write: tensors of
// every type as raw blocks, version 2, no padding after the last tensor (so that every prefix
// of a file is a truncation), and the damage the reader must refuse (keys and tensors given
// twice, a bad general.alignment, arrays nested too deep, impossible dimensions).

// kv is one metadata entry for buildGGUF: val is a Go scalar (uint8 … float64, bool, string), a
// slice of one, or arr for arrays of arrays.
type kv struct {
	key string
	val any
}

// arr is an array of arrays (or of anything given with an explicit element type).
type arr struct {
	elem ValueType
	vals []any
}

// tensorSpec is one tensor for buildGGUF: its raw data, written at the next aligned offset.
type tensorSpec struct {
	name string
	dims []uint64
	typ  TensorType
	data []byte
}

// toValue is a kv's value as the encoder takes it: an arr becomes a Value, nested arrs too.
func toValue(v any) Value {
	if a, ok := v.(arr); ok {
		if a.elem != TypeArray {
			return Value{typ: TypeArray, elem: a.elem, v: a.vals}
		}
		vals := make([]Value, len(a.vals))
		for i, x := range a.vals {
			vals[i] = toValue(x)
		}
		return Value{typ: TypeArray, elem: TypeArray, v: vals}
	}
	val, err := valueOf(v)
	if err != nil {
		panic(err)
	}
	return val
}

// toKVs is meta as WriteGGUF takes it.
func toKVs(meta []kv) []KV {
	out := make([]KV, len(meta))
	for i, m := range meta {
		out[i] = KV{Key: m.key, Value: toValue(m.val)}
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
	e := &ggufEncoder{}
	e.b = append(e.b, "GGUF"...)
	e.u32(version)
	e.u64(uint64(len(tensors)))
	e.u64(uint64(len(meta)))
	for _, m := range meta {
		if err := e.kv(m.key, toValue(m.val)); err != nil {
			panic(err)
		}
	}
	var offsets []uint64
	off := 0
	for _, t := range tensors {
		offsets = append(offsets, uint64(off))
		off += len(t.data)
		off = (off + align - 1) / align * align
	}
	for i, t := range tensors {
		e.str(t.name)
		e.u32(uint32(len(t.dims)))
		for _, d := range t.dims {
			e.u64(d)
		}
		e.u32(uint32(t.typ))
		e.u64(offsets[i])
	}
	e.pad(int64(align))
	start := len(e.b)
	for i, t := range tensors {
		e.b = append(e.b, make([]byte, start+int(offsets[i])-len(e.b))...)
		e.b = append(e.b, t.data...)
	}
	return slices.Clip(e.b)
}
