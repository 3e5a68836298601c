package trainer

import (
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
		if resumableKeys[k] || reflect.DeepEqual(a[k], b[k]) {
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

// openRun prepares the run directory: a fresh run creates it (refusing to reuse one that holds a
// run, unless resuming); a resumed run verifies its config, restores the newest valid checkpoint
// and truncates metrics.jsonl and timing.jsonl back to it, so no iteration appears twice.
func (t *Trainer) openRun(resume bool) error {
	metricsPath := filepath.Join(t.dir, rundir.MetricsFile)
	_, statErr := os.Stat(metricsPath)
	exists := statErr == nil
	if exists && !resume {
		return &ConfigError{Msg: fmt.Sprintf("run directory %s already holds a run; resume it (--resume %s, or resume: auto), choose another name (--name) or remove it", t.dir, t.dir)}
	}
	if err := checkWritable(t.dir, t.pol.Config().NumParams()); err != nil {
		return err
	}
	var st trainerState
	ckpt := ""
	if exists {
		recorded, err := Load(filepath.Join(t.dir, rundir.ConfigFile), nil)
		if err != nil {
			return fmt.Errorf("resume %s: %w", t.dir, err)
		}
		if diff := ConfigDiff(&recorded, &t.cfg); len(diff) > 0 {
			return &ConfigError{Msg: fmt.Sprintf("cannot resume %s: the config differs from the run's recorded config in keys a resumed run may not change:\n  %s\n(allowed to differ: iterations, env_steps, checkpoint.*, faults.*, save_batches)",
				t.dir, strings.Join(diff, "\n  "))}
		}
		if ckpt, err = latestValidCheckpoint(t.dir, t.logf); err != nil {
			return err
		}
		if ckpt != "" {
			if st, err = t.restore(ckpt); err != nil {
				return err
			}
			t.resumed = ckpt
		} else {
			t.logf("warning: %s has no valid checkpoint; starting the run again from the beginning", t.dir)
		}
	}
	if err := os.WriteFile(filepath.Join(t.dir, rundir.ConfigFile), t.cfg.YAML(), 0o644); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	var err error
	if t.metrics, err = openTruncated(metricsPath, st.MetricsBytes); err != nil {
		return err
	}
	if t.timing, err = openTruncated(filepath.Join(t.dir, rundir.TimingFile), st.TimingBytes); err != nil {
		return err
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
