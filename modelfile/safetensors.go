package modelfile

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// MaxSafetensorsHeader bounds a safetensors file's JSON header, as the format's reference
// implementation does (100 MB); the header is also bounded by the file's size.
const MaxSafetensorsHeader = 100_000_000

// maxSafetensorsElements bounds a tensor's element count, so that its size in bits (at most 64
// each) never overflows.
const maxSafetensorsElements = 1 << 56

// safetensorsDTypes are the dtypes the safetensors format defines, with their element sizes in
// bits. A file may hold any of them; Tensor reads F32, F16 and BF16.
func safetensorsDTypes() map[string]int64 {
	return map[string]int64{
		"BOOL": 8, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6,
		"I16": 16, "U16": 16, "F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32, "C64": 64,
		"F64": 64, "I64": 64, "U64": 64,
	}
}

// SafetensorsReadable lists the dtypes Safetensors.Tensor converts to float32.
func SafetensorsReadable() []string { return []string{"F32", "F16", "BF16"} }

// SafetensorsInfo is one tensor of a safetensors header.
type SafetensorsInfo struct {
	// Name is the tensor's name ("model.layers.0.self_attn.q_proj.weight").
	Name string
	// DType is the type of its elements ("F32", "BF16", …).
	DType string
	// Shape is in PyTorch's order: the last dimension varies fastest, so an nn.Linear weight is
	// [out, in]. An empty shape is a scalar.
	Shape []int64
	// Begin and End are where its data starts and ends, counted from the data section's start.
	Begin, End int64
}

// Elements is the tensor's number of elements (1 for a scalar).
func (t SafetensorsInfo) Elements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Safetensors is an open safetensors file: its header, read at open, and its tensors' data,
// read on demand.
type Safetensors struct {
	// Tensors are the tensors in the order of their data.
	Tensors []SafetensorsInfo
	// Metadata is the header's __metadata__ (string to string), empty when there is none.
	Metadata map[string]string
	// DataOffset is where the data section starts: 8 bytes of header length, then the header.
	DataOffset int64

	byName  map[string]int
	r       io.ReaderAt
	name    string
	closeFn func() error
}

// OpenSafetensors opens the safetensors file at path and reads its header; the tensors are read
// when asked for. A file over limits.Model's limit is refused before it is read. Close the file
// when done.
func OpenSafetensors(path string) (*Safetensors, error) {
	f, size, err := openBounded(path, "a safetensors file")
	if err != nil {
		return nil, err
	}
	s, err := DecodeSafetensors(f, size, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	s.closeFn = f.Close
	return s, nil
}

// DecodeSafetensors reads the header of a safetensors file of size bytes held by r; name names
// it in errors. Every tensor's dtype must be one of the format's, its data must take exactly
// its shape's bytes, and the tensors' data must cover the data section back to back to the end
// of the file, as the format's reference implementation requires. r must stay readable while
// the Safetensors is used.
func DecodeSafetensors(r io.ReaderAt, size int64, name string) (*Safetensors, error) {
	s, err := decodeSafetensors(r, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s.r, s.name = r, name
	return s, nil
}

func decodeSafetensors(r io.ReaderAt, size int64) (*Safetensors, error) {
	var lenBuf [8]byte
	if size < 8 {
		return nil, fmt.Errorf("%d bytes: too short for the 8-byte header length of a safetensors file", size)
	}
	if _, err := r.ReadAt(lenBuf[:], 0); err != nil {
		return nil, fmt.Errorf("header length: %w", err)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	switch {
	case n > uint64(size-8):
		return nil, fmt.Errorf("header length %d is past the end of the file (%d bytes follow the length): truncated, or not a safetensors file", n, size-8)
	case n > MaxSafetensorsHeader:
		return nil, fmt.Errorf("header length %d is over the format's limit of %d bytes", n, MaxSafetensorsHeader)
	case n < 2:
		return nil, fmt.Errorf("header length %d: a header is a JSON object, at least 2 bytes", n)
	}
	header := make([]byte, n)
	if _, err := r.ReadAt(header, 8); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	if header[0] != '{' {
		return nil, fmt.Errorf("header starts with %q, not '{': not a safetensors file", header[0])
	}
	s := &Safetensors{DataOffset: 8 + int64(n), Metadata: map[string]string{}, byName: map[string]int{}}
	if err := s.parseHeader(header); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	return s, s.checkOffsets(size - s.DataOffset)
}

// tensorEntry is a tensor's entry in the JSON header.
type tensorEntry struct {
	DType   *string       `json:"dtype"`
	Shape   []json.Number `json:"shape"`
	Offsets []json.Number `json:"data_offsets"`
}

// parseHeader reads the JSON object key by key, so that a key given twice is refused rather
// than silently replaced.
func (s *Safetensors) parseHeader(header []byte) error {
	dec := json.NewDecoder(bytes.NewReader(header))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if _, err := dec.Token(); err != nil { // the '{' checked by the caller
		return err
	}
	sawMetadata := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key := tok.(string) // an object's keys are strings, or Token fails
		if _, dup := s.byName[key]; dup || (key == "__metadata__" && sawMetadata) {
			return fmt.Errorf("key %q is given twice", key)
		}
		if key == "__metadata__" {
			sawMetadata = true
			if err := dec.Decode(&s.Metadata); err != nil {
				return fmt.Errorf("__metadata__: %w (it maps strings to strings)", err)
			}
			continue
		}
		var e tensorEntry
		if err := dec.Decode(&e); err != nil {
			return fmt.Errorf("tensor %q: %w (want {\"dtype\": …, \"shape\": […], \"data_offsets\": [begin, end]})", key, err)
		}
		t, err := e.info(key)
		if err != nil {
			return fmt.Errorf("tensor %q: %w", key, err)
		}
		s.byName[key] = len(s.Tensors)
		s.Tensors = append(s.Tensors, t)
	}
	if _, err := dec.Token(); err != nil { // '}'
		return err
	}
	// Only the spaces the format pads the header with may follow the object.
	if rest := header[dec.InputOffset():]; len(bytes.TrimLeft(rest, " \t\r\n")) > 0 {
		return fmt.Errorf("%d bytes after the JSON object; only spaces may pad it", len(rest))
	}
	return nil
}

// info checks an entry's fields: a known dtype, dimensions and offsets that are whole numbers,
// and data that takes exactly the shape's bytes.
func (e tensorEntry) info(name string) (SafetensorsInfo, error) {
	t := SafetensorsInfo{Name: name, Shape: make([]int64, 0, len(e.Shape))}
	if e.DType == nil || e.Shape == nil || e.Offsets == nil {
		return t, errors.New("dtype, shape and data_offsets are all required")
	}
	t.DType = *e.DType
	dtypes := safetensorsDTypes()
	bits, ok := dtypes[t.DType]
	if !ok {
		known := make([]string, 0, len(dtypes))
		for k := range dtypes {
			known = append(known, k)
		}
		slices.Sort(known)
		return t, fmt.Errorf("dtype %q is not a safetensors dtype (known: %s)", t.DType, strings.Join(known, ", "))
	}
	if len(e.Offsets) != 2 {
		return t, fmt.Errorf("data_offsets has %d numbers, want 2 (begin, end)", len(e.Offsets))
	}
	elements := int64(1)
	for i, d := range e.Shape {
		v, err := strconv.ParseInt(string(d), 10, 64)
		if err != nil || v < 0 || (v > 0 && v > maxSafetensorsElements/max(elements, 1)) {
			return t, fmt.Errorf("shape dimension %d is %s: each must be a whole number ≥ 0, all together at most 2^56 elements", i, d)
		}
		elements *= v
		t.Shape = append(t.Shape, v)
	}
	for i, o := range e.Offsets {
		v, err := strconv.ParseInt(string(o), 10, 64)
		if err != nil || v < 0 {
			return t, fmt.Errorf("data_offsets[%d] is %s, not a whole number of bytes ≥ 0", i, o)
		}
		if i == 0 {
			t.Begin = v
		} else {
			t.End = v
		}
	}
	if elements*bits%8 != 0 {
		return t, fmt.Errorf("%d elements of %d bits are not a whole number of bytes", elements, bits)
	}
	if want := elements * bits / 8; t.End < t.Begin || t.End-t.Begin != want {
		return t, fmt.Errorf("data_offsets [%d, %d] hold %d bytes; its shape %v of %s takes %d", t.Begin, t.End, t.End-t.Begin, t.Shape, t.DType, want)
	}
	return t, nil
}

// checkOffsets sorts the tensors by their data and checks that they follow one another from the
// data section's start to the end of the file, with no gap and no overlap.
func (s *Safetensors) checkOffsets(data int64) error {
	slices.SortStableFunc(s.Tensors, func(a, b SafetensorsInfo) int {
		return cmp.Or(cmp.Compare(a.Begin, b.Begin), cmp.Compare(a.End, b.End))
	})
	at := int64(0)
	for i, t := range s.Tensors {
		s.byName[t.Name] = i
		if t.Begin != at {
			return fmt.Errorf("tensor %q: data_offsets begin at %d, want %d (the end of the tensor before it): tensors must follow one another with no gap or overlap", t.Name, t.Begin, at)
		}
		if t.End > data {
			return fmt.Errorf("tensor %q: its data [%d, %d) ends past the end of the file (the data section has %d bytes from byte %d): truncated", t.Name, t.Begin, t.End, data, s.DataOffset)
		}
		at = t.End
	}
	if at != data {
		return fmt.Errorf("the tensors' data ends at %d, but the data section has %d bytes: the file has bytes no tensor owns", at, data)
	}
	return nil
}

// Close closes the file OpenSafetensors opened; for one from DecodeSafetensors it does nothing.
func (s *Safetensors) Close() error {
	if s.closeFn == nil {
		return nil
	}
	return s.closeFn()
}

// Name is the file's name as given to OpenSafetensors or DecodeSafetensors.
func (s *Safetensors) Name() string { return s.name }

// TensorInfo is the header entry of the tensor called name.
func (s *Safetensors) TensorInfo(name string) (SafetensorsInfo, bool) {
	i, ok := s.byName[name]
	if !ok {
		return SafetensorsInfo{}, false
	}
	return s.Tensors[i], true
}

// Tensor reads the tensor called name and converts it to float32, in the file's order (the last
// dimension fastest). Only F32, F16 and BF16 are read; another dtype is refused naming the
// tensor and its dtype.
func (s *Safetensors) Tensor(name string) ([]float32, error) {
	t, ok := s.TensorInfo(name)
	if !ok {
		return nil, fmt.Errorf("%s: no tensor %q (the file has %d)", s.name, name, len(s.Tensors))
	}
	var typ TensorType
	switch t.DType {
	case "F32":
		typ = F32
	case "F16":
		typ = F16
	case "BF16":
		typ = BF16
	default:
		return nil, fmt.Errorf("%s: tensor %q is %s; only %s are read", s.name, name, t.DType, strings.Join(SafetensorsReadable(), ", "))
	}
	raw := make([]byte, t.End-t.Begin)
	if _, err := s.r.ReadAt(raw, s.DataOffset+t.Begin); err != nil {
		return nil, fmt.Errorf("%s: tensor %q: %w", s.name, name, err)
	}
	out := make([]float32, t.Elements())
	if err := Dequantize(typ, raw, out); err != nil {
		return nil, fmt.Errorf("%s: tensor %q: %w", s.name, name, err)
	}
	return out, nil
}

// SafetensorsTensor is a float32 tensor for WriteSafetensors.
type SafetensorsTensor struct {
	Name  string
	Shape []int64   // PyTorch's order, the last dimension fastest
	Data  []float32 // the product of Shape values
}

// WriteSafetensors writes tensors as an F32 safetensors file to w, in the order given, with
// metadata as the header's __metadata__ (omitted when empty). The header is padded with spaces
// so that the data starts at a multiple of 8 bytes, as the reference implementation writes it.
func WriteSafetensors(w io.Writer, tensors []SafetensorsTensor, metadata map[string]string) error {
	header, err := safetensorsHeader(tensors, metadata)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	var lenBuf [8]byte
	binary.LittleEndian.PutUint64(lenBuf[:], uint64(len(header)))
	if _, err := bw.Write(lenBuf[:]); err != nil {
		return err
	}
	if _, err := bw.Write(header); err != nil {
		return err
	}
	buf := make([]byte, 0, 1<<16)
	for _, t := range tensors {
		for _, v := range t.Data {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			if len(buf) == cap(buf) {
				if _, err := bw.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
	}
	if _, err := bw.Write(buf); err != nil {
		return err
	}
	return bw.Flush()
}

// safetensorsHeader is the JSON header of F32 tensors written in order, padded to 8 bytes.
func safetensorsHeader(tensors []SafetensorsTensor, metadata map[string]string) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	if len(metadata) > 0 {
		keys := make([]string, 0, len(metadata))
		for k := range metadata {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteString(`"__metadata__":{`)
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(jsonString(k) + ":" + jsonString(metadata[k]))
		}
		b.WriteByte('}')
	}
	seen := map[string]bool{}
	at := int64(0)
	for i, t := range tensors {
		if t.Name == "" || t.Name == "__metadata__" || seen[t.Name] {
			return nil, fmt.Errorf("safetensors: tensor %d's name %q is empty, reserved or given twice", i, t.Name)
		}
		seen[t.Name] = true
		n := int64(1)
		dims := make([]string, len(t.Shape))
		for j, d := range t.Shape {
			if d < 0 {
				return nil, fmt.Errorf("safetensors: tensor %q: dimension %d is %d", t.Name, j, d)
			}
			n *= d
			dims[j] = strconv.FormatInt(d, 10)
		}
		if n != int64(len(t.Data)) {
			return nil, fmt.Errorf("safetensors: tensor %q: shape %v holds %d values, the data has %d", t.Name, t.Shape, n, len(t.Data))
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `%s:{"dtype":"F32","shape":[%s],"data_offsets":[%d,%d]}`, jsonString(t.Name), strings.Join(dims, ","), at, at+4*n)
		at += 4 * n
	}
	b.WriteByte('}')
	for (8+b.Len())%8 != 0 {
		b.WriteByte(' ')
	}
	return b.Bytes(), nil
}

// jsonString is s as a JSON string, with <, > and & left as they are.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}
