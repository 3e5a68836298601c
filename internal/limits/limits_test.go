package limits

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"100": 100, "2KiB": 2048, "3MB": 3 << 20, "1GiB": 1 << 30, "5 G": 5 << 30, "7B": 7} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1", "1.5MiB", "lots", "9999999999GiB"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
}

// A file over its kind's limit is refused, naming the file and the variable that raises it.
func TestReadFileLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, make([]byte, 2<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Config.ReadFile(path)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), Config.Env()) {
		t.Fatalf("2 MiB config: %v", err)
	}
	t.Setenv(Config.Env(), "4MiB")
	if data, err := Config.ReadFile(path); err != nil || len(data) != 2<<20 {
		t.Fatalf("with the limit raised: %d bytes, %v", len(data), err)
	}
}
