package trainer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/graftrl/graftrl/rundir"
)

// resumableKeys may differ between a run's recorded config and the config it is resumed with:
// they change how long the run goes or what it writes, not what it computes.
var resumableKeys = map[string]bool{
	"iterations": true, "env_steps": true, "resume": true, "save_batches": true,
	"checkpoint.every": true, "checkpoint.keep_last": true, "faults.step_timeout": true,
	"faults.max_error_share": true, "faults.max_skipped_updates": true,
}

// ConfigDiff lists the keys whose values differ between two configs, as "key: old → new" lines,
// leaving out the keys a resumed run may change.
func ConfigDiff(recorded, current *Config) []string {
	a, b := flattenConfig(recorded), flattenConfig(current)
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var out []string
	for k := range keys {
		if resumableKeys[k] || locationKeys[k] || reflect.DeepEqual(a[k], b[k]) {
			continue
		}
		out = append(out, fmt.Sprintf("%s: %v → %v", k, show(a[k]), show(b[k])))
	}
	sort.Strings(out)
	return out
}

func show(v any) string {
	if v == nil {
		return "(absent)"
	}
	return fmt.Sprint(v)
}

// flattenConfig renders a config as key.path → value.
func flattenConfig(c *Config) map[string]any {
	var m map[string]any
	_ = yaml.Unmarshal(c.YAML(), &m)
	out := map[string]any{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if mm, ok := v.(map[string]any); ok {
			for k, x := range mm {
				walk(joinPath(prefix, k), x)
			}
			return
		}
		out[prefix] = v
	}
	walk("", m)
	return out
}

// locationKeys say where the run directory is, not what the run computes: a run resumed from
// a copied or moved directory has other values for them.
var locationKeys = map[string]bool{"name": true, "out_dir": true}

// holdsRun reports whether dir holds a run: its config, its metrics or a checkpoint.
func holdsRun(dir string) bool {
	for _, f := range []string{rundir.MetricsFile, rundir.ConfigFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	list, _ := rundir.ListCheckpoints(dir)
	return len(list) > 0
}

// openRun prepares the run directory: a fresh run creates it (refusing to reuse one that holds a
// run, unless resuming); a resumed run verifies its config, restores the newest usable checkpoint
// and truncates metrics.jsonl and timing.jsonl back to it, so no iteration appears twice.
//
// A checkpoint is usable when it verifies, its trainer.json reads, and metrics.jsonl and
// timing.jsonl still hold what it recorded of them; otherwise resume falls back to the previous
// one. A run whose checkpoints are all unusable is refused with the reason rather than restarted.
func (t *Trainer) openRun(resume bool) error {
	metricsPath := filepath.Join(t.dir, rundir.MetricsFile)
	timingPath := filepath.Join(t.dir, rundir.TimingFile)
	exists := holdsRun(t.dir)
	if exists && !resume {
		return &ConfigError{Msg: fmt.Sprintf("run directory %s already holds a run; resume it (--resume %s, or resume: auto), choose another name (--name) or remove it", t.dir, t.dir)}
	}
	if err := checkWritable(t.dir, t.pol.Config().NumParams()); err != nil {
		return &ConfigError{Msg: err.Error()}
	}
	var st trainerState
	if exists {
		recordedPath := filepath.Join(t.dir, rundir.ConfigFile)
		recorded, err := Load(recordedPath, nil)
		if err != nil {
			return fmt.Errorf("resume %s: %w", t.dir, err)
		}
		if diff := ConfigDiff(&recorded, &t.cfg); len(diff) > 0 {
			return &ConfigError{Msg: fmt.Sprintf("cannot resume %s: the config differs from the run's recorded config in keys a resumed run may not change:\n  %s\n(allowed to differ: iterations, env_steps, checkpoint.*, faults.*, save_batches; name and out_dir follow the run directory)",
				t.dir, strings.Join(diff, "\n  "))}
		}
		t.keepLocation(&recorded)
		var reasons []string
		ckpt, err := latestUsableCheckpoint(t.dir, func(format string, args ...any) {
			reasons = append(reasons, fmt.Sprintf(format, args...))
			t.logf(format, args...)
		}, func(_ string, st trainerState) error {
			if err := holdsPrefix(metricsPath, st.MetricsBytes, st.MetricsSHA256); err != nil {
				return err
			}
			return holdsPrefix(timingPath, st.TimingBytes, "")
		})
		if err != nil {
			return err
		}
		switch {
		case ckpt != "":
			if st, err = t.restore(ckpt); err != nil {
				return err
			}
			t.resumed = ckpt
		case len(reasons) > 0:
			return &ConfigError{Msg: fmt.Sprintf("cannot resume %s: no checkpoint is usable:\n  %s\nRestore the files named above (from a backup or a copy of the run), or start the run again from the beginning: remove %s, or choose another name (--name)",
				t.dir, strings.Join(reasons, "\n  "), t.dir)}
		default:
			t.logf("warning: %s has no checkpoint; starting the run again from the beginning", t.dir)
		}
	}
	if err := os.WriteFile(filepath.Join(t.dir, rundir.ConfigFile), t.cfg.YAML(), 0o644); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	var err error
	if t.metrics, err = openTruncated(metricsPath, st.MetricsBytes); err != nil {
		return err
	}
	if t.timing, err = openTruncated(timingPath, st.TimingBytes); err != nil {
		return err
	}
	return nil
}

// keepLocation keeps the recorded name and out_dir when they still lead to the run directory
// (another spelling of the same path, the same directory from another working directory), so
// that config.yaml stays as it was; when the directory was copied or moved, config.yaml records
// where it is now, and the log says so.
func (t *Trainer) keepLocation(recorded *Config) {
	here, errHere := os.Stat(t.dir)
	there, errThere := os.Stat(filepath.Join(recorded.OutDir, recorded.Name))
	if errHere == nil && errThere == nil && os.SameFile(here, there) {
		t.cfg.Name, t.cfg.OutDir = recorded.Name, recorded.OutDir
		return
	}
	if recorded.Name != t.cfg.Name || recorded.OutDir != t.cfg.OutDir {
		t.logf("note: %s was recorded as %s; its config.yaml now records name %s, out_dir %s",
			t.dir, filepath.Join(recorded.OutDir, recorded.Name), t.cfg.Name, t.cfg.OutDir)
	}
}

// holdsPrefix checks that the file at path is at least n bytes long and, when sum is not empty,
// that its first n bytes have that SHA-256. The error names the file.
func holdsPrefix(path string, n int64, sum string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist) && n > 0:
		return fmt.Errorf("%s is missing; the checkpoint continues its first %d bytes", path, n)
	case err != nil && n > 0:
		return err
	case n == 0:
		return nil
	case fi.Size() < n:
		return fmt.Errorf("%s is shorter (%d bytes) than the checkpoint recorded (%d)", path, fi.Size(), n)
	}
	if sum == "" {
		return nil
	}
	got, err := prefixSHA256(path, n)
	if err != nil {
		return err
	}
	if got != sum {
		return fmt.Errorf("%s differs from what the checkpoint recorded of its first %d bytes", path, n)
	}
	return nil
}

// openTruncated opens path for appending after cutting it to size bytes (creating it if needed).
func openTruncated(path string, size int64) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if fi, err := f.Stat(); err == nil && fi.Size() < size {
		f.Close()
		return nil, fmt.Errorf("%s is shorter (%d bytes) than its checkpoint recorded (%d): the run directory was altered", path, fi.Size(), size)
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return nil, fmt.Errorf("truncate %s: %w", path, err)
	}
	if _, err := f.Seek(size, 0); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
