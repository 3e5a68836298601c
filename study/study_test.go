package study

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/rundir"
	"github.com/graftrl/graftrl/sweep"
)

func TestBuildNote(t *testing.T) {
	for _, c := range []struct {
		trained []string
		want    string
	}{
		{nil, "Build: graftrl 0.1.0 (commit b)."},
		{[]string{"0.1.0 (commit b)"}, "Build: graftrl 0.1.0 (commit b)."},
		{[]string{"0.1.0 (commit a)"}, "Build: runs trained and audited by graftrl 0.1.0 (commit a); this report written by graftrl 0.1.0 (commit b)."},
		{[]string{unrecordedBuild, "0.1.0 (commit b)"}, "Build: runs trained and audited by a graftrl that did not record its build, graftrl 0.1.0 (commit b); this report written by graftrl 0.1.0 (commit b)."},
	} {
		if got := buildNote(c.trained, "0.1.0 (commit b)"); got != c.want {
			t.Errorf("buildNote(%q) = %q, want %q", c.trained, got, c.want)
		}
	}
}

// The audited checkpoint is the one nearest to half the run's iterations, the earlier one on a
// tie; a run without checkpoints is refused.
func TestMidCheckpoint(t *testing.T) {
	run := t.TempDir()
	if _, err := MidCheckpoint(run, 10); err == nil {
		t.Error("MidCheckpoint of a run without checkpoints: no error")
	}
	for _, iter := range []int{2, 4, 6, 10} {
		if err := os.MkdirAll(rundir.CheckpointPath(run, iter), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ iterations, want int }{{10, 4}, {12, 6}, {8, 4}, {40, 10}, {1, 2}} {
		got, err := MidCheckpoint(run, c.iterations)
		if err != nil {
			t.Fatal(err)
		}
		if want := rundir.CheckpointPath(run, c.want); got != want {
			t.Errorf("MidCheckpoint(%d iterations) = %s, want %s", c.iterations, filepath.Base(got), filepath.Base(want))
		}
	}
}

// Notes count only the invocations that trained or audited, and name the builds that did.
func TestNotes(t *testing.T) {
	dir := t.TempDir()
	lines := []Invocation{
		{WallSeconds: 3600, CPUSeconds: 60, Trained: 4, Build: "0.1.0 (commit a)"},
		{WallSeconds: 5, CPUSeconds: 1},
		{WallSeconds: 120, CPUSeconds: 30, Audited: 1},
	}
	for _, inv := range lines {
		if err := appendJSONLine(filepath.Join(dir, TimesFile), inv); err != nil {
			t.Fatal(err)
		}
	}
	notes, err := Notes(dir, &sweep.Manifest{}, "0.1.0 (commit b)")
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 3 {
		t.Fatalf("%d notes, want 3: %q", len(notes), notes)
	}
	for i, want := range []string{
		"Time: the study took 1 h 02 min of wall clock in 2 invocation(s) of graftrl study that trained or audited",
		"Machine: ",
		"Build: runs trained and audited by graftrl 0.1.0 (commit a), a graftrl that did not record its build; this report written by graftrl 0.1.0 (commit b).",
	} {
		if !strings.HasPrefix(notes[i], want) {
			t.Errorf("note %d = %q, want it to start with %q", i, notes[i], want)
		}
	}
}
