package modelfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/internal/limits"
)

// stFile builds a safetensors file by hand: the 8-byte length, the header as given, the data.
func stFile(header string, data ...byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	return append(append(b, header...), data...)
}

func decodeST(b []byte) (*Safetensors, error) {
	return DecodeSafetensors(bytes.NewReader(b), int64(len(b)), "test.safetensors")
}

// TestSafetensorsHandBuilt reads a file written byte by byte: F16, BF16 and F32 tensors listed
// out of data order, with __metadata__, values worked out by hand.
func TestSafetensorsHandBuilt(t *testing.T) {
	header := `{"b":{"dtype":"BF16","shape":[2],"data_offsets":[4,8]},` +
		`"__metadata__":{"format":"pt"},` +
		`"a":{"dtype":"F16","shape":[1,2],"data_offsets":[0,4]},` +
		`"c":{"dtype":"F32","shape":[],"data_offsets":[8,12]},` +
		`"i":{"dtype":"I32","shape":[1],"data_offsets":[12,16]}}   `
	data := []byte{
		0x00, 0x3C, 0x00, 0xC0, // F16 1, −2
		0x80, 0x3F, 0x49, 0x40, // BF16 1, 3.140625
		0x00, 0x00, 0x20, 0xC1, // F32 −10
		7, 0, 0, 0, // I32 7
	}
	s, err := decodeST(stFile(header, data...))
	if err != nil {
		t.Fatal(err)
	}
	if s.DataOffset != int64(8+len(header)) || !reflect.DeepEqual(s.Metadata, map[string]string{"format": "pt"}) {
		t.Errorf("data offset %d, metadata %v", s.DataOffset, s.Metadata)
	}
	var names []string
	for _, ti := range s.Tensors {
		names = append(names, ti.Name)
	}
	if !reflect.DeepEqual(names, []string{"a", "b", "c", "i"}) {
		t.Errorf("tensors in data order: %v", names)
	}
	for name, want := range map[string][]float32{"a": {1, -2}, "b": {1, 3.140625}, "c": {-10}} {
		got, err := s.Tensor(name)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v (%v), want %v", name, got, err, want)
		}
	}
	if info, ok := s.TensorInfo("a"); !ok || !reflect.DeepEqual(info.Shape, []int64{1, 2}) || info.Elements() != 2 {
		t.Errorf("a: %+v", info)
	}
	_, err = s.Tensor("i")
	if err == nil || !strings.Contains(err.Error(), `tensor "i" is I32; only F32, F16, BF16 are read`) {
		t.Errorf("I32 tensor: %v", err)
	}
	if _, err := s.Tensor("zz"); err == nil || !strings.Contains(err.Error(), `no tensor "zz"`) {
		t.Errorf("missing tensor: %v", err)
	}
}

// TestWriteSafetensors: the writer's bytes for a small case, written out by hand, and a round
// trip of values that float32 must keep bit for bit.
func TestWriteSafetensors(t *testing.T) {
	var b bytes.Buffer
	err := WriteSafetensors(&b, []SafetensorsTensor{{Name: "w<1>", Shape: []int64{2}, Data: []float32{1, -2}}}, map[string]string{"format": "pt"})
	if err != nil {
		t.Fatal(err)
	}
	header := `{"__metadata__":{"format":"pt"},"w<1>":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`
	for (8+len(header))%8 != 0 {
		header += " "
	}
	want := stFile(header, 0, 0, 0x80, 0x3F, 0, 0, 0, 0xC0)
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("wrote\n%q\nwant\n%q", b.Bytes(), want)
	}

	odd := []float32{float32(math.Inf(-1)), float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, math.MaxFloat32, float32(math.NaN())}
	tensors := []SafetensorsTensor{
		{Name: "m", Shape: []int64{2, 3}, Data: []float32{1, 2, 3, 4, 5, 6}},
		{Name: "odd", Shape: []int64{5}, Data: odd},
		{Name: "empty", Shape: []int64{0, 4}, Data: nil},
		{Name: "scalar", Shape: []int64{}, Data: []float32{0.1}},
	}
	b.Reset()
	if err := WriteSafetensors(&b, tensors, nil); err != nil {
		t.Fatal(err)
	}
	s, err := decodeST(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if s.DataOffset%8 != 0 || len(s.Metadata) != 0 {
		t.Errorf("data offset %d (want a multiple of 8), metadata %v", s.DataOffset, s.Metadata)
	}
	for _, want := range tensors {
		info, _ := s.TensorInfo(want.Name)
		got, err := s.Tensor(want.Name)
		if err != nil || !reflect.DeepEqual(info.Shape, want.Shape) || len(got) != len(want.Data) {
			t.Fatalf("%s: %v %v (%v)", want.Name, info.Shape, got, err)
		}
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want.Data[i]) {
				t.Errorf("%s[%d]: %v, want %v", want.Name, i, got[i], want.Data[i])
			}
		}
	}
	for _, bad := range [][]SafetensorsTensor{
		{{Name: "a", Shape: []int64{3}, Data: []float32{1}}},
		{{Name: "a", Data: []float32{1}}, {Name: "a", Data: []float32{1}}},
		{{Name: "__metadata__", Data: []float32{1}}},
	} {
		if err := WriteSafetensors(&bytes.Buffer{}, bad, nil); err == nil {
			t.Errorf("%+v written", bad)
		}
	}
}

// TestSafetensorsCorruptRefused: each corruption is refused with a message naming what is wrong.
func TestSafetensorsCorruptRefused(t *testing.T) {
	f32 := []byte{0, 0, 0x80, 0x3F}
	ok := `{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`
	huge := binary.LittleEndian.AppendUint64(nil, 1<<40)
	for _, c := range []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "too short for the 8-byte header length"},
		{"length past the end", stFile(ok)[:20], "header length 54 is past the end of the file (12 bytes follow"},
		{"huge length", append(huge, make([]byte, 16)...), "past the end of the file"},
		{"not JSON", stFile("GGUF\x03\x00\x00\x00", f32...), "starts with 'G', not '{'"},
		{"bad JSON", stFile(`{"a":{"dtype":"F32",`, f32...), "header:"},
		{"key twice", stFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, f32...), `key "a" is given twice`},
		{"metadata twice", stFile(`{"__metadata__":{},"__metadata__":{}}`), `key "__metadata__" is given twice`},
		{"metadata not strings", stFile(`{"__metadata__":{"n":1}}`), "__metadata__:"},
		{"unknown dtype", stFile(`{"a":{"dtype":"Q4","shape":[1],"data_offsets":[0,4]}}`, f32...), `tensor "a": dtype "Q4" is not a safetensors dtype (known: BF16, BOOL,`},
		{"missing dtype", stFile(`{"a":{"shape":[1],"data_offsets":[0,4]}}`, f32...), "dtype, shape and data_offsets are all required"},
		{"unknown field", stFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}}`, f32...), `unknown field "x"`},
		{"negative dim", stFile(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`, f32...), "shape dimension 0 is -1"},
		{"fraction dim", stFile(`{"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}}`, f32...), "shape dimension 0 is 1.5"},
		{"overflowing dims", stFile(`{"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}}`, f32...), "at most 2^56 elements"},
		{"three offsets", stFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}}`, f32...), "data_offsets has 3 numbers"},
		{"size mismatch", stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`, f32...), "data_offsets [0, 4] hold 4 bytes; its shape [2] of F32 takes 8"},
		{"offset past the end", stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, f32...), `tensor "a": its data [0, 8) ends past the end of the file (the data section has 4 bytes`},
		{"gap", stFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, append(f32, f32...)...), `tensor "a": data_offsets begin at 4, want 0`},
		{"overlap", stFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, f32...), `data_offsets begin at 0, want 4`},
		{"trailing bytes", stFile(ok, append(f32, 1)...), "the tensors' data ends at 4, but the data section has 5 bytes"},
		{"junk after header", stFile(ok+"x", f32...), "1 bytes after the JSON object"},
	} {
		_, err := decodeST(c.file)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "test.safetensors: ") {
			t.Errorf("%s: %v, want an error naming the file and containing %q", c.name, err, c.want)
		}
	}
}

// TestSafetensorsTruncatedRefused: every prefix of a valid file is refused, never a panic.
func TestSafetensorsTruncatedRefused(t *testing.T) {
	var b bytes.Buffer
	if err := WriteSafetensors(&b, []SafetensorsTensor{{Name: "a", Shape: []int64{2}, Data: []float32{1, 2}}, {Name: "b", Shape: []int64{1}, Data: []float32{3}}}, map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	full := b.Bytes()
	if _, err := decodeST(full); err != nil {
		t.Fatal(err)
	}
	for n := range len(full) {
		if _, err := decodeST(full[:n]); err == nil {
			t.Errorf("a prefix of %d of %d bytes was read", n, len(full))
		}
	}
}

func writeST(t *testing.T, path string, tensors ...SafetensorsTensor) {
	t.Helper()
	var b bytes.Buffer
	if err := WriteSafetensors(&b, tensors, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSafetensorsDir: one file, or shards through the index; refusals name the index and shard.
func TestSafetensorsDir(t *testing.T) {
	dir := t.TempDir()
	if _, err := OpenSafetensorsDir(dir); err == nil || !strings.Contains(err.Error(), "neither model.safetensors nor model.safetensors.index.json") {
		t.Errorf("empty dir: %v", err)
	}
	writeST(t, filepath.Join(dir, "model-00002-of-00002.safetensors"), SafetensorsTensor{Name: "z", Shape: []int64{1}, Data: []float32{3}}, SafetensorsTensor{Name: "stray", Shape: []int64{1}, Data: []float32{9}})
	writeST(t, filepath.Join(dir, "model-00001-of-00002.safetensors"), SafetensorsTensor{Name: "y", Shape: []int64{2}, Data: []float32{1, 2}}, SafetensorsTensor{Name: "x", Shape: []int64{1}, Data: []float32{0}})
	index := func(body string) {
		if err := os.WriteFile(filepath.Join(dir, SafetensorsIndexFile), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	index(`{"metadata":{"total_size":16},"weight_map":{"z":"model-00002-of-00002.safetensors","x":"model-00001-of-00002.safetensors","y":"model-00001-of-00002.safetensors"}}`)
	d, err := OpenSafetensorsDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Names(); !reflect.DeepEqual(got, []string{"y", "x", "z"}) {
		t.Errorf("names %v, want the shards' tensors in data order, the unlisted one left out", got)
	}
	if v, err := d.Tensor("y"); err != nil || !reflect.DeepEqual(v, []float32{1, 2}) {
		t.Errorf("y: %v %v", v, err)
	}
	if _, file, ok := d.TensorInfo("z"); !ok || filepath.Base(file) != "model-00002-of-00002.safetensors" {
		t.Errorf("z is in %q", file)
	}
	if _, err := d.Tensor("stray"); err == nil {
		t.Error("a tensor the index does not list was read")
	}
	d.Close()
	for body, want := range map[string]string{
		`{"weight_map":{}}`: "weight_map is missing or empty",
		`{"weight_map":{"x":"../model-00001-of-00002.safetensors"}}`: `shard "../model-00001-of-00002.safetensors" is not a file name`,
		`{"weight_map":{"q":"model-00001-of-00002.safetensors"}}`:    `names tensor "q" in model-00001-of-00002.safetensors, which does not hold it`,
		`{"weight_map":{"x":"model-00003-of-00003.safetensors"}}`:    "model-00003-of-00003.safetensors: no such file",
		`[1]`: "want {\"weight_map\"",
	} {
		index(body)
		if _, err := OpenSafetensorsDir(dir); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("index %s: %v, want %q", body, err, want)
		}
	}
	// model.safetensors, when present, is the checkpoint (as transformers prefers it).
	writeST(t, filepath.Join(dir, SafetensorsFile), SafetensorsTensor{Name: "only", Shape: []int64{1}, Data: []float32{5}})
	d, err = OpenSafetensorsDir(dir)
	if err != nil || !reflect.DeepEqual(d.Names(), []string{"only"}) {
		t.Fatalf("single file: %v", err)
	}
	d.Close()
}

func TestOpenSafetensorsLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.safetensors")
	writeST(t, path, SafetensorsTensor{Name: "a", Shape: []int64{64}, Data: make([]float32, 64)})
	t.Setenv(limits.Model.Env(), "100")
	_, err := OpenSafetensors(path)
	if !errors.Is(err, limits.ErrTooLarge) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "GRAFTRL_MAX_MODEL_BYTES") {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := OpenSafetensors(filepath.Dir(path)); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: %v", err)
	}
}

// FuzzReadSafetensors: any input is read or refused; a file that is read has every tensor
// inside it, and its float tensors read back with their element count.
func FuzzReadSafetensors(f *testing.F) {
	var b bytes.Buffer
	_ = WriteSafetensors(&b, []SafetensorsTensor{{Name: "a", Shape: []int64{2}, Data: []float32{1, 2}}}, map[string]string{"k": "v"})
	f.Add(b.Bytes())
	f.Add(stFile(`{"a":{"dtype":"F16","shape":[1,2],"data_offsets":[0,4]},"b":{"dtype":"I8","shape":[3],"data_offsets":[4,7]}}`, make([]byte, 7)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := decodeST(data)
		if err != nil {
			return
		}
		for _, ti := range s.Tensors {
			if ti.Begin < 0 || ti.End > int64(len(data))-s.DataOffset {
				t.Fatalf("%s out of bounds", ti.Name)
			}
			if v, err := s.Tensor(ti.Name); err == nil && int64(len(v)) != ti.Elements() {
				t.Fatalf("%s: %d values of %d", ti.Name, len(v), ti.Elements())
			}
		}
	})
}
