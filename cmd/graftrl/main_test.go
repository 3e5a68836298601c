package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/graft"
	"github.com/graftrl/graftrl/rollout"
	"github.com/graftrl/graftrl/rundir"
)

const tinyConfig = `name: cli
iterations: 2
env: {name: maze}
tasks: {train: 2, eval: 2, per_iter: 2, group_size: 2}
rollout: {action_max_tokens: 1}
policy: {d_model: 16, layers: 1, heads: 2, d_ff: 32}
eval: {every: 1}
checkpoint: {every: 1}
`

// graftrlCmd runs the real binary (built once per test run) and returns stdout, stderr, status.
func graftrlCmd(t *testing.T, bin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "graftrl")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// The CLI end to end: train a tiny config with a saved batch, evaluate it, inspect the batch,
// export a graph, list envs; bad input exits with status 2 and a message naming the key.
func TestCLIEndToEnd(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "tiny.yaml")
	if err := os.WriteFile(cfg, []byte(tinyConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	runs := filepath.Join(dir, "runs")

	_, stderr, code := graftrlCmd(t, bin, "train", "--config", cfg, "--out-dir", runs, "--save-batches", "--estimator", "graft")
	if code != 0 {
		t.Fatalf("train exited %d:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "done in") {
		t.Errorf("train output lacks the summary:\n%s", stderr)
	}
	run := filepath.Join(runs, "cli-graft") // --estimator appends to the run name
	for _, f := range []string{rundir.ConfigFile, rundir.MetricsFile, rundir.TimingFile, rundir.SummaryFile, filepath.Join(rundir.BatchesDir, rundir.BatchName(2))} {
		if _, err := os.Stat(filepath.Join(run, f)); err != nil {
			t.Errorf("run lacks %s: %v", f, err)
		}
	}

	out, stderr, code := graftrlCmd(t, bin, "eval", "--run", run)
	if code != 0 || !strings.Contains(out, "eval/success") {
		t.Fatalf("eval exited %d:\n%s\n%s", code, out, stderr)
	}

	batch := rundir.BatchPath(run, 1)
	out, stderr, code = graftrlCmd(t, bin, "advantages", "--batch", batch, "--estimators", "grpo,gigpo,graphgpo,graft,graft:td", "--opt", "graft:td.mode=td")
	if code != 0 || !strings.Contains(out, "pearson") || !strings.Contains(out, "graft:td") {
		t.Fatalf("advantages exited %d:\n%s\n%s", code, out, stderr)
	}
	replay, err := rollout.ReadReplay(batch)
	if err != nil {
		t.Fatal(err)
	}
	share, steps, err := graft.DecisionShare(replay.Batch, graft.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	d := rollout.CountDetours(replay.Batch)
	if d.SuccessSteps+d.FailSteps == 0 {
		t.Error("the maze batch has no step of known progress: the start distances were not recorded")
	}
	for _, w := range []string{fmt.Sprintf("decision-relevant steps %.1f %% of %d", 100*share, steps),
		fmt.Sprintf("wasted steps %.1f %% of %d in successes, %.1f %% of %d in failures", 100*d.SuccessShare(), d.SuccessSteps, 100*d.FailShare(), d.FailSteps)} {
		if !strings.Contains(out, w) {
			t.Errorf("advantages output lacks %q:\n%s", w, out[:min(len(out), 600)])
		}
	}
	out, stderr, code = graftrlCmd(t, bin, "graph", "--batch", batch, "--task", "1", "--format", "dot")
	if code != 0 || !strings.HasPrefix(strings.TrimSpace(out), "digraph") {
		t.Fatalf("graph exited %d:\n%s\n%s", code, out, stderr)
	}
	out, _, code = graftrlCmd(t, bin, "envs", "list")
	if code != 0 || !strings.Contains(out, "maze") {
		t.Fatalf("envs list exited %d: %s", code, out)
	}
	out, _, code = graftrlCmd(t, bin, "estimators", "graft")
	if code != 0 || !strings.Contains(out, "graft — Bellman expectation") || !strings.Contains(out, "mode               path") {
		t.Fatalf("estimators graft exited %d: %s", code, out)
	}
	out, _, code = graftrlCmd(t, bin, "convert", "--help")
	if code != 0 || !strings.Contains(out, "--to") {
		t.Fatalf("convert --help exited %d: %s", code, out)
	}

	// Bad input: status 2, before any work, naming what was wrong.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "--config", cfg, "--set", "update.epochz=2"}, `unknown key "update.epochz"`},
		{[]string{"train", "--config", cfg, "--estimator", "ppo"}, `unknown estimator "ppo"`},
		{[]string{"train", "--config", cfg, "--set", "optim.lr=-1"}, "optim.lr: -1 is out of range"},
		{[]string{"train", "--config", filepath.Join(dir, "missing.yaml")}, "missing.yaml"},
		{[]string{"train"}, "--config FILE is required"},
		{[]string{"train", "--config", cfg, "--bogus"}, "unknown flag: --bogus"},
		{[]string{"advantages", "--batch", cfg}, "not a graftrl batch file"},
		{[]string{"estimators", "ppo"}, `unknown estimator "ppo"`},
		{[]string{"graph", "--batch", batch, "--task", "99"}, "--task must be in 0..1"},
		{[]string{"convert", "--in", filepath.Join(dir, "missing.gguf"), "--out", filepath.Join(dir, "x")}, "missing.gguf: no such file or directory"},
		// A remote env's server is first contacted when the run starts; the error still names the file.
		{[]string{"train", "--config", cfg, "--set", "env=openenv", "--set", "env.url=http://127.0.0.1:1", "--set", "env.connect_retries=0"},
			"config " + cfg + `: env openenv: reading the server's metadata: Get "http://127.0.0.1:1/metadata"`},
	} {
		_, stderr, code := graftrlCmd(t, bin, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", tc.args, code, stderr, tc.want)
		}
	}
}
