package bpe

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// splitSmolLM appends to dst the pieces of text as the "smollm" pre-tokenizer cuts it: SmolLM2's
// tokenizer.json applies Digits(individual_digits=True) and then ByteLevel's GPT-2 regex to each
// piece; llama.cpp (LLAMA_VOCAB_PRE_TYPE_SMOLLM) applies the regexes \p{N} and then GPT-2's. Every
// number rune is a piece of its own; what lies between them is cut by splitGPT2.
func splitSmolLM(dst []string, text string) []string {
	start := 0
	for i := 0; i < len(text); {
		r, w := utf8.DecodeRuneInString(text[i:])
		if unicode.IsNumber(r) {
			dst = splitGPT2(dst, text[start:i])
			dst = append(dst, text[i:i+w])
			start = i + w
		}
		i += w
	}
	return splitGPT2(dst, text[start:])
}

// splitGPT2 appends to dst the matches of GPT-2's pre-tokenizer regex in text,
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// scanned by hand because Go's regexp has no lookahead. At each position the alternatives are
// tried in the regex's order; every rune is matched by one of them, so the pieces cover text.
// \s is Unicode's White_Space (unicode.IsSpace), \p{L} and \p{N} its letter and number categories.
func splitGPT2(dst []string, text string) []string {
	for i := 0; i < len(text); {
		n := gpt2Match(text[i:])
		dst = append(dst, text[i:i+n])
		i += n
	}
	return dst
}

// gpt2Match is the length in bytes of the regex's match at the start of s (never 0 for a
// non-empty s).
func gpt2Match(s string) int {
	if s[0] == '\'' {
		for _, c := range []string{"s", "t", "re", "ve", "m", "ll", "d"} {
			if strings.HasPrefix(s[1:], c) {
				return 1 + len(c)
			}
		}
	}
	r, size := utf8.DecodeRuneInString(s)
	lead := 0 // the optional space of ` ?\p{L}+`, ` ?\p{N}+` and ` ?[^\s\p{L}\p{N}]+`
	if r == ' ' && size < len(s) {
		if next, w := utf8.DecodeRuneInString(s[1:]); !unicode.IsSpace(next) {
			lead = 1
			r, size = next, 1+w
		}
	}
	if lead == 1 || !unicode.IsSpace(r) {
		class := runeClass(r)
		n := size
		for n < len(s) {
			r, w := utf8.DecodeRuneInString(s[n:])
			if runeClass(r) != class {
				break
			}
			n += w
		}
		return n
	}
	// \s+(?!\S): the run of whitespace, less its last rune when a non-space follows it (the
	// lookahead backtracks one rune); \s+ takes a single whitespace rune before a non-space.
	n, last := 0, 0
	for n < len(s) {
		r, w := utf8.DecodeRuneInString(s[n:])
		if !unicode.IsSpace(r) {
			break
		}
		n, last = n+w, w
	}
	if n < len(s) && n > last {
		return n - last
	}
	return n
}

// Classes of runes for the regex's three runs.
const (
	classLetter = iota
	classNumber
	classOther // [^\s\p{L}\p{N}]
	classSpace
)

func runeClass(r rune) int {
	switch {
	case unicode.IsLetter(r):
		return classLetter
	case unicode.IsNumber(r):
		return classNumber
	case unicode.IsSpace(r):
		return classSpace
	}
	return classOther
}
