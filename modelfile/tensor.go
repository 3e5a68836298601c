package modelfile

import (
	"fmt"
	"strings"
)

// TensorType is ggml's type of a tensor's data, as the file numbers it.
type TensorType uint32

// The tensor types whose block layout the reader knows. Those it dequantises are F32, F16, BF16,
// Q8_0, Q4_0 and Q4_1; the others are listed so that a file holding them still opens (its
// directory checked), and reading one of their tensors is refused naming the type.
const (
	F32  TensorType = 0
	F16  TensorType = 1
	Q4_0 TensorType = 2
	Q4_1 TensorType = 3
	Q5_0 TensorType = 6
	Q5_1 TensorType = 7
	Q8_0 TensorType = 8
	Q8_1 TensorType = 9
	Q2_K TensorType = 10
	Q3_K TensorType = 11
	Q4_K TensorType = 12
	Q5_K TensorType = 13
	Q6_K TensorType = 14
	Q8_K TensorType = 15
	I8   TensorType = 24
	I16  TensorType = 25
	I32  TensorType = 26
	I64  TensorType = 27
	F64  TensorType = 28
	BF16 TensorType = 30
)

// layout is a type's block: how many elements, in how many bytes (ggml's type traits).
type layout struct {
	name        string
	blockSize   int64
	blockBytes  int64
	dequantises bool
}

// layoutOf is ggml's block layout of t (ggml.c, type_traits), and whether the reader knows t.
func layoutOf(t TensorType) (layout, bool) {
	switch t {
	case F32:
		return layout{"F32", 1, 4, true}, true
	case F16:
		return layout{"F16", 1, 2, true}, true
	case BF16:
		return layout{"BF16", 1, 2, true}, true
	case Q4_0:
		return layout{"Q4_0", 32, 2 + 16, true}, true
	case Q4_1:
		return layout{"Q4_1", 32, 2 + 2 + 16, true}, true
	case Q8_0:
		return layout{"Q8_0", 32, 2 + 32, true}, true
	case Q5_0:
		return layout{"Q5_0", 32, 22, false}, true
	case Q5_1:
		return layout{"Q5_1", 32, 24, false}, true
	case Q8_1:
		return layout{"Q8_1", 32, 36, false}, true
	case Q2_K:
		return layout{"Q2_K", 256, 84, false}, true
	case Q3_K:
		return layout{"Q3_K", 256, 110, false}, true
	case Q4_K:
		return layout{"Q4_K", 256, 144, false}, true
	case Q5_K:
		return layout{"Q5_K", 256, 176, false}, true
	case Q6_K:
		return layout{"Q6_K", 256, 210, false}, true
	case Q8_K:
		return layout{"Q8_K", 256, 292, false}, true
	case I8:
		return layout{"I8", 1, 1, false}, true
	case I16:
		return layout{"I16", 1, 2, false}, true
	case I32:
		return layout{"I32", 1, 4, false}, true
	case I64:
		return layout{"I64", 1, 8, false}, true
	case F64:
		return layout{"F64", 1, 8, false}, true
	}
	return layout{}, false
}

// String is ggml's name of the type ("Q4_1"), or "type N" for one the reader does not know.
func (t TensorType) String() string {
	if l, ok := layoutOf(t); ok {
		return l.name
	}
	return fmt.Sprintf("type %d", uint32(t))
}

// TensorInfo is one entry of the tensor directory.
type TensorInfo struct {
	// Name is the tensor's name ("blk.0.attn_q.weight").
	Name string
	// Dims are the dimensions in ggml's order: Dims[0] varies fastest (a row's length), so a
	// matrix of R rows of C columns has Dims [C, R].
	Dims []int64
	// Type is the type of its data.
	Type TensorType
	// Offset is where its data starts, counted from the data section's start.
	Offset uint64
}

// Elements is the tensor's number of elements.
func (t TensorInfo) Elements() int64 {
	n := int64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// Bytes is the size of the tensor's data.
func (t TensorInfo) Bytes() int64 {
	l, _ := layoutOf(t.Type)
	return t.Elements() / l.blockSize * l.blockBytes
}

// Rows is the number of rows (the product of the dimensions after the first).
func (t TensorInfo) Rows() int64 { return t.Elements() / t.Dims[0] }

func decodeTensorInfo(d *decoder, i int64) (TensorInfo, error) {
	name, err := d.str()
	if err != nil {
		return TensorInfo{}, fmt.Errorf("tensor %d: name: %w", i, err)
	}
	t := TensorInfo{Name: name}
	fail := func(format string, args ...any) (TensorInfo, error) {
		return TensorInfo{}, fmt.Errorf("tensor %q: "+format, append([]any{name}, args...)...)
	}
	nDims, err := d.u32()
	if err != nil {
		return fail("dimension count: %w", err)
	}
	if nDims < 1 || nDims > maxDims {
		return fail("%d dimensions (1 to %d allowed)", nDims, maxDims)
	}
	elements := uint64(1)
	for j := range nDims {
		n, err := d.u64()
		if err != nil {
			return fail("dimension %d: %w", j, err)
		}
		if n < 1 || n > maxElements/elements {
			return fail("dimension %d is %d: each must be at least 1, and all together hold at most 2^60 elements", j, n)
		}
		elements *= n
		t.Dims = append(t.Dims, int64(n))
	}
	typ, err := d.u32()
	if err != nil {
		return fail("type: %w", err)
	}
	t.Type = TensorType(typ)
	l, ok := layoutOf(t.Type)
	if !ok {
		return fail("type %d has no known block layout (known: %s)", typ, knownTypes())
	}
	if t.Dims[0]%l.blockSize != 0 {
		return fail("row length (dimension 0) %d is not a multiple of %s's block of %d", t.Dims[0], l.name, l.blockSize)
	}
	if t.Offset, err = d.u64(); err != nil {
		return fail("offset: %w", err)
	}
	return t, nil
}

func knownTypes() string {
	var names []string
	for _, t := range []TensorType{F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K, I8, I16, I32, I64, F64} {
		names = append(names, t.String())
	}
	return strings.Join(names, ", ")
}

// TensorInfo is the directory entry of the tensor called name.
func (g *GGUF) TensorInfo(name string) (TensorInfo, bool) {
	i, ok := g.byName[name]
	if !ok {
		return TensorInfo{}, false
	}
	return g.Tensors[i], true
}

// Tensor reads the tensor called name and dequantises it to float32, in ggml's order (Dims[0]
// fastest).
func (g *GGUF) Tensor(name string) ([]float32, error) {
	t, ok := g.TensorInfo(name)
	if !ok {
		return nil, fmt.Errorf("%s: no tensor %q (the file has %d)", g.name, name, len(g.Tensors))
	}
	return g.TensorRows(name, 0, t.Rows())
}

// TensorRows reads count rows of the tensor called name, from row first, and dequantises them to
// float32: count·Dims[0] values. A row is a whole number of blocks, so a few rows of a large
// tensor (an embedding's) are read without reading the rest.
func (g *GGUF) TensorRows(name string, first, count int64) ([]float32, error) {
	t, ok := g.TensorInfo(name)
	if !ok {
		return nil, fmt.Errorf("%s: no tensor %q (the file has %d)", g.name, name, len(g.Tensors))
	}
	l, _ := layoutOf(t.Type)
	if !l.dequantises {
		return nil, fmt.Errorf("%s: tensor %q is %s, which is not dequantised (F32, F16, BF16, Q8_0, Q4_0 and Q4_1 are)", g.name, name, t.Type)
	}
	if rows := t.Rows(); first < 0 || count < 0 || first > rows || count > rows-first {
		return nil, fmt.Errorf("%s: tensor %q: rows %d to %d asked for, it has %d", g.name, name, first, first+count, rows)
	}
	rowBytes := t.Dims[0] / l.blockSize * l.blockBytes
	raw := make([]byte, count*rowBytes)
	if _, err := g.r.ReadAt(raw, g.DataOffset+int64(t.Offset)+first*rowBytes); err != nil {
		return nil, fmt.Errorf("%s: tensor %q: %w", g.name, name, err)
	}
	out := make([]float32, count*t.Dims[0])
	if err := Dequantize(t.Type, raw, out); err != nil {
		return nil, fmt.Errorf("%s: tensor %q: %w", g.name, name, err)
	}
	return out, nil
}
