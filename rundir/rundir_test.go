package rundir

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A checkpoint name parses back to its iteration, and its path sits under checkpoints/.
func TestCheckpointNameRoundTrip(t *testing.T) {
	for _, iter := range []int{0, 1, 80, 999_999, 1_000_000, 12_345_678} {
		name := CheckpointName(iter)
		got, err := ParseCheckpointName(name)
		if err != nil || got != iter {
			t.Errorf("ParseCheckpointName(%q) = %d, %v; want %d", name, got, err, iter)
		}
		path := CheckpointPath("runs/x", iter)
		if path != filepath.Join("runs/x", CheckpointsDir, name) {
			t.Errorf("CheckpointPath = %q", path)
		}
		if back, err := ParseCheckpointName(filepath.Base(path)); err != nil || back != iter {
			t.Errorf("path %q parses to %d, %v", path, back, err)
		}
	}
	if got := CheckpointName(80); got != "iter-000080" {
		t.Errorf("CheckpointName(80) = %q", got)
	}
	if got := BatchPath("r", 3); got != filepath.Join("r", BatchesDir, "iter-000003.json.gz") {
		t.Errorf("BatchPath = %q", got)
	}
	if got := PolicyPath(CheckpointPath("r", 3)); got != filepath.Join("r", "checkpoints", "iter-000003", "policy") {
		t.Errorf("PolicyPath = %q", got)
	}
}

// Names the trainer does not write are refused, with the name in the error.
func TestParseCheckpointNameRefusesBadNames(t *testing.T) {
	for _, name := range []string{"", "iter-", "iter-80", "iter-00080", "iter-0000080", "iter--00001", "iter-+00001",
		"iter-00008a", "iter-000080/", "iter-000080.json.gz", "Iter-000080", "000080", ".tmp-iter-000080", " iter-000080",
		"iter-99999999999999999999999"} {
		if n, err := ParseCheckpointName(name); err == nil {
			t.Errorf("ParseCheckpointName(%q) = %d, want an error", name, n)
		}
	}
}

// ListCheckpoints orders by iteration, leaves out temporary folders, files and strays, and
// treats a missing checkpoints folder as none.
func TestListCheckpoints(t *testing.T) {
	run := t.TempDir()
	if list, err := ListCheckpoints(run); err != nil || list != nil {
		t.Fatalf("no checkpoints folder: %v, %v", list, err)
	}
	for _, iter := range []int{1_000_000, 20, 3} {
		if err := os.MkdirAll(CheckpointPath(run, iter), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, stray := range []string{TempCheckpointPath(run, 40), filepath.Join(run, CheckpointsDir, "iter-x")} {
		if err := os.MkdirAll(stray, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(run, CheckpointsDir, CheckpointName(50)), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	list, err := ListCheckpoints(run)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{CheckpointPath(run, 3), CheckpointPath(run, 20), CheckpointPath(run, 1_000_000)}
	if !slices.Equal(list, want) {
		t.Fatalf("ListCheckpoints = %v, want %v", list, want)
	}
}
