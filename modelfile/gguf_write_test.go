package modelfile

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestWriteGGUFBytes: the whole file of one uint32 key and one F32 tensor of two values, byte
// for byte, worked out by hand from the format.
func TestWriteGGUFBytes(t *testing.T) {
	var b bytes.Buffer
	err := WriteGGUF(&b, []KV{{Key: "a", Value: uint32(7)}}, []GGUFTensor{{Name: "t", Dims: []int64{2}, Data: []float32{1, -2}}})
	if err != nil {
		t.Fatal(err)
	}
	want := "47475546" + "03000000" + // "GGUF", version 3
		"0100000000000000" + "0100000000000000" + // 1 tensor, 1 key
		"0100000000000000" + "61" + "04000000" + "07000000" + // key "a", type uint32 (4), 7
		"0100000000000000" + "74" + "01000000" + "0200000000000000" + // tensor "t", 1 dimension of 2
		"00000000" + "0000000000000000" + // F32 (0), at offset 0
		strings.Repeat("00", 96-74) + // the directory ends at byte 74; the data starts at 96
		"0000803f" + "000000c0" + // 1, -2
		strings.Repeat("00", 128-104) // the tensor's 8 bytes padded to 32
	if got := hex.EncodeToString(b.Bytes()); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestGGUFValueBytes: each metadata type's encoding (without the key and value type), worked out
// by hand, so that the reader's tests, whose files buildGGUF encodes the same way, do not rest
// on the encoder alone.
func TestGGUFValueBytes(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{uint8(200), "c8"},
		{int8(-100), "9c"},
		{uint16(60000), "60ea"},          // 0xEA60
		{int16(-30000), "d08a"},          // 65536 - 30000 = 0x8AD0
		{uint32(4000000000), "00286bee"}, // 0xEE6B2800
		{int32(-2000000000), "006cca88"}, // 2^32 - 2e9 = 0x88CA6C00
		{float32(0.15625), "0000203e"},   // 2^-3 · 1.25: 0x3E200000
		{true, "01"},
		{false, "00"},
		{"héllo", "0600000000000000" + "68c3a96c6c6f"}, // é is two bytes in UTF-8
		{uint64(1 << 63), "0000000000000080"},
		{int64(-1 << 62), "00000000000000c0"},
		{-2.5, "00000000000004c0"}, // float64 0xC004000000000000
		{[]uint16{1, 65535}, "02000000" + "0200000000000000" + "0100" + "ffff"},
		{[]string{"a", ""}, "08000000" + "0200000000000000" + "0100000000000000" + "61" + "0000000000000000"},
		{[]bool{true, false}, "07000000" + "0200000000000000" + "0100"},
		{[]float64{}, "0c000000" + "0000000000000000"},
		{arr{TypeArray, []any{[]int32{-1}}}, "09000000" + "0100000000000000" + "05000000" + "0100000000000000" + "ffffffff"},
	} {
		e := &ggufEncoder{}
		v := toValue(c.v)
		if err := e.value(v); err != nil {
			t.Fatalf("%#v: %v", c.v, err)
		}
		if got := hex.EncodeToString(e.b); got != c.want {
			t.Errorf("%#v (%s): got %s, want %s", c.v, v.TypeName(), got, c.want)
		}
	}
}

// TestWriteGGUFReadsBack: every metadata type, general.alignment 64 and F32 tensors of one to
// four dimensions, written by WriteGGUF, read back through OpenGGUF and DecodeGGUF equal: keys
// in order, values and their types, dimensions, offsets at multiples of 64, and every value's
// bits (−0, infinity, the smallest subnormal, a NaN's payload).
func TestWriteGGUFReadsBack(t *testing.T) {
	meta := append([]kv{{"general.alignment", uint32(64)}}, everyType...)
	nan := math.Float32frombits(0x7FC00001)
	tensors := []GGUFTensor{
		{Name: "m", Dims: []int64{3, 2}, Data: []float32{1, -2, 0.5, float32(math.Copysign(0, -1)), float32(math.Inf(1)), math.SmallestNonzeroFloat32}},
		{Name: "nan", Dims: []int64{1}, Data: []float32{nan}},
		{Name: "four", Dims: []int64{2, 1, 1, 2}, Data: []float32{math.MaxFloat32, -3, 7, 1e-30}},
	}
	// m's 24 bytes and nan's 4 are each padded to 64.
	wantOffsets := []uint64{0, 64, 128}
	var b bytes.Buffer
	if err := WriteGGUF(&b, toKVs(meta), tensors); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "w.gguf")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	opened, err := OpenGGUF(path)
	if err != nil {
		t.Fatal(err)
	}
	defer opened.Close()
	for _, g := range []*GGUF{opened, decode(t, b.Bytes())} {
		if g.Version != 3 || g.Alignment != 64 || g.DataOffset%64 != 0 || int64(b.Len()) != g.DataOffset+192 {
			t.Fatalf("version %d, alignment %d, data at %d of %d bytes", g.Version, g.Alignment, g.DataOffset, b.Len())
		}
		var keys []string
		for _, m := range meta {
			keys = append(keys, m.key)
			v, ok := g.Value(m.key)
			if want := toValue(m.val); !ok || v.Type() != want.Type() || v.ElemType() != want.ElemType() || !reflect.DeepEqual(plain(v), plain(m.val)) {
				t.Errorf("%s: read %#v (%s), wrote %#v (%s)", m.key, plain(v), v.TypeName(), plain(m.val), want.TypeName())
			}
		}
		if !reflect.DeepEqual(g.Keys(), keys) {
			t.Errorf("keys %v, want %v", g.Keys(), keys)
		}
		if len(g.Tensors) != len(tensors) {
			t.Fatalf("%d tensors, want %d", len(g.Tensors), len(tensors))
		}
		for i, w := range tensors {
			info := g.Tensors[i]
			if info.Name != w.Name || !reflect.DeepEqual(info.Dims, w.Dims) || info.Type != F32 || info.Offset != wantOffsets[i] {
				t.Errorf("tensor %d: %+v, want %s %v F32 at %d", i, info, w.Name, w.Dims, wantOffsets[i])
			}
			got, err := g.Tensor(w.Name)
			if err != nil || !sameBits(got, w.Data) {
				t.Errorf("%s: %v, %v; want %v", w.Name, got, err, w.Data)
			}
		}
	}
}

// TestWriteGGUFRefused: what the reader would refuse, or what has no GGUF type, is refused
// naming it, and nothing is written.
func TestWriteGGUFRefused(t *testing.T) {
	one := []GGUFTensor{{Name: "w", Dims: []int64{2}, Data: []float32{1, 2}}}
	tensor := func(dims ...int64) []GGUFTensor {
		return []GGUFTensor{{Name: "w", Dims: dims, Data: []float32{1, 2}}}
	}
	for _, c := range []struct {
		name    string
		kvs     []KV
		tensors []GGUFTensor
		want    string
	}{
		{"key twice", []KV{{"k", "a"}, {"j", "b"}, {"k", "c"}}, nil, `gguf: metadata key 2: "k" is also key 0`},
		{"int", []KV{{"k", 1}}, nil, `metadata key "k": a Go value of type int has no GGUF type`},
		{"[]int", []KV{{"k", []int{1}}}, nil, "a Go value of type []int has no GGUF type"},
		{"[]any", []KV{{"k", []any{uint8(1)}}}, nil, "a Go value of type []interface {} has no GGUF type"},
		{"nil", []KV{{"k", nil}}, nil, "a Go value of type <nil> has no GGUF type"},
		{"zero Value", []KV{{"k", Value{}}}, nil, `metadata key "k": a Go <nil> is not a GGUF uint8`},
		{"nested scalar", []KV{{"k", Value{typ: TypeArray, elem: TypeArray, v: []Value{{typ: TypeUint8, v: uint8(1)}}}}}, nil,
			`metadata key "k": element 0: a Go modelfile.Value is not an array`},
		{"element type", []KV{{"k", Value{typ: TypeArray, elem: TypeInt32, v: []uint32{1}}}}, nil, "element 0: a Go uint32 is not a GGUF int32"},
		{"alignment 48", []KV{{"general.alignment", uint32(48)}}, nil, "gguf: general.alignment is 48 (uint32); want a uint32 power of two from 1 to 1048576"},
		{"alignment 0", []KV{{"general.alignment", uint32(0)}}, nil, "general.alignment is 0 (uint32)"},
		{"alignment 2^21", []KV{{"general.alignment", uint32(1 << 21)}}, nil, "general.alignment is 2097152 (uint32)"},
		{"alignment type", []KV{{"general.alignment", uint64(32)}}, nil, "general.alignment is 32 (uint64)"},
		{"tensor twice", nil, append(one, one...), `gguf: tensor 1: name "w" is also tensor 0's`},
		{"no dims", nil, tensor(), `gguf: tensor "w": 0 dimensions (1 to 4 allowed)`},
		{"five dims", nil, tensor(2, 1, 1, 1, 1), `tensor "w": 5 dimensions (1 to 4 allowed)`},
		{"zero dim", nil, tensor(2, 0), `tensor "w": dimension 1 is 0; each must be at least 1`},
		{"negative dim", nil, tensor(-2, -1), `tensor "w": dimension 0 is -2`},
		{"too few values", nil, tensor(3), `tensor "w": dimensions [3] do not hold its 2 values`},
		{"too many values", nil, tensor(1), `dimensions [1] do not hold its 2 values`},
		{"overflow", nil, tensor(1<<40, 1<<40, 1<<40), "dimensions [1099511627776 1099511627776 1099511627776] do not hold its 2 values"},
	} {
		var b bytes.Buffer
		err := WriteGGUF(&b, c.kvs, c.tensors)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
		if b.Len() != 0 {
			t.Errorf("%s: %d bytes written", c.name, b.Len())
		}
	}
}

// A failing writer's error is returned, whether the header or the data fails.
func TestWriteGGUFWriterError(t *testing.T) {
	big := make([]float32, 1<<16) // 256 KiB: written after the first 64 KiB buffer fills
	for _, limit := range []int{0, 100, 1 << 17} {
		w := &failWriter{left: limit}
		err := WriteGGUF(w, []KV{{"k", "v"}}, []GGUFTensor{{Name: "t", Dims: []int64{1 << 16}, Data: big}})
		if !errors.Is(err, errFull) {
			t.Errorf("failing after %d bytes: %v", limit, err)
		}
	}
}

var errFull = errors.New("disk full")

// failWriter accepts left bytes, then fails.
type failWriter struct{ left int }

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.left {
		n := w.left
		w.left = 0
		return n, errFull
	}
	w.left -= len(p)
	return len(p), nil
}
