package main

import (
	"path/filepath"
	"testing"
)

// TestChatSmolLM2HF: SmolLM2 converted to a Hugging Face directory answers, greedy, exactly as
// the GGUF it came from (the same float32 weights and tokenizer, read through safetensors and
// tokenizer.json).
func TestChatSmolLM2HF(t *testing.T) {
	path := chatModelPath(t)
	dir := filepath.Join(t.TempDir(), "smollm2-hf")
	convertTo(t, path, dir)
	ask := func(model string) string {
		t.Helper()
		out, stderr, code := cli(t, "chat", "--model", model, "--prompt", "What is the capital of France?", "--max-tokens", "24")
		if code != 0 {
			t.Fatalf("chat --model %s: status %d: %s", model, code, stderr)
		}
		return out
	}
	if a, b := ask(path), ask(dir); a != b {
		t.Errorf("the GGUF answers %q, its Hugging Face directory %q", a, b)
	}
}
