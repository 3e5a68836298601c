package modelfile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/graftrl/graftrl/internal/limits"
)

// The format's limits beyond the file's size. Each count is also checked against the bytes left
// in the file (every entry takes some), which is what bounds the memory a header can claim.
const (
	// maxDims is GGML_MAX_DIMS: ggml's tensors have at most four dimensions.
	maxDims = 4
	// maxDepth bounds arrays of arrays, so that a file cannot nest them to exhaust the stack.
	maxDepth = 8
	// maxAlignment bounds general.alignment (ggml writes 32; a page is 4 KiB).
	maxAlignment = 1 << 20
	// maxElements bounds a tensor's element count, so that sizes computed from it never overflow.
	maxElements = 1 << 60
)

// DefaultAlignment is the alignment of the data section and of each tensor's data when the file
// does not set general.alignment.
const DefaultAlignment = 32

// ggufMagic is "GGUF" read as a little-endian uint32.
const ggufMagic = 0x46554747

// GGUF is an open GGUF file: its header, metadata and tensor directory, read at open, and its
// tensor data, read on demand.
type GGUF struct {
	// Version is the format's version (2 or 3).
	Version uint32
	// Alignment is general.alignment, or DefaultAlignment when the file does not set it.
	Alignment int64
	// DataOffset is where the data section starts: tensors' offsets are counted from here.
	DataOffset int64
	// Tensors are the tensors in the order of the file.
	Tensors []TensorInfo

	keys    []string
	meta    map[string]Value
	byName  map[string]int
	r       io.ReaderAt
	size    int64
	name    string
	closeFn func() error
}

// OpenGGUF opens the GGUF file at path and reads its header, metadata and tensor directory; the
// tensors are read when asked for. A file over limits.Model's limit is refused before it is read.
// Close the file when done.
func OpenGGUF(path string) (*GGUF, error) {
	f, size, err := openBounded(path, "a GGUF file")
	if err != nil {
		return nil, err
	}
	g, err := DecodeGGUF(f, size, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	g.closeFn = f.Close
	return g, nil
}

// openBounded opens path, a format file (named in the error) that is read at offsets: a regular
// file within limits.Model's limit, checked before anything is read. It returns the file and
// its size.
func openBounded(path, format string) (*os.File, int64, error) {
	limit, err := limits.Model.Bytes()
	if err != nil {
		return nil, 0, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s: not a regular file (%s); %s is read at offsets", path, fi.Mode().Type(), format)
	}
	if fi.Size() > limit {
		f.Close()
		return nil, 0, limits.Model.TooLargeSize(path, fi.Size(), limit, false)
	}
	return f, fi.Size(), nil
}

// DecodeGGUF reads the header, metadata and tensor directory of a GGUF file of size bytes held
// by r; name names it in errors. The GGUF reads its tensors from r when asked for, so r must stay
// readable while it is used.
func DecodeGGUF(r io.ReaderAt, size int64, name string) (*GGUF, error) {
	if size < 0 {
		return nil, fmt.Errorf("%s: size %d is negative", name, size)
	}
	d := &decoder{r: bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 1<<16), size: size}
	g := &GGUF{r: r, size: size, name: name, meta: map[string]Value{}, byName: map[string]int{}}
	if err := g.decode(d); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return g, nil
}

// Close closes the file OpenGGUF opened; for a GGUF from DecodeGGUF it does nothing.
func (g *GGUF) Close() error {
	if g.closeFn == nil {
		return nil
	}
	return g.closeFn()
}

func (g *GGUF) decode(d *decoder) error {
	magic, err := d.u32()
	if err != nil {
		return fmt.Errorf("magic: %w", err)
	}
	if magic != ggufMagic {
		return fmt.Errorf("magic is %q, not \"GGUF\": not a GGUF file", binary.LittleEndian.AppendUint32(nil, magic))
	}
	if g.Version, err = d.u32(); err != nil {
		return fmt.Errorf("version: %w", err)
	}
	if g.Version != 2 && g.Version != 3 {
		return fmt.Errorf("version %d is not supported (versions 2 and 3 are; a big-endian file reads as a huge version)", g.Version)
	}
	nTensors, err := d.count("tensor count", 8+4+4+8) // name length, dimension count, type, offset
	if err != nil {
		return err
	}
	nKV, err := d.count("metadata key count", 8+4+1) // key length, value type, the smallest value
	if err != nil {
		return err
	}
	for i := range nKV {
		if err := g.decodeKV(d, i); err != nil {
			return err
		}
	}
	if err := g.setAlignment(); err != nil {
		return err
	}
	g.Tensors = make([]TensorInfo, 0, nTensors)
	for i := range nTensors {
		t, err := decodeTensorInfo(d, i)
		if err != nil {
			return err
		}
		if j, dup := g.byName[t.Name]; dup {
			return fmt.Errorf("tensor %d: name %q is also tensor %d's", i, t.Name, j)
		}
		g.byName[t.Name] = len(g.Tensors)
		g.Tensors = append(g.Tensors, t)
	}
	g.DataOffset = alignUp(d.pos, g.Alignment)
	if g.DataOffset > g.size {
		return fmt.Errorf("data section: starts at byte %d (the directory's end aligned to %d), past the end of the file (%d bytes)", g.DataOffset, g.Alignment, g.size)
	}
	return g.checkTensors()
}

func (g *GGUF) decodeKV(d *decoder, i int64) error {
	key, err := d.str()
	if err != nil {
		return fmt.Errorf("metadata key %d: %w", i, err)
	}
	if _, dup := g.meta[key]; dup {
		return fmt.Errorf("metadata key %d: %q is given twice", i, key)
	}
	typ, err := d.u32()
	if err != nil {
		return fmt.Errorf("metadata key %q: value type: %w", key, err)
	}
	v, err := d.value(ValueType(typ), 0)
	if err != nil {
		return fmt.Errorf("metadata key %q: %w", key, err)
	}
	g.keys = append(g.keys, key)
	g.meta[key] = v
	return nil
}

func (g *GGUF) setAlignment() error {
	g.Alignment = DefaultAlignment
	v, ok := g.meta["general.alignment"]
	if !ok {
		return nil
	}
	a, isU32 := v.v.(uint32)
	if !isU32 || v.typ != TypeUint32 {
		return fmt.Errorf("metadata key \"general.alignment\" is %s, not uint32", v.TypeName())
	}
	if a == 0 || a&(a-1) != 0 || a > maxAlignment {
		return fmt.Errorf("metadata key \"general.alignment\" is %d: not a power of two from 1 to %d", a, maxAlignment)
	}
	g.Alignment = int64(a)
	return nil
}

// checkTensors checks each tensor's data against the data section: aligned, and inside it.
func (g *GGUF) checkTensors() error {
	data := uint64(g.size - g.DataOffset)
	for _, t := range g.Tensors {
		if t.Offset%uint64(g.Alignment) != 0 {
			return fmt.Errorf("tensor %q: offset %d is not a multiple of the alignment %d", t.Name, t.Offset, g.Alignment)
		}
		if t.Offset > data || uint64(t.Bytes()) > data-t.Offset {
			return fmt.Errorf("tensor %q: its %d bytes at offset %d end past the data section (%d bytes from byte %d to the end of the file)",
				t.Name, t.Bytes(), t.Offset, data, g.DataOffset)
		}
	}
	return nil
}

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }

// decoder reads the header sequentially, knowing how many bytes are left in the file so that no
// length is believed before it is checked.
type decoder struct {
	r    *bufio.Reader
	pos  int64
	size int64
	buf  [8]byte
}

// errShort is returned when the file ends inside a field.
var errShort = errors.New("the file ends here")

func (d *decoder) left() int64 { return d.size - d.pos }

// read fills p, failing with a message that says where the file ended.
func (d *decoder) read(p []byte) error {
	if int64(len(p)) > d.left() {
		return fmt.Errorf("%d bytes needed at byte %d, %d left: %w", len(p), d.pos, d.left(), errShort)
	}
	n, err := io.ReadFull(d.r, p)
	d.pos += int64(n)
	if err != nil {
		return fmt.Errorf("at byte %d: %w", d.pos, err)
	}
	return nil
}

func (d *decoder) u32() (uint32, error) {
	if err := d.read(d.buf[:4]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(d.buf[:4]), nil
}

func (d *decoder) u64() (uint64, error) {
	if err := d.read(d.buf[:8]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(d.buf[:8]), nil
}

// count reads a uint64 count of entries that each take at least minBytes, refusing one that the
// rest of the file cannot hold.
func (d *decoder) count(what string, minBytes int64) (int64, error) {
	at := d.pos
	n, err := d.u64()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	if most := uint64(d.left() / minBytes); n > most {
		return 0, fmt.Errorf("%s %d (at byte %d): the %d bytes left in the file hold at most %d (%d bytes each)", what, n, at, d.left(), most, minBytes)
	}
	return int64(n), nil
}

func (d *decoder) str() (string, error) {
	at := d.pos
	n, err := d.u64()
	if err != nil {
		return "", fmt.Errorf("string length: %w", err)
	}
	if n > uint64(d.left()) {
		return "", fmt.Errorf("string length %d (at byte %d) is past the end of the file (%d bytes left)", n, at, d.left())
	}
	b := make([]byte, n)
	if err := d.read(b); err != nil {
		return "", err
	}
	return string(b), nil
}

// value reads a value of type typ; depth counts the arrays it is inside.
func (d *decoder) value(typ ValueType, depth int) (Value, error) {
	switch typ {
	case TypeString:
		s, err := d.str()
		return Value{typ: typ, v: s}, err
	case TypeArray:
		return d.array(depth)
	}
	size := typ.size()
	if size == 0 {
		return Value{}, fmt.Errorf("value type %d at byte %d is not a GGUF type (0 to %d)", uint32(typ), d.pos-4, len(valueTypeNames)-1)
	}
	b := d.buf[:size]
	if err := d.read(b); err != nil {
		return Value{}, err
	}
	v, err := scalar(typ, b)
	return Value{typ: typ, v: v}, err
}

func scalar(typ ValueType, b []byte) (any, error) {
	le := binary.LittleEndian
	switch typ {
	case TypeUint8:
		return b[0], nil
	case TypeInt8:
		return int8(b[0]), nil
	case TypeBool:
		if b[0] > 1 {
			return nil, fmt.Errorf("bool is %d, not 0 or 1", b[0])
		}
		return b[0] == 1, nil
	case TypeUint16:
		return le.Uint16(b), nil
	case TypeInt16:
		return int16(le.Uint16(b)), nil
	case TypeUint32:
		return le.Uint32(b), nil
	case TypeInt32:
		return int32(le.Uint32(b)), nil
	case TypeFloat32:
		return math.Float32frombits(le.Uint32(b)), nil
	case TypeUint64:
		return le.Uint64(b), nil
	case TypeInt64:
		return int64(le.Uint64(b)), nil
	default: // TypeFloat64, the one scalar left
		return math.Float64frombits(le.Uint64(b)), nil
	}
}

func (d *decoder) array(depth int) (Value, error) {
	if depth >= maxDepth {
		return Value{}, fmt.Errorf("arrays nested %d deep at byte %d (at most %d)", depth+1, d.pos, maxDepth)
	}
	et, err := d.u32()
	if err != nil {
		return Value{}, fmt.Errorf("array element type: %w", err)
	}
	elem := ValueType(et)
	minBytes := elem.size()
	switch elem {
	case TypeString:
		minBytes = 8
	case TypeArray:
		minBytes = 4 + 8
	}
	if minBytes == 0 {
		return Value{}, fmt.Errorf("array element type %d at byte %d is not a GGUF type (0 to %d)", et, d.pos-4, len(valueTypeNames)-1)
	}
	n, err := d.count("array length", minBytes)
	if err != nil {
		return Value{}, err
	}
	v := Value{typ: TypeArray, elem: elem}
	switch elem {
	case TypeString:
		a := make([]string, n)
		for i := range a {
			if a[i], err = d.str(); err != nil {
				return Value{}, fmt.Errorf("element %d: %w", i, err)
			}
		}
		v.v = a
	case TypeArray:
		a := make([]Value, n)
		for i := range a {
			if a[i], err = d.array(depth + 1); err != nil {
				return Value{}, fmt.Errorf("element %d: %w", i, err)
			}
		}
		v.v = a
	default:
		b := make([]byte, n*minBytes)
		if err := d.read(b); err != nil {
			return Value{}, err
		}
		if v.v, err = scalars(elem, b, int(n)); err != nil {
			return Value{}, err
		}
	}
	return v, nil
}

// scalars decodes n packed scalars of type typ into a slice of their Go type.
func scalars(typ ValueType, b []byte, n int) (any, error) {
	switch typ {
	case TypeUint8:
		return b, nil
	case TypeInt8:
		return decodeAll[int8](typ, b, n)
	case TypeBool:
		return decodeAll[bool](typ, b, n)
	case TypeUint16:
		return decodeAll[uint16](typ, b, n)
	case TypeInt16:
		return decodeAll[int16](typ, b, n)
	case TypeUint32:
		return decodeAll[uint32](typ, b, n)
	case TypeInt32:
		return decodeAll[int32](typ, b, n)
	case TypeFloat32:
		return decodeAll[float32](typ, b, n)
	case TypeUint64:
		return decodeAll[uint64](typ, b, n)
	case TypeInt64:
		return decodeAll[int64](typ, b, n)
	default:
		return decodeAll[float64](typ, b, n)
	}
}

func decodeAll[T any](typ ValueType, b []byte, n int) ([]T, error) {
	out := make([]T, n)
	size := int(typ.size())
	for i := range out {
		v, err := scalar(typ, b[i*size:(i+1)*size])
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		out[i] = v.(T)
	}
	return out, nil
}
