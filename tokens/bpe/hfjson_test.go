package bpe

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/modelfile"
)

// handTokenizer is a tokenizer.json as the tokenizers library writes one, for a vocabulary of
// seven tokens spelled in GPT-2's byte alphabet (Ġ is the space), its merges as pairs.
const handTokenizer = `{
  "version": "1.0", "truncation": null, "padding": null,
  "added_tokens": [{"id": 6, "content": "<|im_end|>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}],
  "normalizer": null,
  "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": true}, {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}]},
  "post_processor": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
  "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
  "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null, "end_of_word_suffix": null,
    "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
    "vocab": {"a": 0, "b": 1, "ab": 2, "Ġ": 3, "Ġab": 4, "c": 5, "<|im_end|>": 6},
    "merges": [["a", "b"], ["Ġ", "ab"]]}
}`

// TestFromHFJSONHand: "ab ab<|im_end|>c" splits into "ab", " ab", the special token and "c";
// the merges a+b then Ġ+ab give ids 2, 4, 6, 5 (worked out by hand). Merges written as strings
// give the same tokenizer, and HFJSON's files read back to it.
func TestFromHFJSONHand(t *testing.T) {
	cfg := []byte(`{"eos_token": {"content": "<|im_end|>"}, "pad_token": "<|im_end|>", "chat_template": "T"}`)
	tok, err := FromHFJSON(HFFiles{Tokenizer: []byte(handTokenizer), Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	want := []int32{2, 4, 6, 5}
	if got := tok.Encode(nil, "ab ab<|im_end|>c"); !slices.Equal(got, want) {
		t.Errorf("ids %v, want %v", got, want)
	}
	if got := tok.Decode(want); got != "ab ab<|im_end|>c" {
		t.Errorf("decoded %q", got)
	}
	if sp := tok.Specials(); sp != (Specials{BOS: NoID, EOS: 6, Unk: NoID, Pad: 6}) || tok.ChatTemplateText() != "T" {
		t.Errorf("specials %+v, template %q", sp, tok.ChatTemplateText())
	}
	asStrings := strings.Replace(handTokenizer, `[["a", "b"], ["Ġ", "ab"]]`, `["a b", "Ġ ab"]`, 1)
	tok2, err := FromHFJSON(HFFiles{Tokenizer: []byte(asStrings), Config: cfg, ChatTemplate: []byte("J")})
	if err != nil || !slices.Equal(tok2.Encode(nil, "ab ab<|im_end|>c"), want) || tok2.ChatTemplateText() != "J" {
		t.Errorf("merges as strings: %v; chat_template.jinja should replace the config's template", err)
	}
	files, err := tok.HFJSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := FromHFJSON(files)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Encode(nil, "ab ab<|im_end|>c"), want) || back.Specials() != tok.Specials() || back.ChatTemplateText() != "T" {
		t.Errorf("HFJSON's files read back to %v, %+v", back.Encode(nil, "ab ab<|im_end|>c"), back.Specials())
	}
	tokens, types, merges := back.Vocabulary()
	if !slices.Equal(tokens, []string{"a", "b", "ab", "Ġ", "Ġab", "c", "<|im_end|>"}) || !slices.Equal(types, []int32{1, 1, 1, 1, 1, 1, 3}) || !slices.Equal(merges, []string{"a b", "Ġ ab"}) {
		t.Errorf("vocabulary %q %v %q", tokens, types, merges)
	}
}

// TestFromHFJSONRefused: each field this package does not implement is refused, naming it.
func TestFromHFJSONRefused(t *testing.T) {
	for _, c := range []struct {
		name, old, new, want string
	}{
		{"wordpiece", `"type": "BPE"`, `"type": "WordPiece"`, `model.type is "WordPiece"; only "BPE"`},
		{"no merges", `"merges": [["a", "b"], ["Ġ", "ab"]]`, `"merges": []`, "model.merges is missing or empty; a byte-level BPE tokenizer needs its merges"},
		{"merges missing", `"merges": [["a", "b"], ["Ġ", "ab"]]`, `"other": []`, "model.merges is missing or empty"},
		{"byte fallback", `"byte_fallback": false`, `"byte_fallback": true`, "byte_fallback"},
		{"normalizer", `"normalizer": null`, `"normalizer": {"type": "NFC"}`, `normalizer is {"type": "NFC"}; only null`},
		{"gpt2 split", `{"type": "Digits", "individual_digits": true}, `, ``, "pre_tokenizer is"},
		{"prefix space", `"add_prefix_space": false`, `"add_prefix_space": true`, "pre_tokenizer is"},
		{"decoder", `"decoder": {"type": "ByteLevel"`, `"decoder": {"type": "Metaspace"`, "decoder is"},
		{"gap", `"c": 5,`, ``, "no token has id 5 (ids must run from 0 to 6)"},
		{"clash", `"c": 5,`, `"c": 5, "d": 5,`, "id 5 is both"},
		{"bad merge", `["Ġ", "ab"]`, `["Ġ", "ab", "c"]`, `model.merges[1] is ["Ġ", "ab", "c"]`},
		{"merge of unknown", `["Ġ", "ab"]`, `["c", "c"]`, `merge 1 "c c"`},
		{"not JSON", `"version"`, `version`, "tokenizer.json: invalid character"},
	} {
		_, err := FromHFJSON(HFFiles{Tokenizer: []byte(strings.Replace(handTokenizer, c.old, c.new, 1))})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	_, err := FromHFJSON(HFFiles{Tokenizer: []byte(handTokenizer), Config: []byte(`{"bos_token": "<s>"}`)})
	if err == nil || !strings.Contains(err.Error(), "tokenizer_config.json: bos_token is <s>, not a token of the vocabulary") {
		t.Errorf("unknown bos: %v", err)
	}
}

// TestHFJSONSmolLM2: SmolLM2's tokenizer written as tokenizer.json and tokenizer_config.json and
// read back gives FromGGUF's ids on the reference's 1,200 strings, its decodes on the 300 id
// sequences, its special ids and chat template, and the GGUF's vocabulary and merges.
func TestHFJSONSmolLM2(t *testing.T) {
	g, err := modelfile.OpenGGUF(smolLM2Path(t))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	src, err := FromGGUF(g)
	if err != nil {
		t.Fatal(err)
	}
	files, err := src.HFJSON()
	if err != nil {
		t.Fatal(err)
	}
	tok, err := FromHFJSON(files)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("testdata/smollm2_tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref reference
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	for _, c := range ref.Cases {
		if got, want := tok.Encode(nil, c.Text), src.Encode(nil, c.Text); !slices.Equal(got, want) {
			t.Errorf("%q: ids %v, FromGGUF's %v", c.Text, got, want)
		}
	}
	for _, d := range ref.Decodes {
		if got := tok.Decode(d.IDs); got != src.Decode(d.IDs) {
			t.Errorf("decode %v: %q, FromGGUF's %q", d.IDs, got, src.Decode(d.IDs))
		}
	}
	if tok.Specials() != src.Specials() || tok.ChatTemplateText() != src.ChatTemplateText() || tok.Size() != src.Size() {
		t.Errorf("specials %+v (want %+v), size %d (want %d), or template differ", tok.Specials(), src.Specials(), tok.Size(), src.Size())
	}
	tokens, types, merges := tok.Vocabulary()
	wantTokens, _ := g.Strings("tokenizer.ggml.tokens")
	wantTypes, _ := g.Int32s("tokenizer.ggml.token_type")
	wantMerges, _ := g.Strings("tokenizer.ggml.merges")
	if !slices.Equal(tokens, wantTokens) || !slices.Equal(types, wantTypes) || !slices.Equal(merges, wantMerges) {
		t.Errorf("vocabulary, types or merges differ from the GGUF's")
	}
}
