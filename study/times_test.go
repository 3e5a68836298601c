package study

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/sweep"
)

// The report's Time counts every invocation that did work, the one a signal stopped before
// any run finished included, and every attempt at each run, the earlier invocations' included.
func TestNotesCountEveryInvocation(t *testing.T) {
	dir := t.TempDir()
	// The files as written (their JSON keys are the format): an invocation stopped by Ctrl-C
	// with two runs half trained, a re-run that only rewrote the report, one that resumed both
	// runs to their end.
	times := `{"wall_s": 1800, "cpu_s": 20, "trained": 0, "partial": 2, "audited": 0, "finished": false}
{"wall_s": 5, "cpu_s": 1, "trained": 0, "audited": 0, "finished": true}
{"wall_s": 1200, "cpu_s": 40, "trained": 2, "audited": 0, "finished": true}
`
	if err := os.WriteFile(filepath.Join(dir, TimesFile), []byte(times), 0o644); err != nil {
		t.Fatal(err)
	}
	m := &sweep.Manifest{Name: "s", Runs: []sweep.Run{{Index: 0, Name: "maze-grpo-s1"}, {Index: 1, Name: "maze-grpo-s2"}}}
	if err := os.MkdirAll(filepath.Join(dir, sweep.StateDir), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, r := range m.Runs {
		// The last attempt: 20 min and 1000 s of CPU, after earlier ones of 30 min and 1500 s.
		a := `{"attempt": 2, "started": "2026-01-02T03:00:00Z", "ended": "2026-01-02T03:20:00Z", "exit": 0,
"cpu_seconds": 1000, "earlier_cpu_seconds": 1500, "earlier_wall_seconds": 1800}`
		if err := os.WriteFile(filepath.Join(dir, sweep.StateDir, r.Name+".json"), []byte(a), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	notes, err := Notes(dir, m, "0.1.0 (commit b)")
	if err != nil {
		t.Fatal(err)
	}
	// Wall: 1800 + 1200 s (the report-only re-run left out). CPU: 2 × (1500 + 1000) s in the
	// training processes and 20 + 40 s in the study process. Training wall: 2 × (1800 + 1200) s.
	for _, want := range []string{
		"Time: the study took 50 min 00 s of wall clock in 2 invocation(s) of graftrl study that trained or audited",
		"and 1 h 24 min of CPU time (1 h 23 min in the training processes of its 2 runs, over all their attempts",
		"1 min 00 s in the study process",
		"The training processes' own wall times, over all their attempts, add up to 1 h 40 min.",
	} {
		if !strings.Contains(notes[0], want) {
			t.Errorf("Time note lacks %q:\n%s", want, notes[0])
		}
	}
}
