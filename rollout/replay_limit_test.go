package rollout

import (
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/graftrl/graftrl/internal/limits"
)

// writeBomb writes a gzip file of about 1 MB that inflates to 1 GiB of zeros.
func writeBomb(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bomb.json.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	zeros := make([]byte, 1<<20)
	for range 1024 {
		if _, err := zw.Write(zeros); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// A gzip bomb (1 MB inflating to 1 GiB) is refused at the default batch limit within a second
// and with under 100 MB allocated; raising GRAFTRL_MAX_BATCH_BYTES is what the error proposes,
// and a malformed value of it is refused by name.
func TestReplayGzipBomb(t *testing.T) {
	path := writeBomb(t)
	if fi, _ := os.Stat(path); fi.Size() > 2<<20 {
		t.Fatalf("bomb is %d bytes", fi.Size())
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err := ReadReplay(path)
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, limits.ErrTooLarge) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "GRAFTRL_MAX_BATCH_BYTES") {
		t.Fatalf("bomb: error %v, want one over the limit naming the file and GRAFTRL_MAX_BATCH_BYTES", err)
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("refused in %v, %d KiB allocated", elapsed, allocated>>10)
	if allocated > 100<<20 {
		t.Errorf("refusing the bomb allocated %d MB (want < 100 MB)", allocated>>20)
	}
	if elapsed > time.Second {
		t.Errorf("refusing the bomb took %v (want < 1 s)", elapsed)
	}

	t.Setenv(limits.Batch.Env(), "1KiB")
	if _, err := ReadReplay(path); !errors.Is(err, limits.ErrTooLarge) || !strings.Contains(err.Error(), "1KiB") {
		t.Errorf("1 KiB limit: %v", err)
	}
	t.Setenv(limits.Batch.Env(), "lots")
	if _, err := ReadReplay(path); err == nil || !strings.Contains(err.Error(), limits.Batch.Env()) {
		t.Errorf("malformed limit: %v", err)
	}
}
