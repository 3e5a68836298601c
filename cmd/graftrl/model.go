package main

import (
	"fmt"
	"strings"

	"github.com/graftrl/graftrl/modelfile"
	"github.com/graftrl/graftrl/policy/pretrained"
	"github.com/graftrl/graftrl/tokens/bpe"
)

// modelSource is a pretrained model opened for a command (pretrained.Source) with the flag that
// named it, so that every refusal is a usage error naming both.
type modelSource struct {
	*pretrained.Source
	path string
	tok  *bpe.Tokenizer
}

// openModel opens the model at path (a .gguf file or a Hugging Face directory; pretrained.Open's
// checks, before any weight is read). Each refusal is a usage error (exit status 2) that starts
// with what (the command and flag) and the path.
func openModel(what, path string, copies int) (*modelSource, error) {
	src, err := pretrained.Open(path, copies)
	if err != nil {
		// The readers name the file too; once is enough.
		return nil, &usageError{fmt.Sprintf("%s %s: %s", what, path, strings.TrimPrefix(err.Error(), path+": "))}
	}
	return &modelSource{Source: src, path: path, tok: src.Tokenizer}, nil
}

// weights reads the model's float32 weights; an error is a usage error naming the path.
func (m *modelSource) weights(what string) (pretrained.Config, pretrained.Weights, error) {
	c, w, err := m.Weights()
	if err != nil {
		return c, w, &usageError{fmt.Sprintf("%s %s: %v", what, m.path, err)}
	}
	return c, w, nil
}

func (m *modelSource) close() { m.Close() }

// tokenizerMeta are the GGUF metadata entries of tok as llama.cpp reads a byte-level BPE
// tokenizer (the "smollm" pre-tokenizer, which is the only one tokens/bpe implements).
func tokenizerMeta(tok *bpe.Tokenizer) []modelfile.KV {
	tokens, types, merges := tok.Vocabulary()
	meta := []modelfile.KV{
		{Key: "tokenizer.ggml.model", Value: "gpt2"}, {Key: "tokenizer.ggml.pre", Value: "smollm"},
		{Key: "tokenizer.ggml.tokens", Value: tokens}, {Key: "tokenizer.ggml.token_type", Value: types},
		{Key: "tokenizer.ggml.merges", Value: merges},
	}
	sp := tok.Specials()
	for _, s := range []struct {
		key string
		id  int32
	}{{"bos_token_id", sp.BOS}, {"eos_token_id", sp.EOS}, {"unknown_token_id", sp.Unk}, {"padding_token_id", sp.Pad}} {
		if s.id != bpe.NoID {
			meta = append(meta, modelfile.KV{Key: "tokenizer.ggml." + s.key, Value: uint32(s.id)})
		}
	}
	meta = append(meta, modelfile.KV{Key: "tokenizer.ggml.add_bos_token", Value: false})
	if t := tok.ChatTemplateText(); t != "" {
		meta = append(meta, modelfile.KV{Key: "tokenizer.chat_template", Value: t})
	}
	return meta
}
