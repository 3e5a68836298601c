package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/graftrl/graftrl/modelfile"
	"github.com/graftrl/graftrl/policy/pretrained"
	"github.com/graftrl/graftrl/tokens/bpe"
)

// convertOptions are the flags of `graftrl convert`.
type convertOptions struct {
	in, out, to string
	errOut      io.Writer
}

func newConvertCmd() *cobra.Command {
	o := &convertOptions{}
	cmd := &cobra.Command{
		Use:   "convert --in MODEL --out PATH [--to hf|gguf]",
		Short: "Convert a pretrained llama model between GGUF and a Hugging Face directory",
		Long: `Reads a llama model (a .gguf file, or a Hugging Face directory: config.json, model.safetensors
or its shards, tokenizer.json) and writes it as a Hugging Face directory (config.json,
model.safetensors in F32, tokenizer.json, tokenizer_config.json; transformers'
LlamaForCausalLM.from_pretrained and AutoTokenizer load it) or as a GGUF file with every tensor
F32 (the source's metadata kept; llama.cpp loads it). The weights are dequantised to float32, so
the output is larger than a quantised input. Everything is checked before anything is written;
--out must not exist (an empty directory is allowed for --to hf).`,
		Example: `  graftrl convert --in ~/.cache/graftrl/models/SmolLM2-135M-Instruct.Q4_1.gguf --out smollm2-hf --to hf
  graftrl convert --in smollm2-hf --out smollm2-f32.gguf --to gguf
  graftrl chat --model smollm2-hf --prompt "What is the capital of France?"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.errOut = cmd.ErrOrStderr()
			return convertRun(o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.in, "in", "", "the model to read: a .gguf file or a Hugging Face directory (required)")
	f.StringVar(&o.out, "out", "", "where to write it: a directory for hf, a file for gguf (required; must not exist)")
	f.StringVar(&o.to, "to", "", "the output format: hf or gguf (default: gguf when --out ends in .gguf, else hf)")
	return cmd
}

// checkConvertFlags refuses missing flags, an unknown format and an --out that exists.
func checkConvertFlags(o *convertOptions) error {
	switch {
	case o.in == "":
		return &usageError{"convert: --in MODEL is required (a .gguf file or a Hugging Face directory)"}
	case o.out == "":
		return &usageError{"convert: --out PATH is required"}
	case o.to == "" && strings.HasSuffix(strings.ToLower(o.out), ".gguf"):
		o.to = "gguf"
	case o.to == "":
		o.to = "hf"
	case o.to != "hf" && o.to != "gguf":
		return &usageError{fmt.Sprintf("convert: --to %q: allowed: hf, gguf", o.to)}
	}
	fi, err := os.Stat(o.out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return &usageError{fmt.Sprintf("convert: --out %s: %v", o.out, err)}
	case o.to == "hf" && fi.IsDir():
		if entries, err := os.ReadDir(o.out); err != nil || len(entries) > 0 {
			return &usageError{fmt.Sprintf("convert: --out %s: a directory that is not empty; give a new path", o.out)}
		}
	default:
		return &usageError{fmt.Sprintf("convert: --out %s exists; give a new path", o.out)}
	}
	if parent := filepath.Dir(o.out); parent != "" {
		if fi, err := os.Stat(parent); err != nil || !fi.IsDir() {
			return &usageError{fmt.Sprintf("convert: --out %s: its directory %s does not exist", o.out, parent)}
		}
	}
	return nil
}

func convertRun(o *convertOptions) error {
	if err := checkConvertFlags(o); err != nil {
		return err
	}
	// The converters hold the float32 weights once (and q, k reordered for a Hugging Face copy).
	src, err := openModel("convert: --in", o.in, 1)
	if err != nil {
		return err
	}
	defer src.close()
	c, w, err := src.weights("convert: --in")
	if err != nil {
		return err
	}
	if o.to == "gguf" {
		meta, err := convertMeta(src)
		if err != nil {
			return err
		}
		err = pretrained.WriteGGUF(o.out, c, w, meta)
		if err == nil {
			fmt.Fprintf(o.errOut, "convert: wrote %s (GGUF, F32)\n", o.out)
		}
		return err
	}
	return convertToHF(src, c, w, o)
}

// convertMeta is the GGUF metadata of the output: the source GGUF's, or for a Hugging Face
// source its name, context length and tokenizer.
func convertMeta(src *modelSource) ([]modelfile.KV, error) {
	if src.GGUF != nil {
		return pretrained.GGUFMetadata(src.GGUF), nil
	}
	meta, err := pretrained.HFGGUFMetadata(src.path)
	if err != nil {
		return nil, &usageError{fmt.Sprintf("convert: --in %s: %v", src.path, err)}
	}
	return append(meta, tokenizerMeta(src.tok)...), nil
}

// convertToHF writes the directory beside --out and renames it into place once complete.
func convertToHF(src *modelSource, c pretrained.Config, w pretrained.Weights, o *convertOptions) error {
	files, err := src.tok.HFJSON()
	if err != nil {
		return err
	}
	extra := map[string]any{}
	if src.GGUF != nil {
		extra = pretrained.HFConfigExtras(src.GGUF)
	} else if extra, err = pretrained.HFConfigExtrasOf(src.path); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(o.out), filepath.Base(o.out)+".tmp*")
	if err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp's 0700 is for the temporary name only
		os.RemoveAll(tmp)
		return err
	}
	named := map[string][]byte{bpe.HFTokenizerFile: files.Tokenizer, bpe.HFConfigFile: files.Config}
	if err := pretrained.WriteHF(tmp, c, w, extra, named); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	os.Remove(o.out) // an empty directory checked before; nothing else is removed
	if err := os.Rename(tmp, o.out); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	fmt.Fprintf(o.errOut, "convert: wrote %s (Hugging Face, F32)\n", o.out)
	return nil
}
