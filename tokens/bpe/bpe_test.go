package bpe

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// GPT-2's alphabet: printable Latin-1 stands for itself, the 68 other bytes for U+0100 onwards
// in byte order (0x00–0x20 are U+0100–U+0120, 0x7F–0xA0 are U+0121–U+0142, 0xAD is U+0143).
func TestByteAlphabet(t *testing.T) {
	toRune, toByte := byteAlphabet()
	for b, want := range map[byte]rune{0: 0x100, '\n': 'Ċ', ' ': 'Ġ', '!': '!', '~': '~', 0x7F: 0x121, 0xA0: 0x142, 0xA1: 0xA1, 0xAD: 0x143, 0xFF: 0xFF} {
		if toRune[b] != want {
			t.Errorf("byte %#x → %U; want %U", b, toRune[b], want)
		}
	}
	if len(toByte) != 256 {
		t.Fatalf("%d runes for 256 bytes; want a bijection", len(toByte))
	}
	for b := range 256 {
		if toByte[toRune[b]] != byte(b) {
			t.Errorf("byte %#x does not come back from %U", b, toRune[b])
		}
	}
}

// The pieces of GPT-2's regex and of smollm's digit split, derived by hand from the regex
// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+.
func TestSplit(t *testing.T) {
	for _, c := range []struct {
		text        string
		gpt2, smoll []string
	}{
		{"Hello world", []string{"Hello", " world"}, nil},
		{"  a", []string{" ", " a"}, nil}, // \s+(?!\S) leaves the space before "a" to " ?\p{L}+"
		{"a  ", []string{"a", "  "}, nil}, // at the end the lookahead holds for the whole run
		{"a \tb", []string{"a", " ", "\t", "b"}, nil},
		{"\n\n  x", []string{"\n\n ", " x"}, nil},
		{"I'm they're DON'T", []string{"I", "'m", " they", "'re", " DON", "'", "T"}, nil}, // contractions are lower case only
		{"''s", []string{"''", "s"}, nil},
		{"...!? hi", []string{"...!?", " hi"}, nil},
		{"日本語 テキスト", []string{"日本語", " テキスト"}, nil},
		{" 😀👍", []string{" 😀👍"}, nil},
		{"x=10;", []string{"x", "=", "10", ";"}, []string{"x", "=", "1", "0", ";"}},
		{"  12", []string{" ", " 12"}, []string{"  ", "1", "2"}},
		{"a 1", []string{"a", " 1"}, []string{"a", " ", "1"}},
		{"½٣", []string{"½٣"}, []string{"½", "٣"}},
		{"", nil, nil},
	} {
		if got := splitGPT2(nil, c.text); !slices.Equal(got, c.gpt2) {
			t.Errorf("splitGPT2(%q) = %q; want %q", c.text, got, c.gpt2)
		}
		want := c.smoll
		if want == nil {
			want = c.gpt2
		}
		if got := splitSmolLM(nil, c.text); !slices.Equal(got, want) {
			t.Errorf("splitSmolLM(%q) = %q; want %q", c.text, got, want)
		}
	}
}

// tiny is a hand-made vocabulary: three letters, the space, their merges, and two special
// tokens of which one begins the other.
func tiny(t *testing.T) *Tokenizer {
	t.Helper()
	tokens := []string{"<|x|>", "a", "b", "c", "Ġ", "ab", "abc", "Ġa", "<|x|>!", "aa"}
	types := []int32{TypeControl, 1, 1, 1, 1, 1, 1, 1, TypeUserDefined, 1}
	tok, err := New(tokens, []string{"a b", "ab c", "Ġ a", "a a"}, types, Specials{BOS: 0, EOS: 0, Unk: NoID, Pad: NoID})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestEncodeDecode(t *testing.T) {
	tok := tiny(t)
	for _, c := range []struct {
		text string
		want []int32
	}{
		{"abc", []int32{6}},          // a b c → ab c (rank 0) → abc (rank 1)
		{"ab abc", []int32{5, 4, 6}}, // " abc": Ġ a b c → Ġ ab c (a b is rank 0, Ġ a rank 2) → Ġ abc
		{" a", []int32{7}},
		{"aaa", []int32{9, 1}}, // equal pairs merge leftmost first: (a a) a
		{"aaaa", []int32{9, 9}},
		{"<|x|>abc<|x|>", []int32{0, 6, 0}},
		{"<|x|>!", []int32{8}}, // the longer special token wins where both start
		{"a<|x|", []int32{1}},  // "<" and "|" are not in this vocabulary: dropped, no unk
		{"", nil},
	} {
		got := tok.Encode(nil, c.text)
		if !slices.Equal(got, c.want) {
			t.Errorf("Encode(%q) = %v; want %v", c.text, got, c.want)
		}
	}
	for _, c := range []struct {
		ids  []int32
		want string
	}{
		{[]int32{0, 6, 4, 7, 8}, "<|x|>abc  a<|x|>!"},
		{[]int32{6, 99, -1, 1}, "abca"}, // ids outside the vocabulary are skipped
		{nil, ""},
	} {
		if got := tok.Decode(c.ids); got != c.want {
			t.Errorf("Decode(%v) = %q; want %q", c.ids, got, c.want)
		}
	}
	if tok.Size() != 10 || tok.Token(6) != "abc" || tok.Token(10) != "" {
		t.Errorf("Size %d, Token(6) %q, Token(10) %q; want 10, abc and empty", tok.Size(), tok.Token(6), tok.Token(10))
	}
	if id, ok := tok.ID("Ġa"); !ok || id != 7 {
		t.Errorf("ID(Ġa) = %d, %v; want 7", id, ok)
	}
	// The cache returns what the merges give, a second time too.
	if got := tok.Encode(nil, "ab abc ab abc"); !slices.Equal(got, []int32{5, 4, 6, 4, 5, 4, 6}) {
		t.Errorf("Encode again = %v", got)
	}
}

// Each maximal subpart of an ill-formed sequence becomes one U+FFFD, as Python's
// bytes.decode("utf-8", "replace") gives (values from Python 3.11).
func TestLossyUTF8(t *testing.T) {
	for in, want := range map[string]string{
		"\xff\xfe":             "\uFFFD\uFFFD",
		"\xe6\x97":             "\uFFFD",
		"\xe6\x97a":            "\uFFFDa",
		"\xf0\x9f\x98":         "\uFFFD",
		"\xed\xa0\x80":         "\uFFFD\uFFFD\uFFFD",
		"\xc0\xaf":             "\uFFFD\uFFFD",
		"a\xf4\x90":            "a\uFFFD\uFFFD",
		"\xe0\x80\x80":         "\uFFFD\uFFFD\uFFFD",
		"\xf0\x9f\x98\x80\x80": "😀\uFFFD",
		"ok":                   "ok",
	} {
		if got := lossyUTF8([]byte(in)); got != want {
			t.Errorf("lossyUTF8(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestNewErrors(t *testing.T) {
	none := Specials{BOS: NoID, EOS: NoID, Unk: NoID, Pad: NoID}
	for _, c := range []struct {
		tokens, merges []string
		types          []int32
		sp             Specials
		want           string
	}{
		{nil, nil, nil, none, "empty vocabulary"},
		{[]string{"a", "b"}, nil, []int32{1}, none, "1 token types for 2 tokens"},
		{[]string{"a", "a"}, nil, nil, none, `token 1 "a" repeats token 0`},
		{[]string{"a", ""}, nil, nil, none, "token 1 is empty"},
		{[]string{"a", "b"}, []string{"ab"}, nil, none, `merge 0 "ab" is not two tokens`},
		{[]string{"a", "b"}, []string{"a b"}, nil, none, `"ab" must all be tokens`},
		{[]string{"a"}, nil, nil, Specials{BOS: 1, EOS: NoID, Unk: NoID, Pad: NoID}, "BOS id 1 is outside the vocabulary of 1 tokens"},
	} {
		_, err := New(c.tokens, c.merges, c.types, c.sp)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%q, %q, %v, %+v) = %v; want an error containing %q", c.tokens, c.merges, c.types, c.sp, err, c.want)
		}
	}
}

func TestChatTemplate(t *testing.T) {
	c, err := ParseChatTemplate(smolLM2ChatML)
	if err != nil {
		t.Fatal(err)
	}
	sys := "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
	for _, tc := range []struct {
		msgs []Message
		gen  bool
		want string
	}{
		{nil, true, "<|im_start|>assistant\n"}, // the loop never runs: no default system turn
		{nil, false, ""},
		{[]Message{{"user", "Hi"}}, true, sys + "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"},
		{[]Message{{"system", "S"}, {"user", "U"}, {"assistant", "A"}}, false, "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\nA<|im_end|>\n"},
		{[]Message{{"user", "U"}, {"system", "late"}}, false, sys + "<|im_start|>user\nU<|im_end|>\n<|im_start|>system\nlate<|im_end|>\n"},
	} {
		if got := c.Render(tc.msgs, tc.gen); got != tc.want {
			t.Errorf("Render(%v, %v) = %q; want %q", tc.msgs, tc.gen, got, tc.want)
		}
	}
	for _, tmpl := range []string{"", "{% for message in messages %}{{ message['content'] }}{% endfor %}", smolLM2ChatML + " "} {
		if _, err := ParseChatTemplate(tmpl); err == nil || !strings.Contains(err.Error(), "unknown chat template") {
			t.Errorf("ParseChatTemplate(%.40q…) = %v; want an unknown-template error", tmpl, err)
		}
	}
	if _, err := tiny(t).ChatTemplate(); err == nil || !strings.Contains(err.Error(), "no chat template") {
		t.Errorf("ChatTemplate of a tokenizer without one = %v; want an error", err)
	}
}

// fuzzTokenizer spells every byte (GPT-2's alphabet), merges a few pairs and has two special
// tokens, so that any string round-trips.
func fuzzTokenizer(t testing.TB) *Tokenizer {
	toRune, _ := byteAlphabet()
	var tokens []string
	for _, r := range toRune {
		tokens = append(tokens, string(r))
	}
	tokens = append(tokens, "Ġt", "he", "Ġthe", "in", "<|im_start|>", "<|im_end|>")
	types := make([]int32, len(tokens))
	for i := range types {
		types[i] = TypeNormal
	}
	types[len(types)-1], types[len(types)-2] = TypeControl, TypeControl
	tok, err := New(tokens, []string{"Ġ t", "h e", "Ġt he", "i n"}, types, Specials{BOS: NoID, EOS: NoID, Unk: NoID, Pad: NoID})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Decode(Encode(s)) is s for valid UTF-8, and valid UTF-8 for any s.
func FuzzEncodeDecode(f *testing.F) {
	for _, s := range []string{"", "the thin  thing\n\t", "<|im_start|>user\nHi 12<|im_end|>\n", "日本語 😀 I'm", "\xff\xe6\x97", "<|im_sta"} {
		f.Add(s)
	}
	tok := fuzzTokenizer(f)
	f.Fuzz(func(t *testing.T, s string) {
		got := tok.Decode(tok.Encode(nil, s))
		if utf8.ValidString(s) && got != s {
			t.Fatalf("Decode(Encode(%q)) = %q", s, got)
		}
		if !utf8.ValidString(got) {
			t.Fatalf("Decode(Encode(%q)) = %q is not valid UTF-8", s, got)
		}
		var joined string
		for _, p := range splitSmolLM(nil, s) {
			if p == "" {
				t.Fatalf("splitSmolLM(%q) has an empty piece", s)
			}
			joined += p
		}
		if joined != s {
			t.Fatalf("splitSmolLM(%q) pieces join to %q", s, joined)
		}
	})
}
