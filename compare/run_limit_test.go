package compare

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/internal/limits"
	"github.com/graftrl/graftrl/rundir"
)

// A metrics.jsonl over the metrics limit is refused before it is read, naming the file, the
// limit and the variable that raises it; raised, the same run loads.
func TestLoadRunBoundsMetrics(t *testing.T) {
	dir := simpleRun("big").write(t, t.TempDir())
	path := filepath.Join(dir, rundir.MetricsFile)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(limits.Metrics.Env(), "1KiB")
	if fi.Size() <= 1024 {
		t.Fatalf("the run's metrics.jsonl has %d bytes; the test needs more than 1 KiB", fi.Size())
	}
	_, err = LoadRun(dir)
	if !errors.Is(err, limits.ErrTooLarge) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "1KiB") ||
		!strings.Contains(err.Error(), "GRAFTRL_MAX_METRICS_BYTES") {
		t.Errorf("metrics.jsonl of %d bytes under a 1 KiB limit: %v", fi.Size(), err)
	}
	t.Setenv(limits.Metrics.Env(), "1MiB")
	if _, err := LoadRun(dir); err != nil {
		t.Errorf("with the limit raised: %v", err)
	}
}
