// Package tokens is the vocabulary of graftrl's policies: the special tokens, their ids, and the
// whitespace tokenisation that maps an environment's words to the ids the policy samples and is
// trained on. It has no dependencies beyond the standard library, so the packages that build
// token sequences (rollout) and those that only compute advantages (grpo, graft) stay free of
// the model's machinery.
package tokens

import (
	"fmt"
	"strings"
)

// Special tokens, always the first ids of a vocabulary.
const (
	TokPad = "<pad>" // padding; never trained on
	TokBOS = "<bos>" // begins every sequence
	TokSep = "<sep>" // ends the task instruction
	TokAct = "<act>" // ends an observation: the agent's turn to act
	TokEOA = "<eoa>" // ends an action
	TokUnk = "<unk>" // a word outside the vocabulary
)

// Ids of the special tokens (their positions in every Vocab).
const (
	PadID int32 = iota
	BOSID
	SepID
	ActID
	EOAID
	UnkID
	numSpecial
)

// Vocab maps words to token ids: the special tokens, then the environment's words in order.
// Tokenisation is by whitespace; the ids the policy samples are the ids it is trained on.
type Vocab struct {
	words []string
	ids   map[string]int32
}

// NewVocab builds a vocabulary from an environment's word list. Duplicates are dropped; a word
// that contains whitespace or collides with a special token is an error.
func NewVocab(words []string) (*Vocab, error) {
	v := &Vocab{ids: map[string]int32{}}
	for _, w := range []string{TokPad, TokBOS, TokSep, TokAct, TokEOA, TokUnk} {
		v.add(w)
	}
	for _, w := range words {
		if w == "" || strings.ContainsAny(w, " \t\r\n") {
			return nil, fmt.Errorf("vocabulary word %q is empty or contains whitespace", w)
		}
		if id, ok := v.ids[w]; ok {
			if id < numSpecial {
				return nil, fmt.Errorf("vocabulary word %q collides with a special token", w)
			}
			continue
		}
		v.add(w)
	}
	return v, nil
}

func (v *Vocab) add(w string) {
	v.ids[w] = int32(len(v.words))
	v.words = append(v.words, w)
}

// Size is the number of token ids.
func (v *Vocab) Size() int { return len(v.words) }

// Word returns the word of an id ("<unk>" for an id out of range).
func (v *Vocab) Word(id int32) string {
	if id < 0 || int(id) >= len(v.words) {
		return TokUnk
	}
	return v.words[id]
}

// Words returns the vocabulary in id order.
func (v *Vocab) Words() []string { return append([]string(nil), v.words...) }

// Encode appends the ids of the whitespace-separated words of text to dst; unknown words
// become <unk>.
func (v *Vocab) Encode(dst []int32, text string) []int32 {
	for _, w := range strings.Fields(text) {
		id, ok := v.ids[w]
		if !ok {
			id = UnkID
		}
		dst = append(dst, id)
	}
	return dst
}

// Decode joins the words of ids with single spaces.
func (v *Vocab) Decode(ids []int32) string {
	var sb strings.Builder
	for i, id := range ids {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(v.Word(id))
	}
	return sb.String()
}
