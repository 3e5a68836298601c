package host

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/graftrl/graftrl/modelfile"
	"github.com/graftrl/graftrl/tokens/bpe"
)

// smolLM2Env set to 1 makes the checks on the real model fail rather than skip when it is not
// installed (as in modelfile's tests; .ci/run installs the model first).
const smolLM2Env = "GRAFTRL_SMOLLM2"

// smolLM2Path is where scripts/install-smollm2.sh keeps the model (modelfile's smolLM2Path).
func smolLM2Path(tb testing.TB) string {
	tb.Helper()
	skip := tb.Skipf
	if os.Getenv(smolLM2Env) == "1" {
		skip = tb.Fatalf
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			skip("no home directory (%v): run scripts/install-smollm2.sh", err)
		}
		cache = filepath.Join(home, ".cache")
	}
	path := filepath.Join(cache, "graftrl", "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
	if _, err := os.Stat(path); err != nil {
		skip("SmolLM2-135M-Instruct is not installed at %s: run scripts/install-smollm2.sh", path)
	}
	return path
}

// loadSmolLM2 builds the installed SmolLM2-135M-Instruct and its tokenizer.
func loadSmolLM2(tb testing.TB) (*Llama, *bpe.Tokenizer) {
	tb.Helper()
	g, err := modelfile.OpenGGUF(smolLM2Path(tb))
	if err != nil {
		tb.Fatal(err)
	}
	defer g.Close()
	tok, err := bpe.FromGGUF(g)
	if err != nil {
		tb.Fatal(err)
	}
	m, err := LoadLlamaGGUF(g)
	if err != nil {
		tb.Fatal(err)
	}
	return m, tok
}
