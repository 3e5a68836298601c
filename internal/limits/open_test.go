package limits

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Open refuses a regular file over the limit before reading it, reads one of exactly the limit
// whole, and stops a file that is not regular (a device that never ends) at the limit, with an
// error naming the file, the limit and the variable that raises it.
func TestOpenLimit(t *testing.T) {
	t.Setenv(Metrics.Env(), "1KiB")
	dir := t.TempDir()
	big := filepath.Join(dir, "big.jsonl")
	if err := os.WriteFile(big, make([]byte, 1025), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Metrics.Open(big); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), big) ||
		!strings.Contains(err.Error(), "1KiB") || !strings.Contains(err.Error(), "GRAFTRL_MAX_METRICS_BYTES") {
		t.Errorf("1025 bytes: %v", err)
	}
	exact := filepath.Join(dir, "exact.jsonl")
	if err := os.WriteFile(exact, make([]byte, 1024), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Metrics.Open(exact)
	if err != nil {
		t.Fatal(err)
	}
	if data, err := io.ReadAll(f); err != nil || len(data) != 1024 {
		t.Errorf("1024 bytes: read %d, %v", len(data), err)
	}
	f.Close()
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	f, err = Metrics.Open("/dev/zero")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if !errors.Is(err, ErrTooLarge) || len(data) != 1024 || !strings.Contains(err.Error(), "/dev/zero") {
		t.Errorf("/dev/zero: read %d bytes, %v; want 1024 and the limit's error", len(data), err)
	}
	if Metrics.Default() != 1<<30 {
		t.Errorf("default metrics limit %d, want 1 GiB", Metrics.Default())
	}
}
