package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graftrl/graftrl/internal/limits"
	"github.com/graftrl/graftrl/rundir"
	"github.com/graftrl/graftrl/sweep"
)

// writeRunDir writes a finished run under root the way the trainer does: config.yaml,
// metrics.jsonl (an evaluation before training, two iterations of 10 env steps, an evaluation
// whose eval/success is final) and summary.json. It returns the run directory.
func writeRunDir(t *testing.T, root, estimator string, seed int, final string) string {
	t.Helper()
	name := fmt.Sprintf("maze-%s-s%d", estimator, seed)
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("name: %s\nseed: %d\nestimator: {name: %s}\n", name, seed, estimator) + strings.TrimPrefix(tinyConfig, "name: cli\n")
	metrics := `{"type":"eval","iter":0,"env_steps":0,"eval/success":0}
{"type":"train","iter":1,"env_steps":10,"tokens":10,"success":0.5}
{"type":"train","iter":2,"env_steps":20,"tokens":20,"success":0.5}
{"type":"eval","iter":2,"env_steps":20,"eval/success":` + final + "}\n"
	for file, body := range map[string]string{rundir.ConfigFile: cfg, rundir.MetricsFile: metrics,
		rundir.SummaryFile: `{"iterations": 2, "env_steps": 20, "tokens": 20}`} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// writeRunsDir writes grpo and graft runs of seeds 1 to 3 under root/runs; graft's seed 2 ends
// at final, the others at 0.5 or so. It returns root/runs.
func writeRunsDir(t *testing.T, root, final string) string {
	t.Helper()
	runs := filepath.Join(root, "runs")
	for _, est := range []string{"grpo", "graft"} {
		for s := 1; s <= 3; s++ {
			v := fmt.Sprintf("0.%d", 4+s)
			if est == "graft" && s == 2 {
				v = final
			}
			writeRunDir(t, runs, est, s, v)
		}
	}
	return runs
}

// A metric value of 1e308 — finite, but its statistics overflow — is refused (exit status 2)
// naming the run's metrics.jsonl and the metric, and no report is left; the earlier report of
// the folder stays as it was.
func TestCompareHugeValue(t *testing.T) {
	root := t.TempDir()
	runs := writeRunsDir(t, root, "1e308")
	report := filepath.Join(root, "report")
	_, _, err := cliErr(t, "compare", runs, "--out", report)
	file := filepath.Join(runs, "maze-graft-s2", rundir.MetricsFile)
	if code := exitStatus(err); code != exitConfig || err == nil || !strings.Contains(err.Error(), file) ||
		!strings.Contains(err.Error(), "eval/success is 1e+308 at iter 2") {
		t.Errorf("exit %d, error %v; want exit %d naming %s and eval/success", code, err, exitConfig, file)
	}
	if _, err := os.Stat(report); err == nil {
		t.Error("a refused comparison left a report")
	}
	if entries, _ := os.ReadDir(root); len(entries) != 1 {
		t.Errorf("a refused comparison left files beside the runs: %v", entries)
	}
}

// compare reads a metrics.jsonl within the metrics limit: one over it is refused (exit status
// 2) naming the file, the limit and the variable that raises it, and no report is written.
func TestCompareBoundsMetrics(t *testing.T) {
	root := t.TempDir()
	runs := writeRunsDir(t, root, "0.5")
	t.Setenv(limits.Metrics.Env(), "100")
	_, _, err := cliErr(t, "compare", runs)
	file := filepath.Join(runs, "maze-graft-s1", rundir.MetricsFile)
	if code := exitStatus(err); code != exitConfig || err == nil || !strings.Contains(err.Error(), file+" is ") ||
		!strings.Contains(err.Error(), "100 bytes") || !strings.Contains(err.Error(), "GRAFTRL_MAX_METRICS_BYTES") {
		t.Errorf("exit %d, error %v; want exit %d naming the file, the limit and the variable", code, err, exitConfig)
	}
	if _, err := os.Stat(filepath.Join(runs, sweep.ReportDir)); err == nil {
		t.Error("a refused comparison left a report")
	}
}

// compare of a sweep whose run's metrics.jsonl never ends (a link to /dev/urandom) returns,
// refusing the unfinished run, instead of reading forever.
func TestCompareEndlessMetrics(t *testing.T) {
	if _, err := os.Stat("/dev/urandom"); err != nil {
		t.Skip("no /dev/urandom")
	}
	root := t.TempDir()
	c, err := loadSweep(writeSweepFiles(t, root, "name: rnd\nbase: tiny.yaml\ngrid:\n  seed: [1]\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(c.Dir(), m.Runs[0].RunPath())
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/urandom", filepath.Join(run, rundir.MetricsFile)); err != nil {
		t.Fatal(err)
	}
	t.Setenv(limits.Metrics.Env(), "1MiB")
	done := make(chan error, 1)
	go func() {
		_, _, err := cliErr(t, "compare", c.Dir())
		done <- err
	}()
	select {
	case err := <-done:
		if code := exitStatus(err); code != exitConfig || err == nil || !strings.Contains(err.Error(), "1 of 1 runs are not finished") {
			t.Errorf("exit %d, error %v; want exit %d refusing the unfinished run", code, err, exitConfig)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("compare still reading a metrics.jsonl linked to /dev/urandom after 60 s")
	}
}

// --holm chooses the family of Holm's correction: family is named in the report and in the
// command line it records; any value but env and family is refused (exit status 2) before the
// runs are read, and no report is written.
func TestCompareHolm(t *testing.T) {
	root := t.TempDir()
	runs := writeRunsDir(t, root, "0.9")
	bad := filepath.Join(root, "bad")
	_, _, err := cliErr(t, "compare", runs, "--out", bad, "--holm", "cells")
	if code := exitStatus(err); code != exitConfig || err == nil || err.Error() != `compare: --holm "cells" is not allowed (allowed: env, family)` {
		t.Errorf("--holm cells: exit %d, error %v; want exit %d naming the flag, the value and env, family", code, err, exitConfig)
	}
	if _, err := os.Stat(bad); err == nil {
		t.Error("a refused --holm left a report")
	}
	for _, tc := range []struct {
		holm string
		want []string
	}{
		{"", []string{"each Holm-corrected over the 1 method(s) compared with grpo in the same environment."}},
		{"env", []string{"each Holm-corrected over the 1 method(s) compared with grpo in the same environment.", "--holm=env"}},
		{"family", []string{"each Holm-corrected once over the whole family (holm: family): every (environment, method) comparison with grpo on the final score, 1 test(s) (1 environment(s), 1 method(s)).",
			"Produced by: graftrl compare " + runs + " --out=" + filepath.Join(root, "family") + " --holm=family"}},
	} {
		out := filepath.Join(root, "report-"+tc.holm)
		args := []string{"compare", runs, "--out", out}
		if tc.holm != "" {
			out = filepath.Join(root, tc.holm)
			args = []string{"compare", runs, "--out", out, "--holm", tc.holm}
		}
		if _, stderr, err := cliErr(t, args...); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr)
		}
		md, err := os.ReadFile(filepath.Join(out, "report.md"))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(md), w) {
				t.Errorf("--holm %q: report.md lacks %q", tc.holm, w)
			}
		}
	}
}
