package host

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/modelfile"
)

// ggufWithStrings is a GGUF v3 with no tensors and the given string metadata, written by hand
// from the format's layout (magic, version, counts, then key, type 8 = string, value; padded to 32).
func ggufWithStrings(t *testing.T, kv ...string) *modelfile.GGUF {
	t.Helper()
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	str := func(s string) { le(uint64(len(s))); b.WriteString(s) }
	b.WriteString("GGUF")
	le(uint32(3))
	le(uint64(0))
	le(uint64(len(kv) / 2))
	for i := 0; i < len(kv); i += 2 {
		str(kv[i])
		le(uint32(8))
		str(kv[i+1])
	}
	// The empty data section still starts at the next multiple of the default alignment, 32.
	b.Write(make([]byte, (32-b.Len()%32)%32))
	g, err := modelfile.DecodeGGUF(bytes.NewReader(b.Bytes()), int64(b.Len()), "test.gguf")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestLoadLlamaGGUFRefusesOtherArchitectures: a GGUF of another architecture, or of none, is
// refused naming what was found and what is allowed.
func TestLoadLlamaGGUFRefusesOtherArchitectures(t *testing.T) {
	_, err := LoadLlamaGGUF(ggufWithStrings(t, "general.architecture", "gpt2"))
	if err == nil || !strings.Contains(err.Error(), `"gpt2"`) || !strings.Contains(err.Error(), "only llama is read") {
		t.Errorf("gpt2 GGUF: %v, want a refusal naming gpt2 and llama", err)
	}
	_, err = LoadLlamaGGUF(ggufWithStrings(t))
	if err == nil || !strings.Contains(err.Error(), "general.architecture") || !strings.Contains(err.Error(), "llama") {
		t.Errorf("GGUF without an architecture: %v, want a refusal naming general.architecture", err)
	}
}
