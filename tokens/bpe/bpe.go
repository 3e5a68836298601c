package bpe

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Token types of a GGUF vocabulary (tokenizer.ggml.token_type, llama.cpp's numbering).
const (
	TypeNormal      int32 = 1
	TypeUnknown     int32 = 2
	TypeControl     int32 = 3 // a special token: <|im_start|>, <|endoftext|>
	TypeUserDefined int32 = 4 // an added token that is not special, matched whole like one
	TypeUnused      int32 = 5
	TypeByte        int32 = 6
)

// NoID marks a special id the vocabulary does not have.
const NoID int32 = -1

// Specials are the ids of a vocabulary's special tokens, NoID where it has none.
type Specials struct {
	BOS, EOS, Unk, Pad int32
}

// cacheLimit bounds the words a Tokenizer remembers; past it the cache starts again empty, which
// keeps memory bounded on unbounded text without the bookkeeping of an LRU.
const cacheLimit = 1 << 16

// Tokenizer is a byte-level BPE tokenizer with the "smollm" pre-tokenizer. It is safe for
// concurrent use.
type Tokenizer struct {
	tokens   []string
	ids      map[string]int32
	merges   map[[2]int32]merge
	specials map[byte][]string // tokens matched whole in text, by first byte, longest first
	special  []bool            // ids decoded as their text, not through the byte alphabet
	sp       Specials
	toRune   [256]rune
	toByte   map[rune]byte
	template string

	mu    sync.Mutex
	cache map[string][]int32
}

// merge is what a pair of adjacent tokens becomes, and how early (rank) it merges.
type merge struct {
	rank int
	id   int32
}

// New builds a tokenizer from a vocabulary in id order (spelled in GPT-2's byte alphabet, special
// tokens as their text), its merges in rank order ("left right", each side and their
// concatenation in the vocabulary), the token types (nil: none special; else one per token,
// TypeControl and TypeUserDefined tokens matched whole in text) and the special ids.
func New(tokens, merges []string, types []int32, sp Specials) (*Tokenizer, error) {
	if len(tokens) == 0 {
		return nil, fmt.Errorf("bpe: empty vocabulary")
	}
	if types != nil && len(types) != len(tokens) {
		return nil, fmt.Errorf("bpe: %d token types for %d tokens; want one per token", len(types), len(tokens))
	}
	t := &Tokenizer{
		tokens:   tokens,
		ids:      make(map[string]int32, len(tokens)),
		merges:   make(map[[2]int32]merge, len(merges)),
		specials: map[byte][]string{},
		special:  make([]bool, len(tokens)),
		sp:       sp,
		cache:    map[string][]int32{},
	}
	t.toRune, t.toByte = byteAlphabet()
	for id, tok := range tokens {
		if tok == "" {
			return nil, fmt.Errorf("bpe: token %d is empty", id)
		}
		if _, dup := t.ids[tok]; dup {
			return nil, fmt.Errorf("bpe: token %d %q repeats token %d", id, tok, t.ids[tok])
		}
		t.ids[tok] = int32(id)
		if types != nil && (types[id] == TypeControl || types[id] == TypeUserDefined) {
			t.special[id] = true
			t.specials[tok[0]] = append(t.specials[tok[0]], tok)
		}
	}
	for _, list := range t.specials {
		// Longest first: where two special tokens start at one place the longer wins, as in
		// Hugging Face's added vocabulary (leftmost-longest).
		slices.SortStableFunc(list, func(a, b string) int { return len(b) - len(a) })
	}
	for rank, m := range merges {
		left, right, ok := strings.Cut(m, " ")
		if !ok || strings.Contains(right, " ") {
			return nil, fmt.Errorf("bpe: merge %d %q is not two tokens separated by one space", rank, m)
		}
		a, okA := t.ids[left]
		b, okB := t.ids[right]
		c, okC := t.ids[left+right]
		if !okA || !okB || !okC {
			return nil, fmt.Errorf("bpe: merge %d %q: %q, %q and %q must all be tokens of the vocabulary", rank, m, left, right, left+right)
		}
		if _, dup := t.merges[[2]int32{a, b}]; !dup {
			t.merges[[2]int32{a, b}] = merge{rank: rank, id: c}
		}
	}
	for name, id := range map[string]int32{"BOS": sp.BOS, "EOS": sp.EOS, "unk": sp.Unk, "pad": sp.Pad} {
		if id != NoID && (id < 0 || int(id) >= len(tokens)) {
			return nil, fmt.Errorf("bpe: %s id %d is outside the vocabulary of %d tokens (NoID, -1, for none)", name, id, len(tokens))
		}
	}
	return t, nil
}

// Size is the number of token ids.
func (t *Tokenizer) Size() int { return len(t.tokens) }

// Specials are the ids of the special tokens.
func (t *Tokenizer) Specials() Specials { return t.sp }

// Token is the token of id as the vocabulary spells it (byte-level alphabet), "" outside it.
func (t *Tokenizer) Token(id int32) string {
	if id < 0 || int(id) >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}

// ID is the id of a token as the vocabulary spells it, and whether it has one.
func (t *Tokenizer) ID(token string) (int32, bool) {
	id, ok := t.ids[token]
	return id, ok
}

// Encode appends the ids of text to dst: special tokens where their text appears whole, the
// rest pre-tokenized and merged by BPE. No BOS is added (SmolLM2's files say add_bos_token false;
// a chat's markup is in its text). Invalid UTF-8 is encoded byte for byte.
func (t *Tokenizer) Encode(dst []int32, text string) []int32 {
	var pieces []string
	start := 0
	for i := 0; i < len(text); i++ {
		for _, sp := range t.specials[text[i]] {
			if strings.HasPrefix(text[i:], sp) {
				pieces = splitSmolLM(pieces[:0], text[start:i])
				dst = t.encodePieces(dst, pieces)
				dst = append(dst, t.ids[sp])
				start = i + len(sp)
				i = start - 1
				break
			}
		}
	}
	return t.encodePieces(dst, splitSmolLM(pieces[:0], text[start:]))
}

func (t *Tokenizer) encodePieces(dst []int32, pieces []string) []int32 {
	for _, p := range pieces {
		dst = t.encodeWord(dst, p)
	}
	return dst
}

// encodeWord appends the ids of one pre-tokenized piece: its bytes in the byte alphabet, merged
// pair by pair, the pair of lowest rank first and the leftmost of equal pairs first (GPT-2's
// bpe, Hugging Face's BPE model).
func (t *Tokenizer) encodeWord(dst []int32, word string) []int32 {
	t.mu.Lock()
	ids, ok := t.cache[word]
	t.mu.Unlock()
	if ok {
		return append(dst, ids...)
	}
	syms := make([]int32, 0, len(word))
	var buf [utf8.UTFMax]byte
	for i := 0; i < len(word); i++ {
		n := utf8.EncodeRune(buf[:], t.toRune[word[i]])
		id, ok := t.ids[string(buf[:n])]
		if !ok {
			// A byte the vocabulary cannot spell: <unk> where there is one, else dropped, as
			// Hugging Face's BPE does without an unk token.
			if t.sp.Unk == NoID {
				continue
			}
			id = t.sp.Unk
		}
		syms = append(syms, id)
	}
	for len(syms) > 1 {
		best, at := merge{rank: -1}, -1
		for i := 0; i+1 < len(syms); i++ {
			if m, ok := t.merges[[2]int32{syms[i], syms[i+1]}]; ok && (at < 0 || m.rank < best.rank) {
				best, at = m, i
			}
		}
		if at < 0 {
			break
		}
		// Every occurrence of the pair, left to right, so that "a a a" merges as (a a) a.
		out := syms[:0]
		for i := 0; i < len(syms); i++ {
			if i+1 < len(syms) && t.merges[[2]int32{syms[i], syms[i+1]}] == best {
				out = append(out, best.id)
				i++
				continue
			}
			out = append(out, syms[i])
		}
		syms = out
	}
	t.mu.Lock()
	if len(t.cache) >= cacheLimit {
		clear(t.cache)
	}
	t.cache[word] = syms
	t.mu.Unlock()
	return append(dst, syms...)
}

// Decode is the text of ids: special tokens as their text, the others' bytes through the byte
// alphabet, and the bytes read as UTF-8 with each maximal invalid subsequence replaced by U+FFFD
// (Hugging Face's ByteLevel decoder, Rust's from_utf8_lossy, Python's errors="replace"). Ids
// outside the vocabulary are skipped, as Hugging Face skips them.
func (t *Tokenizer) Decode(ids []int32) string {
	var b []byte
	for _, id := range ids {
		if id < 0 || int(id) >= len(t.tokens) {
			continue
		}
		b = t.appendBytes(b, t.tokens[id], t.special[id])
	}
	return lossyUTF8(b)
}

// appendBytes appends a token's bytes: through the byte alphabet when every rune of it is in
// the alphabet, else (a special token) its text.
func (t *Tokenizer) appendBytes(b []byte, tok string, special bool) []byte {
	if !special {
		n := len(b)
		ok := true
		for _, r := range tok {
			c, in := t.toByte[r]
			if !in {
				ok = false
				break
			}
			b = append(b, c)
		}
		if ok {
			return b
		}
		b = b[:n]
	}
	return append(b, tok...)
}

// lossyUTF8 is b as a string with each maximal subpart of an ill-formed sequence replaced by one
// U+FFFD (Unicode's recommended practice, which Rust and Python follow; Go's
// strings.ToValidUTF8 would merge a run of them into one).
func lossyUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	for len(b) > 0 {
		r, w := utf8.DecodeRune(b)
		if r != utf8.RuneError || w > 1 {
			sb.Write(b[:w])
			b = b[w:]
			continue
		}
		sb.WriteRune(utf8.RuneError)
		b = b[maximalSubpart(b):]
	}
	return sb.String()
}

// maximalSubpart is the length of the longest prefix of b that starts a well-formed UTF-8
// sequence without completing it (at least 1): the bytes one U+FFFD replaces.
func maximalSubpart(b []byte) int {
	c := b[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF) // the range of the second byte
	switch {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		need = 2
	case c == 0xED:
		need, hi = 2, 0x9F
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	n := 1
	for ; n <= need && n < len(b); n++ {
		if n == 1 && (b[1] < lo || b[1] > hi) || n > 1 && (b[n] < 0x80 || b[n] > 0xBF) {
			break
		}
	}
	return n
}
