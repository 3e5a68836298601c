package sweep

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/graftrl/graftrl/internal/limits"
	"github.com/graftrl/graftrl/rundir"
)

// A run's metrics.jsonl that never ends (a link to /dev/urandom) is read no further than the
// metrics limit: Check, which status and compare call on every run, returns.
func TestCheckBoundsMetrics(t *testing.T) {
	if _, err := os.Stat("/dev/urandom"); err != nil {
		t.Skip("no /dev/urandom")
	}
	dir := t.TempDir()
	c := writeSweep(t, dir, "name: rnd\nbase: tiny.yaml\ngrid:\n  seed: [1]\n")
	m, err := c.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(c.Dir(), m.Runs[0].RunPath())
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/urandom", filepath.Join(runDir, rundir.MetricsFile)); err != nil {
		t.Fatal(err)
	}
	t.Setenv(limits.Metrics.Env(), "1MiB")
	done := make(chan Status, 1)
	go func() { done <- Check(c.Dir(), &m.Runs[0], "") }()
	select {
	case st := <-done:
		if st.State != Unfinished {
			t.Errorf("state %s, want %s", st.State, Unfinished)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Check still reading a metrics.jsonl linked to /dev/urandom after 30 s")
	}
}
