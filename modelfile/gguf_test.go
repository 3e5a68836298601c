package modelfile

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/internal/limits"
)

func decode(t *testing.T, b []byte) *GGUF {
	t.Helper()
	g, err := DecodeGGUF(bytes.NewReader(b), int64(len(b)), "test.gguf")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// everyType holds a value of every GGUF metadata type, arrays of each, and nested arrays.
var everyType = []kv{
	{"u8", uint8(200)}, {"i8", int8(-100)}, {"u16", uint16(60000)}, {"i16", int16(-30000)},
	{"u32", uint32(4000000000)}, {"i32", int32(-2000000000)}, {"f32", float32(0.15625)},
	{"t", true}, {"f", false}, {"s", "héllo"}, {"empty", ""},
	{"u64", uint64(1 << 63)}, {"i64", int64(-1 << 62)}, {"f64", 1e-300},
	{"a.u8", []uint8{1, 2}}, {"a.i8", []int8{-1, 1}}, {"a.u16", []uint16{65535}}, {"a.i16", []int16{-2}},
	{"a.u32", []uint32{7, 8, 9}}, {"a.i32", []int32{-7}}, {"a.f32", []float32{1.5, -2.25}},
	{"a.bool", []bool{true, false, true}}, {"a.str", []string{"a", "", "ccc"}},
	{"a.u64", []uint64{1 << 40}}, {"a.i64", []int64{-5}}, {"a.f64", []float64{math.Pi}},
	{"a.none", []string{}},
	{"a.nested", arr{TypeArray, []any{[]int32{1, 2}, []int32{}, []int32{3}}}},
	{"a.nested2", arr{TypeArray, []any{arr{TypeArray, []any{[]string{"x"}}}}}},
}

func TestMetadataEveryType(t *testing.T) {
	for _, version := range []uint32{2, 3} {
		g := decode(t, buildGGUF(version, everyType, nil, 0))
		if g.Version != version || g.Alignment != 32 || len(g.Tensors) != 0 {
			t.Fatalf("version %d: got version %d, alignment %d, %d tensors", version, g.Version, g.Alignment, len(g.Tensors))
		}
		var keys []string
		for _, e := range everyType {
			keys = append(keys, e.key)
			v, ok := g.Value(e.key)
			if !ok {
				t.Fatalf("%s missing", e.key)
			}
			if want := plain(e.val); !reflect.DeepEqual(plain(v), want) {
				t.Errorf("version %d, %s: got %#v (%s), want %#v", version, e.key, plain(v), v.TypeName(), want)
			}
		}
		if !reflect.DeepEqual(g.Keys(), keys) {
			t.Errorf("keys %v, want the file's order %v", g.Keys(), keys)
		}
	}
	g := decode(t, buildGGUF(3, everyType, nil, 0))
	for key, want := range map[string]string{"u8": "uint8", "a.str": "array of string", "a.nested": "array of array of int32", "a.nested2": "array of array of array of string"} {
		if v, _ := g.Value(key); v.TypeName() != want {
			t.Errorf("%s: type %q, want %q", key, v.TypeName(), want)
		}
	}
}

// plain turns a Value (or a writer's value) into Go values comparable with DeepEqual: nested
// arrays become []any of their elements.
func plain(v any) any {
	switch x := v.(type) {
	case Value:
		if a, ok := x.Any().([]Value); ok {
			out := []any{}
			for _, e := range a {
				out = append(out, plain(e))
			}
			return out
		}
		return x.Any()
	case arr:
		out := []any{}
		for _, e := range x.vals {
			out = append(out, plain(e))
		}
		return out
	}
	return v
}

func TestTypedAccessors(t *testing.T) {
	g := decode(t, buildGGUF(3, everyType, nil, 0))
	if s, err := g.String("s"); err != nil || s != "héllo" {
		t.Errorf("String: %q, %v", s, err)
	}
	if n, err := g.Uint32("u32"); err != nil || n != 4000000000 {
		t.Errorf("Uint32: %d, %v", n, err)
	}
	if f, err := g.Float32("f32"); err != nil || f != 0.15625 {
		t.Errorf("Float32: %v, %v", f, err)
	}
	if a, err := g.Strings("a.str"); err != nil || !reflect.DeepEqual(a, []string{"a", "", "ccc"}) {
		t.Errorf("Strings: %q, %v", a, err)
	}
	if a, err := g.Float32s("a.f32"); err != nil || !reflect.DeepEqual(a, []float32{1.5, -2.25}) {
		t.Errorf("Float32s: %v, %v", a, err)
	}
	if a, err := g.Int32s("a.i32"); err != nil || !reflect.DeepEqual(a, []int32{-7}) {
		t.Errorf("Int32s: %v, %v", a, err)
	}
	for _, c := range []struct {
		call func() error
		want string
	}{
		{func() error { _, err := g.Uint32("i32"); return err }, `metadata key "i32" is int32, not uint32`},
		{func() error { _, err := g.String("a.str"); return err }, `metadata key "a.str" is array of string, not string`},
		{func() error { _, err := g.Float32("f64"); return err }, `metadata key "f64" is float64, not float32`},
		{func() error { _, err := g.Strings("s"); return err }, `metadata key "s" is string, not array of string`},
		{func() error { _, err := g.Strings("a.u8"); return err }, `metadata key "a.u8" is array of uint8, not array of string`},
		{func() error { _, err := g.Uint32("nope"); return err }, `metadata key "nope" is not in the file (it has 29 keys)`},
	} {
		if err := c.call(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error containing %q", err, c.want)
		}
	}
}

func half(f float32) []byte { return le16(float32ToHalfExact(f)) }

func le16(h uint16) []byte { return []byte{byte(h), byte(h >> 8)} }

// float32ToHalfExact encodes the few halves the tests use, each exact in half precision.
func float32ToHalfExact(f float32) uint16 {
	for h := range 1 << 16 {
		if HalfToFloat32(uint16(h)) == f {
			return uint16(h)
		}
	}
	panic("not exact in half precision")
}

// Each type's block, with the values it holds worked out by hand from ggml's layouts.
func TestDequantizeBlocks(t *testing.T) {
	// Q4_1: d 0.25, m -1; byte j holds j (low nibble, element j) and 15-j (high, element j+16).
	q41 := append(append(half(0.25), half(-1)...), nibbles()...)
	wantQ41 := []float32{-1, -0.75, -0.5, -0.25, 0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.25, 2.5, 2.75,
		2.75, 2.5, 2.25, 2, 1.75, 1.5, 1.25, 1, 0.75, 0.5, 0.25, 0, -0.25, -0.5, -0.75, -1}
	// Q4_0: d 2, the same nibbles; element j is (j-8)·2, element j+16 is (7-j)·2.
	q40 := append(half(2), nibbles()...)
	wantQ40 := []float32{-16, -14, -12, -10, -8, -6, -4, -2, 0, 2, 4, 6, 8, 10, 12, 14,
		14, 12, 10, 8, 6, 4, 2, 0, -2, -4, -6, -8, -10, -12, -14, -16}
	// Q8_0: d -0.5; q runs -128, -127, 127, then 0..28.
	q80 := append(half(-0.5), 0x80, 0x81, 0x7F)
	wantQ80 := []float32{64, 63.5, -63.5}
	for q := range 29 {
		q80 = append(q80, byte(q))
		wantQ80 = append(wantQ80, -0.5*float32(q))
	}
	// F16: 1, -2, 1/3 rounded to half (1+341/1024)/4, the smallest subnormal 2^-24, the largest
	// half 65504, -0, +Inf.
	f16 := []byte{0x00, 0x3C, 0x00, 0xC0, 0x55, 0x35, 0x01, 0x00, 0xFF, 0x7B, 0x00, 0x80, 0x00, 0x7C}
	wantF16 := []float32{1, -2, 0.333251953125, 1.0 / (1 << 24), 65504, float32(math.Copysign(0, -1)), float32(math.Inf(1))}
	// BF16: the top half of float32's bits: 1, -3, 3.140625.
	bf16 := []byte{0x80, 0x3F, 0x40, 0xC0, 0x49, 0x40}
	wantBF16 := []float32{1, -3, 3.140625}
	f32 := []byte{0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x20, 0xC1} // 1, -10
	wantF32 := []float32{1, -10}

	cases := []struct {
		name string
		typ  TensorType
		data []byte
		want []float32
	}{
		{"q41", Q4_1, q41, wantQ41}, {"q40", Q4_0, q40, wantQ40}, {"q80", Q8_0, q80, wantQ80},
		{"f16", F16, f16, wantF16}, {"bf16", BF16, bf16, wantBF16}, {"f32", F32, f32, wantF32},
	}
	var specs []tensorSpec
	for _, c := range cases {
		specs = append(specs, tensorSpec{c.name, []uint64{uint64(len(c.want))}, c.typ, c.data})
	}
	g := decode(t, buildGGUF(3, []kv{{"general.architecture", "test"}}, specs, 0))
	for _, c := range cases {
		got, err := g.Tensor(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if !sameBits(got, c.want) {
			t.Errorf("%s (%s): got %v, want %v", c.name, c.typ, got, c.want)
		}
		info, _ := g.TensorInfo(c.name)
		if info.Type != c.typ || info.Bytes() != int64(len(c.data)) || info.Offset%32 != 0 {
			t.Errorf("%s: info %+v, bytes %d", c.name, info, info.Bytes())
		}
	}
	if v := HalfToFloat32(0x7E00); !math.IsNaN(float64(v)) {
		t.Errorf("half 0x7E00 is %v, want NaN", v)
	}
}

func nibbles() []byte {
	b := make([]byte, 16)
	for j := range b {
		b[j] = byte(j) | byte(15-j)<<4
	}
	return b
}

// sameBits compares floats bit for bit, so that -0 and +0 differ.
func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// A matrix of three rows of 32 Q8_0 values: rows read alone equal the same rows of the whole.
func TestTensorRows(t *testing.T) {
	var data []byte
	var want []float32
	for r := range 3 {
		data = append(data, half(float32(r+1))...)
		for j := range 32 {
			data = append(data, byte(j))
			want = append(want, float32((r+1)*j))
		}
	}
	g := decode(t, buildGGUF(3, nil, []tensorSpec{{"m", []uint64{32, 3}, Q8_0, data}}, 0))
	if all, err := g.Tensor("m"); err != nil || !sameBits(all, want) {
		t.Fatalf("whole: %v, %v", all, err)
	}
	if rows, err := g.TensorRows("m", 1, 2); err != nil || !sameBits(rows, want[32:]) {
		t.Fatalf("rows 1-2: %v, %v", rows, err)
	}
	for _, c := range [][2]int64{{2, 2}, {-1, 1}, {4, 0}, {0, -1}} {
		if _, err := g.TensorRows("m", c[0], c[1]); err == nil || !strings.Contains(err.Error(), "it has 3") {
			t.Errorf("rows %v: %v", c, err)
		}
	}
	if _, err := g.Tensor("absent"); err == nil || !strings.Contains(err.Error(), `no tensor "absent"`) {
		t.Errorf("absent tensor: %v", err)
	}
}

// general.alignment moves the data section and every tensor's offset to its multiples.
func TestAlignment(t *testing.T) {
	tensors := []tensorSpec{
		{"a", []uint64{3}, F32, []byte{0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64}}, // 1, 2, 3
		{"b", []uint64{1}, F16, []byte{0x00, 0x3C}},
	}
	g := decode(t, buildGGUF(3, []kv{{"general.alignment", uint32(64)}}, tensors, 64))
	if g.Alignment != 64 || g.DataOffset%64 != 0 || g.Tensors[1].Offset != 64 {
		t.Fatalf("alignment %d, data at %d, b at %d", g.Alignment, g.DataOffset, g.Tensors[1].Offset)
	}
	if b, err := g.Tensor("b"); err != nil || b[0] != 1 {
		t.Fatalf("b: %v, %v", b, err)
	}
	if a, err := g.Tensor("a"); err != nil || !sameBits(a, []float32{1, 2, 3}) {
		t.Fatalf("a: %v, %v", a, err)
	}
	// Without the key the default applies: a file laid out for 64 is misread as 32 only where
	// offsets differ, and the writer's offsets (0, 64) are multiples of 32 too.
	g = decode(t, buildGGUF(3, nil, tensors, 0))
	if g.Alignment != 32 || g.DataOffset%32 != 0 || g.Tensors[1].Offset != 32 {
		t.Fatalf("default: alignment %d, data at %d, b at %d", g.Alignment, g.DataOffset, g.Tensors[1].Offset)
	}
}

// Each corruption is refused with an error naming the field, its value and the limit.
func TestCorruptRefused(t *testing.T) {
	one := []tensorSpec{{"w", []uint64{32}, Q4_1, make([]byte, 20)}}
	good := buildGGUF(3, []kv{{"k", uint32(1)}}, one, 0)
	patch := func(b []byte, at int, v ...byte) []byte {
		c := bytes.Clone(b)
		copy(c[at:], v)
		return c
	}
	// Offsets in good: magic 0, version 4, tensors 8, keys 16, key "k" at 24 (length) and 32,
	// its type at 33, value at 37; tensor name length at 41, name at 49, dims count 50, dim 54,
	// type 62, offset 66.
	withTensor := func(dims []uint64, typ TensorType, data []byte) []byte {
		return buildGGUF(3, nil, []tensorSpec{{"w", dims, typ, data}}, 0)
	}
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"magic", patch(good, 0, 'G', 'G', 'M', 'L'), `magic is "GGML", not "GGUF"`},
		{"version 1", patch(good, 4, 1), "version 1 is not supported (versions 2 and 3 are"},
		{"big-endian", patch(good, 4, 0, 0, 0, 3), "version 50331648 is not supported"},
		{"tensor count", patch(good, 8, 0, 0, 0, 0, 0, 0, 0, 1), "tensor count 72057594037927936 (at byte 8): the"},
		{"key count", patch(good, 16, 0xFF, 0xFF, 0xFF, 0xFF), "metadata key count 4294967295 (at byte 16)"},
		{"key length", patch(good, 24, 0, 0, 0, 0, 0, 1), "metadata key 0: string length 1099511627776 (at byte 24) is past the end of the file"},
		{"value type", patch(good, 33, 13), `metadata key "k": value type 13 at byte 33 is not a GGUF type (0 to 12)`},
		{"dims", patch(good, 50, 5), `tensor "w": 5 dimensions (1 to 4 allowed)`},
		{"dim zero", patch(good, 54, 0), `tensor "w": dimension 0 is 0: each must be at least 1`},
		{"tensor type", patch(good, 62, 16), `tensor "w": type 16 has no known block layout (known: F32, F16`},
		{"offset", patch(good, 66, 32), `tensor "w": its 20 bytes at offset 32 end past the data section (20 bytes from byte`},
		{"offset unaligned", patch(good, 66, 4), `tensor "w": offset 4 is not a multiple of the alignment 32`},
		{"row length", withTensor([]uint64{16}, Q4_1, make([]byte, 10)), `tensor "w": row length (dimension 0) 16 is not a multiple of Q4_1's block of 32`},
		{"elements", withTensor([]uint64{1 << 31, 1 << 31, 1 << 31}, F32, nil), `tensor "w": dimension 1 is 2147483648: each must be at least 1, and all together hold at most 2^60 elements`},
		{"duplicate key", buildGGUF(3, []kv{{"k", "a"}, {"k", "b"}}, nil, 0), `metadata key 1: "k" is given twice`},
		{"duplicate tensor", buildGGUF(3, nil, append(one, one...), 0), `tensor 1: name "w" is also tensor 0's`},
		{"bool", buildGGUF(3, []kv{{"b", uint8(2)}}, nil, 0), ""}, // a uint8 2 is fine; see "bool 2"
		{"bool 2", patch(buildGGUF(3, []kv{{"b", true}}, nil, 0), 37, 2), `metadata key "b": bool is 2, not 0 or 1`},
		{"array bool 2", patch(buildGGUF(3, []kv{{"b", []bool{true}}}, nil, 0), 49, 2), `metadata key "b": element 0: bool is 2, not 0 or 1`},
		{"array type", patch(buildGGUF(3, []kv{{"a", []uint8{1}}}, nil, 0), 37, 99), `metadata key "a": array element type 99 at byte 37 is not a GGUF type`},
		{"array length", patch(buildGGUF(3, []kv{{"a", []uint32{1}}}, nil, 0), 41, 9), `metadata key "a": array length 9 (at byte 41): the 15 bytes left in the file hold at most 3 (4 bytes each)`},
		{"string element", patch(buildGGUF(3, []kv{{"a", []string{"x"}}}, nil, 0), 49, 200), `metadata key "a": element 0: string length 200 (at byte 49) is past the end of the file (7 bytes left)`},
		{"alignment 48", buildGGUF(3, []kv{{"general.alignment", uint32(48)}}, nil, 0), `"general.alignment" is 48: not a power of two from 1 to 1048576`},
		{"alignment type", buildGGUF(3, []kv{{"general.alignment", uint64(32)}}, nil, 0), `"general.alignment" is uint64, not uint32`},
		{"nesting", buildGGUF(3, []kv{{"n", deep(9)}}, nil, 0), `metadata key "n": element 0: element 0: element 0: element 0: element 0: element 0: element 0: element 0: arrays nested 9 deep`},
	}
	for _, c := range cases {
		_, err := DecodeGGUF(bytes.NewReader(c.b), int64(len(c.b)), "bad.gguf")
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), "bad.gguf: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v\nwant an error containing %q", c.name, err, c.want)
		}
	}
	if _, err := DecodeGGUF(bytes.NewReader(buildGGUF(3, []kv{{"n", deep(8)}}, nil, 0)), int64(len(buildGGUF(3, []kv{{"n", deep(8)}}, nil, 0))), "ok"); err != nil {
		t.Errorf("arrays nested 8 deep: %v", err)
	}
}

// deep is an array nested n deep (n ≥ 1), holding one uint8 at the bottom.
func deep(n int) any {
	if n == 1 {
		return []uint8{1}
	}
	return arr{TypeArray, []any{deep(n - 1)}}
}

// smallFile has metadata of several types and tensors of three types over two alignments.
func smallFile() []byte {
	meta := []kv{{"general.architecture", "llama"}, {"llama.block_count", uint32(2)}, {"a", []string{"x", "yz"}},
		{"n", arr{TypeArray, []any{[]int16{1}}}}, {"f", 1.5}}
	tensors := []tensorSpec{
		{"q", []uint64{32, 2}, Q4_1, bytes.Repeat([]byte{0x00, 0x3C, 0x00, 0xBC, 0x21}, 8)},
		{"e", []uint64{32}, Q8_0, append(half(0.5), bytes.Repeat([]byte{3}, 32)...)},
		{"n", []uint64{2}, F32, []byte{0, 0, 128, 63, 0, 0, 0, 64}},
	}
	return buildGGUF(3, meta, tensors, 0)
}

// Every prefix of a valid file is refused, without a panic.
func TestTruncatedRefused(t *testing.T) {
	b := smallFile()
	decode(t, b)
	for n := range len(b) {
		g, err := DecodeGGUF(bytes.NewReader(b[:n]), int64(n), "cut.gguf")
		if err == nil {
			t.Fatalf("the file cut at byte %d of %d was accepted (%d tensors)", n, len(b), len(g.Tensors))
		}
		if !strings.HasPrefix(err.Error(), "cut.gguf: ") {
			t.Fatalf("cut at %d: %v", n, err)
		}
	}
}

func TestUnsupportedTensorRefused(t *testing.T) {
	g := decode(t, buildGGUF(3, nil, []tensorSpec{{"blk.0.ffn_up.weight", []uint64{256}, Q4_K, make([]byte, 144)}}, 0))
	_, err := g.Tensor("blk.0.ffn_up.weight")
	if err == nil || !strings.Contains(err.Error(), `tensor "blk.0.ffn_up.weight" is Q4_K, which is not dequantised`) {
		t.Fatalf("Q4_K: %v", err)
	}
	if err := Dequantize(Q5_0, make([]byte, 22), make([]float32, 32)); err == nil || !strings.Contains(err.Error(), "Q5_0 is not dequantised") {
		t.Fatalf("Dequantize Q5_0: %v", err)
	}
	if err := Dequantize(Q4_1, make([]byte, 19), make([]float32, 32)); err == nil || !strings.Contains(err.Error(), "32 elements of Q4_1 take 20 bytes, not 19") {
		t.Fatalf("short block: %v", err)
	}
}

func TestOpenGGUF(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.gguf")
	b := smallFile()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := OpenGGUF(path)
	if err != nil {
		t.Fatal(err)
	}
	if e, err := g.Tensor("e"); err != nil || e[0] != 1.5 {
		t.Fatalf("e: %v, %v", e, err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	t.Setenv(limits.Model.Env(), "100")
	_, err = OpenGGUF(path)
	if !errors.Is(err, limits.ErrTooLarge) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "GRAFTRL_MAX_MODEL_BYTES") {
		t.Fatalf("over the limit: %v", err)
	}
	if _, err := OpenGGUF(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a directory: %v", err)
	}
}

// FuzzReadGGUF: any bytes are read or refused without a panic, and a file that is read has every
// tensor readable or refused the same way.
func FuzzReadGGUF(f *testing.F) {
	f.Add(smallFile())
	f.Add(buildGGUF(2, everyType, nil, 0))
	f.Add(buildGGUF(3, []kv{{"general.alignment", uint32(64)}}, []tensorSpec{{"b", []uint64{1}, F16, []byte{0x00, 0x3C}}}, 64))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := DecodeGGUF(bytes.NewReader(b), int64(len(b)), "fuzz.gguf")
		if err != nil {
			return
		}
		for _, ti := range g.Tensors {
			if ti.Offset+uint64(ti.Bytes()) > uint64(len(b)) {
				t.Fatalf("tensor %q: %d bytes at %d accepted in a file of %d", ti.Name, ti.Bytes(), ti.Offset, len(b))
			}
			if v, err := g.Tensor(ti.Name); err == nil && int64(len(v)) != ti.Elements() {
				t.Fatalf("tensor %q: %d values for %d elements", ti.Name, len(v), ti.Elements())
			}
		}
	})
}
