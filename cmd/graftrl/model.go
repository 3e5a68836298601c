package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/graftrl/graftrl/internal/limits"
	"github.com/graftrl/graftrl/modelfile"
	"github.com/graftrl/graftrl/policy/pretrained"
	"github.com/graftrl/graftrl/tokens/bpe"
)

// modelSource is a pretrained model opened for a command: a GGUF file or a Hugging Face
// directory, its architecture and tokenizer read and every check that needs no weights done.
type modelSource struct {
	path string
	gguf *modelfile.GGUF   // a GGUF file; nil for a directory
	hf   *pretrained.HF    // a Hugging Face directory; nil for a file
	cfg  pretrained.Config // read from config.json; a GGUF's comes with its weights
	tok  *bpe.Tokenizer
}

// openModel opens the model at path (a .gguf file or a Hugging Face directory) and refuses,
// before any weight is read, what cannot be loaded: a file that is not a GGUF or is truncated or
// corrupt, an architecture other than llama, a tensor of a type that is not dequantised or read,
// a missing or misshapen tensor (Hugging Face), a tokenizer without merges or of another kind,
// and a model whose float32 weights, held copies times, exceed the model limit or the memory
// available. Each refusal is a usage error (exit status 2) that starts with what (the command
// and flag) and the path.
func openModel(what, path string, copies int) (*modelSource, error) {
	refuse := func(err error) error {
		// The readers name the file too; once is enough.
		return &usageError{fmt.Sprintf("%s %s: %s", what, path, strings.TrimPrefix(err.Error(), path+": "))}
	}
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, refuse(errors.New("no such file or directory"))
		}
		return nil, refuse(err)
	}
	m := &modelSource{path: path}
	if fi.IsDir() {
		err = m.openHF(copies)
	} else {
		err = m.openGGUF(copies)
	}
	if err != nil {
		m.close()
		var ue *usageError
		if errors.As(err, &ue) {
			return nil, err
		}
		return nil, refuse(err)
	}
	return m, nil
}

func (m *modelSource) openGGUF(copies int) error {
	g, err := modelfile.OpenGGUF(m.path)
	if err != nil {
		return err
	}
	m.gguf = g
	// From the tensor directory and the metadata alone, before any tensor is read: the types
	// and the float32 size, then the architecture.
	size, err := pretrained.GGUFFloat32Bytes(g)
	if err != nil {
		return err
	}
	if err := pretrained.CheckMemory(m.path, size, copies); err != nil {
		return err
	}
	if _, err := pretrained.GGUFConfig(g); err != nil {
		return err
	}
	m.tok, err = bpe.FromGGUF(g)
	return err
}

func (m *modelSource) openHF(copies int) error {
	cfg, err := pretrained.ReadHFConfig(m.path)
	if err != nil {
		return err
	}
	var files bpe.HFFiles
	for name, dst := range map[string]*[]byte{bpe.HFTokenizerFile: &files.Tokenizer, bpe.HFConfigFile: &files.Config, bpe.HFChatTemplateFile: &files.ChatTemplate} {
		b, err := limits.Model.ReadFile(filepath.Join(m.path, name))
		if errors.Is(err, fs.ErrNotExist) && name != bpe.HFTokenizerFile {
			continue
		}
		if err != nil {
			return err
		}
		*dst = b
	}
	if m.tok, err = bpe.FromHFJSON(files); err != nil {
		return err
	}
	if err := pretrained.CheckMemory(m.path, cfg.Float32Bytes(), copies); err != nil {
		return err
	}
	m.cfg = cfg
	m.hf, err = pretrained.OpenHF(m.path)
	return err
}

// weights reads the model's float32 weights; an error is a usage error naming the path.
func (m *modelSource) weights(what string) (pretrained.Config, pretrained.Weights, error) {
	var c pretrained.Config
	var w pretrained.Weights
	var err error
	if m.gguf != nil {
		c, w, err = pretrained.FromGGUF(m.gguf)
	} else {
		c = m.cfg
		w, err = m.hf.Weights()
	}
	if err != nil {
		return c, w, &usageError{fmt.Sprintf("%s %s: %v", what, m.path, err)}
	}
	return c, w, nil
}

func (m *modelSource) close() {
	if m.gguf != nil {
		m.gguf.Close()
	}
	if m.hf != nil {
		m.hf.Close()
	}
}

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
