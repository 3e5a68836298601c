package bpe

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/modelfile"
)

// tinyGGUF is a GGUF holding only a tokenizer: a, b, ab and the space (Ġ), with merges as given
// (nil for none).
func tinyGGUF(t *testing.T, merges []string) *modelfile.GGUF {
	t.Helper()
	kvs := []modelfile.KV{
		{Key: "tokenizer.ggml.model", Value: "gpt2"}, {Key: "tokenizer.ggml.pre", Value: "smollm"},
		{Key: "tokenizer.ggml.tokens", Value: []string{"a", "b", "ab", "Ġ"}},
		{Key: "tokenizer.ggml.token_type", Value: []int32{1, 1, 1, 1}},
	}
	if merges != nil {
		kvs = append(kvs, modelfile.KV{Key: "tokenizer.ggml.merges", Value: merges})
	}
	var b bytes.Buffer
	if err := modelfile.WriteGGUF(&b, kvs, nil); err != nil {
		t.Fatal(err)
	}
	g, err := modelfile.DecodeGGUF(bytes.NewReader(b.Bytes()), int64(b.Len()), "tiny.gguf")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestFromGGUFMerges: with its one merge the tiny tokenizer encodes "ab a" as ab, Ġ, a (ids 2, 3,
// 0); with an empty merge list, or none, it is refused.
func TestFromGGUFMerges(t *testing.T) {
	tok, err := FromGGUF(tinyGGUF(t, []string{"a b"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := tok.Encode(nil, "ab a"); !slices.Equal(got, []int32{2, 3, 0}) {
		t.Errorf(`"ab a" is %v, want [2 3 0]`, got)
	}
	for _, c := range []struct {
		merges []string
		want   string
	}{
		{[]string{}, "bpe: tokenizer.ggml.merges is empty; a byte-level BPE tokenizer needs its merges"},
		{nil, `bpe: tiny.gguf: metadata key "tokenizer.ggml.merges" is not in the file`},
	} {
		if _, err := FromGGUF(tinyGGUF(t, c.merges)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("merges %q: %v, want an error containing %q", c.merges, err, c.want)
		}
	}
}
