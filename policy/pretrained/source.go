package pretrained

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/graftrl/graftrl/internal/limits"
	"github.com/graftrl/graftrl/modelfile"
	"github.com/graftrl/graftrl/tokens/bpe"
)

// Source is a pretrained model opened for use: a GGUF file or a Hugging Face directory, its
// architecture and tokenizer read and every check that needs no weights done (Open). Its
// weights are read on demand (Weights); Close releases the files.
type Source struct {
	// Path is the file or directory the model was opened from.
	Path string
	// GGUF is the open GGUF file; nil for a directory.
	GGUF *modelfile.GGUF
	// HF is the open Hugging Face directory; nil for a file.
	HF *HF
	// Tokenizer is the model's tokenizer (with its chat template, where the model has one).
	Tokenizer *bpe.Tokenizer
	cfg       Config // read from config.json; a GGUF's comes with its weights
}

// Open opens the model at path (a .gguf file or a Hugging Face directory) and refuses, before
// any weight is read, what cannot be loaded: a file that is not a GGUF or is truncated or
// corrupt, an architecture other than llama, a tensor of a type that is not dequantised or read,
// a missing or misshapen tensor (Hugging Face), a tokenizer without merges or of another kind,
// and a model whose float32 weights, held copies times, exceed the model limit or the memory
// available (CheckMemory). Errors name the path once.
func Open(path string, copies int) (*Source, error) {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file or directory", path)
		}
		return nil, err
	}
	s := &Source{Path: path}
	if fi.IsDir() {
		err = s.openHF(copies)
	} else {
		err = s.openGGUF(copies)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Source) openGGUF(copies int) error {
	g, err := modelfile.OpenGGUF(s.Path)
	if err != nil {
		return err
	}
	s.GGUF = g
	// From the tensor directory and the metadata alone, before any tensor is read: the types
	// and the float32 size, then the architecture.
	size, err := GGUFFloat32Bytes(g)
	if err != nil {
		return err
	}
	if err := CheckMemory(s.Path, size, copies); err != nil {
		return err
	}
	if s.cfg, err = GGUFConfig(g); err != nil {
		return err
	}
	s.Tokenizer, err = bpe.FromGGUF(g)
	return err
}

func (s *Source) openHF(copies int) error {
	cfg, err := ReadHFConfig(s.Path)
	if err != nil {
		return err
	}
	var files bpe.HFFiles
	for name, dst := range map[string]*[]byte{bpe.HFTokenizerFile: &files.Tokenizer, bpe.HFConfigFile: &files.Config, bpe.HFChatTemplateFile: &files.ChatTemplate} {
		b, err := limits.Model.ReadFile(filepath.Join(s.Path, name))
		if errors.Is(err, fs.ErrNotExist) && name != bpe.HFTokenizerFile {
			continue
		}
		if err != nil {
			return err
		}
		*dst = b
	}
	if s.Tokenizer, err = bpe.FromHFJSON(files); err != nil {
		return err
	}
	if err := CheckMemory(s.Path, cfg.Float32Bytes(), copies); err != nil {
		return err
	}
	s.cfg = cfg
	s.HF, err = OpenHF(s.Path)
	return err
}

// Config is the model's architecture, read from its metadata without the weights.
func (s *Source) Config() Config { return s.cfg }

// Weights reads the model's float32 weights.
func (s *Source) Weights() (Config, Weights, error) {
	if s.GGUF != nil {
		return FromGGUF(s.GGUF)
	}
	w, err := s.HF.Weights()
	return s.cfg, w, err
}

// Close releases the model's files; closing twice is harmless.
func (s *Source) Close() {
	if s.GGUF != nil {
		s.GGUF.Close()
		s.GGUF = nil
	}
	if s.HF != nil {
		s.HF.Close()
		s.HF = nil
	}
}

// Checksum is the SHA-256 of the model's bytes: of the GGUF file, or of a Hugging Face
// directory's regular files in name order (each name, then its bytes). It identifies the base
// model that a run's checkpoints (LoRA adapters) were trained on.
func Checksum(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	files := []string{path}
	if fi.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return "", err
		}
		files = files[:0]
		for _, e := range entries {
			if e.Type().IsRegular() {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
		sort.Strings(files)
	}
	for _, name := range files {
		if fi.IsDir() {
			io.WriteString(h, filepath.Base(name)+"\x00")
		}
		f, err := os.Open(name)
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
