package bpe

import (
	"errors"
	"fmt"

	"github.com/graftrl/graftrl/modelfile"
)

// FromGGUF builds the tokenizer a GGUF file describes. It accepts only what this package
// implements: tokenizer.ggml.model "gpt2" (byte-level BPE) with tokenizer.ggml.pre "smollm", and
// tokenizer.ggml.merges not empty.
// The chat template (tokenizer.chat_template), when the file has one, is kept for RenderChat.
func FromGGUF(g *modelfile.GGUF) (*Tokenizer, error) {
	for key, want := range map[string]string{"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "smollm"} {
		got, err := g.String(key)
		if err != nil {
			return nil, fmt.Errorf("bpe: %w", err)
		}
		if got != want {
			return nil, fmt.Errorf("bpe: %s is %q; only %q is supported", key, got, want)
		}
	}
	tokens, err := g.Strings("tokenizer.ggml.tokens")
	if err != nil {
		return nil, fmt.Errorf("bpe: %w", err)
	}
	merges, err := g.Strings("tokenizer.ggml.merges")
	if err != nil {
		return nil, fmt.Errorf("bpe: %w", err)
	}
	// New accepts an empty list (a vocabulary of single symbols); a byte-level BPE model without
	// merges is a broken file, whose text would be encoded one byte per token.
	if len(merges) == 0 {
		return nil, errors.New("bpe: tokenizer.ggml.merges is empty; a byte-level BPE tokenizer needs its merges")
	}
	types, err := g.Int32s("tokenizer.ggml.token_type")
	if err != nil {
		return nil, fmt.Errorf("bpe: %w", err)
	}
	sp := Specials{BOS: NoID, EOS: NoID, Unk: NoID, Pad: NoID}
	for key, id := range map[string]*int32{
		"tokenizer.ggml.bos_token_id": &sp.BOS, "tokenizer.ggml.eos_token_id": &sp.EOS,
		"tokenizer.ggml.unknown_token_id": &sp.Unk, "tokenizer.ggml.padding_token_id": &sp.Pad,
	} {
		if _, ok := g.Value(key); !ok {
			continue
		}
		v, err := g.Uint32(key)
		if err != nil {
			return nil, fmt.Errorf("bpe: %w", err)
		}
		*id = int32(min(v, 1<<31-1))
	}
	t, err := New(tokens, merges, types, sp)
	if err != nil {
		return nil, err
	}
	if _, ok := g.Value("tokenizer.chat_template"); ok {
		if t.template, err = g.String("tokenizer.chat_template"); err != nil {
			return nil, fmt.Errorf("bpe: %w", err)
		}
	}
	return t, nil
}
