package modelfile

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"reflect"
)

// KV is one metadata entry for WriteGGUF. Value is either a Value, as a GGUF file read gives it
// (GGUF.Value; arrays of arrays included), or a Go value whose type is the GGUF type written:
// uint8, int8, uint16, int16, uint32, int32, float32, bool, string, uint64, int64 or float64 for
// a scalar of that type, and a slice of one of them for an array of it.
type KV struct {
	Key   string
	Value any
}

// GGUFTensor is a float32 tensor for WriteGGUF, written as F32.
type GGUFTensor struct {
	Name string
	// Dims are the dimensions in ggml's order, as in TensorInfo: the row length first, so a
	// matrix of R rows of C columns has Dims [C, R].
	Dims []int64
	// Data holds the product of Dims values, Dims[0] fastest.
	Data []float32
}

// WriteGGUF writes a GGUF file (version 3) to w: kvs in their order, then the tensor directory,
// then each tensor's data as F32 in the order given. The data section and each tensor's data
// start at a multiple of the alignment, and every tensor's data is padded to the next one (the
// last too, as gguf-py writes it). The alignment is general.alignment when kvs set it, else
// DefaultAlignment: the reader finds the data where the metadata says it is.
//
// Everything is checked before a byte is written to w, so that a refused write leaves w as it
// was: a key or tensor name given twice, a value of no GGUF type, a general.alignment that is not
// a uint32 power of two up to 1 MiB, and a tensor's dimensions (1 to 4, each at least 1) against
// its data's length.
func WriteGGUF(w io.Writer, kvs []KV, tensors []GGUFTensor) error {
	header, align, err := ggufHeader(kvs, tensors)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	if _, err := bw.Write(header); err != nil {
		return err
	}
	// The data is streamed in chunks: a model's tensors are too large to copy whole.
	const chunk = 1 << 14 // values
	buf := make([]byte, 4*chunk)
	for _, t := range tensors {
		for data := t.Data; len(data) > 0; {
			n := min(len(data), chunk)
			for i, v := range data[:n] {
				binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
			}
			if _, err := bw.Write(buf[:4*n]); err != nil {
				return err
			}
			data = data[n:]
		}
		n := 4 * int64(len(t.Data))
		if _, err := bw.Write(make([]byte, alignUp(n, align)-n)); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ggufHeader is everything of the file before the tensors' data (the header, the metadata, the
// tensor directory and the padding to the data section), and the alignment.
func ggufHeader(kvs []KV, tensors []GGUFTensor) ([]byte, int64, error) {
	values := make([]Value, len(kvs))
	seen := map[string]int{}
	for i, kv := range kvs {
		if j, dup := seen[kv.Key]; dup {
			return nil, 0, fmt.Errorf("gguf: metadata key %d: %q is also key %d", i, kv.Key, j)
		}
		seen[kv.Key] = i
		v, err := valueOf(kv.Value)
		if err != nil {
			return nil, 0, fmt.Errorf("gguf: metadata key %q: %w", kv.Key, err)
		}
		values[i] = v
	}
	align := int64(DefaultAlignment)
	if i, ok := seen["general.alignment"]; ok {
		a, isU32 := values[i].v.(uint32)
		if !isU32 || values[i].typ != TypeUint32 || a == 0 || a&(a-1) != 0 || a > maxAlignment {
			return nil, 0, fmt.Errorf("gguf: general.alignment is %v (%s); want a uint32 power of two from 1 to %d", values[i].v, values[i].TypeName(), maxAlignment)
		}
		align = int64(a)
	}
	if err := checkGGUFTensors(tensors); err != nil {
		return nil, 0, err
	}
	e := &ggufEncoder{}
	e.b = append(e.b, "GGUF"...)
	e.u32(3)
	e.u64(uint64(len(tensors)))
	e.u64(uint64(len(kvs)))
	for i, kv := range kvs {
		if err := e.kv(kv.Key, values[i]); err != nil {
			return nil, 0, fmt.Errorf("gguf: metadata key %q: %w", kv.Key, err)
		}
	}
	var off int64
	for _, t := range tensors {
		e.str(t.Name)
		e.u32(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			e.u64(uint64(d))
		}
		e.u32(uint32(F32))
		e.u64(uint64(off))
		off += alignUp(4*int64(len(t.Data)), align)
	}
	e.pad(align)
	return e.b, align, nil
}

// checkGGUFTensors refuses what the reader would: a name given twice, dimensions ggml has not,
// and dimensions that do not hold the data.
func checkGGUFTensors(tensors []GGUFTensor) error {
	seen := map[string]int{}
	for i, t := range tensors {
		if j, dup := seen[t.Name]; dup {
			return fmt.Errorf("gguf: tensor %d: name %q is also tensor %d's", i, t.Name, j)
		}
		seen[t.Name] = i
		if len(t.Dims) < 1 || len(t.Dims) > maxDims {
			return fmt.Errorf("gguf: tensor %q: %d dimensions (1 to %d allowed)", t.Name, len(t.Dims), maxDims)
		}
		n := int64(1)
		for j, d := range t.Dims {
			if d < 1 {
				return fmt.Errorf("gguf: tensor %q: dimension %d is %d; each must be at least 1", t.Name, j, d)
			}
			// Stop once past the data: the product of the rest could overflow.
			if n *= d; n > int64(len(t.Data)) {
				break
			}
		}
		if n != int64(len(t.Data)) {
			return fmt.Errorf("gguf: tensor %q: dimensions %v do not hold its %d values", t.Name, t.Dims, len(t.Data))
		}
	}
	return nil
}

// valueOf is v as a Value: v itself when it is one, else the Go scalar, or slice of scalars, as
// the GGUF type its Go type names.
func valueOf(v any) (Value, error) {
	if mv, ok := v.(Value); ok {
		return mv, nil
	}
	if t, ok := scalarType(v); ok {
		return Value{typ: t, v: v}, nil
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice {
		if t, ok := scalarType(reflect.Zero(rv.Type().Elem()).Interface()); ok {
			return Value{typ: TypeArray, elem: t, v: v}, nil
		}
	}
	return Value{}, fmt.Errorf("a Go value of type %T has no GGUF type (uint8, int8, uint16, int16, uint32, int32, float32, bool, string, uint64, int64, float64, a slice of one, or a modelfile.Value)", v)
}

// scalarType is the GGUF type of a Go scalar, and whether it has one.
func scalarType(x any) (ValueType, bool) {
	switch x.(type) {
	case uint8:
		return TypeUint8, true
	case int8:
		return TypeInt8, true
	case uint16:
		return TypeUint16, true
	case int16:
		return TypeInt16, true
	case uint32:
		return TypeUint32, true
	case int32:
		return TypeInt32, true
	case float32:
		return TypeFloat32, true
	case bool:
		return TypeBool, true
	case string:
		return TypeString, true
	case uint64:
		return TypeUint64, true
	case int64:
		return TypeInt64, true
	case float64:
		return TypeFloat64, true
	}
	return 0, false
}

// ggufEncoder appends GGUF's little-endian fields to b.
type ggufEncoder struct {
	b []byte
}

func (e *ggufEncoder) u32(v uint32) { e.b = binary.LittleEndian.AppendUint32(e.b, v) }
func (e *ggufEncoder) u64(v uint64) { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *ggufEncoder) str(s string) { e.u64(uint64(len(s))); e.b = append(e.b, s...) }

// pad appends zeros up to the next multiple of align.
func (e *ggufEncoder) pad(align int64) {
	n := int64(len(e.b))
	e.b = append(e.b, make([]byte, alignUp(n, align)-n)...)
}

// kv appends a metadata entry: the key, the value's type, the value.
func (e *ggufEncoder) kv(key string, v Value) error {
	e.str(key)
	e.u32(uint32(v.typ))
	return e.value(v)
}

// value appends v without its type: a scalar, or an array's element type, length and elements.
func (e *ggufEncoder) value(v Value) error {
	if v.typ != TypeArray {
		return e.scalar(v.typ, v.v)
	}
	rv := reflect.ValueOf(v.v)
	if rv.Kind() != reflect.Slice {
		return fmt.Errorf("an array of %s holds a Go %T, not a slice", v.elem, v.v)
	}
	e.u32(uint32(v.elem))
	e.u64(uint64(rv.Len()))
	for i := range rv.Len() {
		x := rv.Index(i).Interface()
		var err error
		if v.elem != TypeArray {
			err = e.scalar(v.elem, x)
		} else if a, ok := x.(Value); ok && a.typ == TypeArray {
			err = e.value(a)
		} else {
			err = fmt.Errorf("a Go %T is not an array", x)
		}
		if err != nil {
			return fmt.Errorf("element %d: %w", i, err)
		}
	}
	return nil
}

// scalar appends x, which must be of typ's Go type.
func (e *ggufEncoder) scalar(typ ValueType, x any) error {
	if t, ok := scalarType(x); !ok || t != typ {
		return fmt.Errorf("a Go %T is not a GGUF %s", x, typ)
	}
	le := binary.LittleEndian
	switch x := x.(type) {
	case uint8:
		e.b = append(e.b, x)
	case int8:
		e.b = append(e.b, byte(x))
	case uint16:
		e.b = le.AppendUint16(e.b, x)
	case int16:
		e.b = le.AppendUint16(e.b, uint16(x))
	case uint32:
		e.u32(x)
	case int32:
		e.u32(uint32(x))
	case float32:
		e.u32(math.Float32bits(x))
	case bool:
		b := byte(0)
		if x {
			b = 1
		}
		e.b = append(e.b, b)
	case string:
		e.str(x)
	case uint64:
		e.u64(x)
	case int64:
		e.u64(uint64(x))
	case float64:
		e.u64(math.Float64bits(x))
	}
	return nil
}
