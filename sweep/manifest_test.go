package sweep

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/config"
)

// Prepare writes the manifest and each run's resolved config; indices stay fixed when the grid
// grows (new runs are appended), so `run-one --index` keeps meaning the same run.
func TestManifestIndexStability(t *testing.T) {
	dir := t.TempDir()
	c := writeSweep(t, dir, "name: m\nbase: tiny.yaml\ngrid:\n  estimator: [grpo, graft]\n  seed: [1, 2]\n")
	m, err := c.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	sd := c.Dir()
	for _, f := range []string{ManifestFile, SweepFile, BaseFile, "configs/maze-graft-s2.yaml"} {
		if _, err := os.Stat(filepath.Join(sd, f)); err != nil {
			t.Errorf("sweep directory lacks %s", f)
		}
	}
	loaded, err := LoadManifest(sd)
	if err != nil {
		t.Fatal(err)
	}
	if names(loaded.Runs) != names(m.Runs) || loaded.Runs[3].Name != "maze-graft-s2" || loaded.Compare.Final != FinalCommonBudget {
		t.Fatalf("loaded manifest: %s", names(loaded.Runs))
	}
	cfg, err := config.Load(filepath.Join(sd, loaded.Runs[3].Config), nil)
	if err != nil || cfg.Name != "maze-graft-s2" || cfg.Seed != 2 || cfg.Estimator.Name != "graft" {
		t.Errorf("resolved config file: %+v, %v", cfg, err)
	}
	mtime := func() int64 {
		fi, err := os.Stat(filepath.Join(sd, "configs/maze-grpo-s1.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		return fi.ModTime().UnixNano()
	}
	before := mtime()

	// A third seed: in the product it would come between, in the manifest it is appended.
	c = writeSweep(t, dir, "name: m\nbase: tiny.yaml\ngrid:\n  estimator: [grpo, graft]\n  seed: [1, 2, 3]\n")
	if runs, _ := c.Expand(); runs[2].Name != "maze-grpo-s3" {
		t.Fatalf("expansion order: %s", names(runs))
	}
	m2, err := c.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	want := "maze-grpo-s1 maze-grpo-s2 maze-graft-s1 maze-graft-s2 maze-grpo-s3 maze-graft-s3"
	if got := names(m2.Runs); got != want {
		t.Errorf("grown manifest %q, want %q", got, want)
	}
	for i, r := range m2.Runs {
		if r.Index != i {
			t.Errorf("run %s has index %d at %d", r.Name, r.Index, i)
		}
	}
	if mtime() != before {
		t.Error("an unchanged config file was rewritten")
	}
	if r, err := m2.Run(5); err != nil || r.Name != "maze-graft-s3" {
		t.Errorf("Run(5) = %v, %v", r, err)
	}
	if _, err := m2.Run(6); err == nil || !strings.Contains(err.Error(), "index 6 is out of range (the sweep m has runs 0..5)") {
		t.Errorf("Run(6): %v", err)
	}
}

// A sweep directory refuses a grid whose runs' configs changed or that dropped runs: its
// finished runs would no longer match the sweep config.
func TestManifestRefusesChanges(t *testing.T) {
	dir := t.TempDir()
	c := writeSweep(t, dir, "name: m\nbase: tiny.yaml\ngrid:\n  seed: [1, 2]\n")
	if _, err := c.Prepare(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ sweep, want string }{
		{"name: m\nbase: tiny.yaml\ngrid:\n  seed: [1, 2]\nset: [update.epochs=3]\n", "run maze-grpo-s1: its config changed since the sweep started (update.epochs: 1 → 3)"},
		{"name: m\nbase: tiny.yaml\ngrid:\n  seed: [2]\n", "holds run maze-grpo-s1, which the grid no longer has"},
	} {
		c := writeSweep(t, dir, tc.sweep)
		_, err := c.Prepare()
		var ce *config.Error
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "give the sweep a new name") {
			t.Errorf("%q: %v; want a ConfigError containing %q", tc.sweep, err, tc.want)
		}
	}
	// Writing the same config from another working directory (out_dir differs) is no change.
	c = writeSweep(t, dir, "name: m\nbase: tiny.yaml\ngrid:\n  seed: [1, 2]\n")
	if _, err := c.Plan(); err != nil {
		t.Errorf("unchanged sweep: %v", err)
	}
}

func TestLoadManifestErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadManifest(dir); err == nil || !strings.Contains(err.Error(), "is not a sweep directory: no manifest.json") {
		t.Errorf("missing: %v", err)
	}
	for _, tc := range []struct{ json, want string }{
		{"{", "invalid JSON"},
		{`{"version": 9}`, "version 9 is not supported"},
		{`{"version": 1, "runs": [{"index": 1, "name": "a", "config": "c"}]}`, "run 0 is malformed"},
	} {
		os.WriteFile(filepath.Join(dir, ManifestFile), []byte(tc.json), 0o644)
		if _, err := LoadManifest(dir); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.json, err, tc.want)
		}
	}
}
