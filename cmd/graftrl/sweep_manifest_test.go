package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/sweep"
)

// treeOutside lists every path under root that is not inside dir.
func treeOutside(t *testing.T, root, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == dir {
			return filepath.SkipDir
		}
		out = append(out, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// `graftrl sweep run-one` on a manifest.json whose run name or config path leads outside the
// sweep directory is refused (exit status 2) naming the field and its value, and writes, locks
// and logs nothing outside the sweep directory; so are `sweep status` and `compare` of it. (The trainer is /bin/false: a run that got
// through would fail rather than train.)
func TestSweepRunOneRefusesEscapingManifest(t *testing.T) {
	root := t.TempDir()
	cfg := writeSweepFiles(t, root, tinySweep)
	c, err := loadSweep(cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Prepare(); err != nil {
		t.Fatal(err)
	}
	sd := c.Dir()
	path := filepath.Join(sd, sweep.ManifestFile)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ field, value, want string }{
		{"name", "../../../x", `runs[0].name: "../../../x" is not allowed`},
		{"name", "../../x", `runs[0].name: "../../x" is not allowed`},
		{"config", "../../tiny.yaml", `runs[0].config: "../../tiny.yaml" is not allowed`},
		{"config", filepath.Join(root, "tiny.yaml"), `runs[0].config: "` + filepath.Join(root, "tiny.yaml") + `" is not allowed`},
	} {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		m["runs"].([]any)[0].(map[string]any)[tc.field] = tc.value
		data, _ := json.Marshal(m)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		before := treeOutside(t, root, sd)
		var log bytes.Buffer
		err := sweepRunOne(context.Background(), &sweepRunOneOptions{sweepDirOptions: sweepDirOptions{dir: sd}, index: 0, binary: "false", log: &log})
		if code := exitStatus(err); code != exitConfig || err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s %q: exit %d, error %v; want exit %d naming %s and %q", tc.field, tc.value, code, err, exitConfig, path, tc.want)
		}
		// sweep status and compare read the same manifest, and refuse it the same way.
		for _, args := range [][]string{{"sweep", "status", "--dir", sd}, {"compare", sd}} {
			if _, _, err := cliErr(t, args...); exitStatus(err) != exitConfig || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s %q: %v: exit %d, error %v; want exit %d and %q", tc.field, tc.value, args, exitStatus(err), err, exitConfig, tc.want)
			}
		}
		if after := treeOutside(t, root, sd); !slices.Equal(before, after) {
			t.Errorf("%s %q: the files outside the sweep directory changed:\nbefore %q\nafter  %q", tc.field, tc.value, before, after)
		}
	}
}

// A misspelt compare.metric (sweep, compare --run) or tune.metric (study) is refused before any
// work: exit status 2, the key, the value and the closest name in the message, and no sweep
// directory written. So is a misspelt compare --metric with --run. (The trainer is /bin/false:
// had the work started, the runs would fail.)
func TestMisspeltMetricRefusedBeforeWork(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "out")
	cfg := writeSweepFiles(t, root, tinySweep+"compare: {metric: eval/sucess}\n")
	good := filepath.Join(root, "good.yaml")
	if err := os.WriteFile(good, []byte(tinySweep+"out_dir: "+out+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	study := filepath.Join(root, "study.yaml")
	if err := os.WriteFile(study, []byte(`name: st
base: tiny.yaml
grid:
  seed: [1, 2]
variants:
  - {label: grpo, set: [estimator=grpo]}
  - {label: graft, set: [estimator=graft]}
tune: {key: optim.lr, values: [0.001, 0.002], seeds: [101], metric: eval/heldout/greedy/sucess}
out_dir: `+out+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var sink bytes.Buffer
	for _, tc := range []struct {
		what string
		run  func() error
		want string
	}{
		{"sweep", func() error {
			return sweepRun(context.Background(), &sweepOptions{config: cfg, workers: -1, binary: "false", out: &sink, log: &sink})
		}, `compare.metric: "eval/sucess" is not a metric a run writes; did you mean "eval/success"?`},
		{"compare --run", func() error {
			return compareRun(context.Background(), &compareOptions{run: cfg, budgetTol: -1, workers: -1, binary: "false", out: &sink, log: &sink})
		}, `compare.metric: "eval/sucess"`},
		{"compare --run --metric", func() error {
			return compareRun(context.Background(), &compareOptions{run: good, metric: "eval/heldout/sucess", budgetTol: -1, workers: -1, binary: "false", out: &sink, log: &sink})
		}, `--metric: "eval/heldout/sucess" is not a metric a run writes; did you mean "eval/heldout/success"?`},
		{"study", func() error {
			return studyRun(context.Background(), &studyOptions{config: study, workers: -1, auditSteps: 2, auditMC: 2, binary: "false", out1: &sink, log: &sink})
		}, `tune.metric: "eval/heldout/greedy/sucess" is not a metric a run writes; did you mean "eval/heldout/greedy/success"?`},
	} {
		err := tc.run()
		if code := exitStatus(err); code != exitConfig || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: exit %d, error %v; want exit %d mentioning %q", tc.what, code, err, exitConfig, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%s: wrote %s before refusing", tc.what, out)
		}
	}
}

// sweep --help says what running a sweep again does with unfinished runs: they resume.
func TestSweepHelpSaysRunsResume(t *testing.T) {
	out, _, code := cli(t, "sweep", "--help")
	if code != 0 || !strings.Contains(out, "resumes unfinished ones from their newest checkpoint") || strings.Contains(out, "from scratch") {
		t.Errorf("sweep --help (exit %d):\n%s", code, out)
	}
}
