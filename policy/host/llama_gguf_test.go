package host

import (
	"os"
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
	path, err := modelfile.InstalledSmolLM2()
	if err != nil {
		if os.Getenv(smolLM2Env) == "1" {
			tb.Fatalf("%s=1: %v", smolLM2Env, err)
		}
		tb.Skip(err)
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
