package pretrained

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/internal/limits"
)

// TestFloat32Bytes: the tiny config's size counted by hand, and SmolLM2's equal to its file's
// tensor directory (the output layer tied, so not counted twice).
func TestFloat32Bytes(t *testing.T) {
	// Embedding 10·8, output norm 8; per layer: norms 2·8, q 16·8, k and v 8·8 each, o 8·16,
	// gate, up and down 12·8 each: 16+128+128+128+288 = 688.
	if got, want := tinyConfig().Float32Bytes(), 4.0*(80+8+2*688); got != want {
		t.Errorf("tiny: %v bytes, want %v", got, want)
	}
	g := smolLM2(t)
	c, _, err := FromGGUF(g)
	if err != nil {
		t.Fatal(err)
	}
	n, err := GGUFFloat32Bytes(g)
	if err != nil || n != c.Float32Bytes() || n != 4*134_515_008 {
		t.Errorf("SmolLM2: directory %v (%v), config %v, want %v", n, err, c.Float32Bytes(), 4*134_515_008)
	}
}

func TestCheckMemory(t *testing.T) {
	dir := t.TempDir()
	meminfo := filepath.Join(dir, "meminfo")
	if err := os.WriteFile(meminfo, []byte("MemTotal:       24000000 kB\nMemFree:         100 kB\nMemAvailable:    1048576 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// 1 GiB available: 300 MiB held twice plus the margin fits; 400 MiB twice does not.
	if err := checkMemory("m", 300<<20, 2, meminfo); err != nil {
		t.Errorf("300 MiB twice: %v", err)
	}
	err := checkMemory("m.gguf", 400<<20, 2, meminfo)
	want := "m.gguf needs about 1056 MiB of memory (2× its float32 weights of 400 MiB, plus 256 MiB), more than the 1024 MiB available (MemAvailable in " + meminfo
	if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, limits.ErrTooLarge) {
		t.Errorf("400 MiB twice: %v, want %q wrapping ErrTooLarge", err, want)
	}
	// No meminfo: only the limit applies.
	if err := checkMemory("m", 1<<30, 2, filepath.Join(dir, "none")); err != nil {
		t.Errorf("no meminfo: %v", err)
	}
	t.Setenv(limits.Model.Env(), "1MiB")
	err = checkMemory("m.gguf", 3<<20, 1, meminfo)
	if err == nil || !errors.Is(err, limits.ErrTooLarge) || !strings.Contains(err.Error(), "m.gguf as float32 weights is 3MiB, over 1MiB, the limit for a model file (raise it with GRAFTRL_MAX_MODEL_BYTES=SIZE, e.g. GRAFTRL_MAX_MODEL_BYTES=4MiB)") {
		t.Errorf("over the limit: %v", err)
	}
	if got, ok := memAvailable(meminfo); !ok || got != 1<<30 {
		t.Errorf("MemAvailable %d %v", got, ok)
	}
}
