package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/rundir"
)

// evalLines reads the greedy success of every evaluation in a run's metrics.jsonl, in order.
func evalLines(t *testing.T, run string) []map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(run, rundir.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("bad metrics line %q: %v", sc.Text(), err)
		}
		if m["type"] == "eval" {
			out = append(out, m)
		}
	}
	return out
}

// closingLine is the "graftrl: done in" line of train's output.
func closingLine(t *testing.T, stderr string) string {
	t.Helper()
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "graftrl: done in ") {
			return line
		}
	}
	t.Fatalf("train's output has no closing line:\n%s", stderr)
	return ""
}

// train's closing line reads greedy success from the run's first evaluation (iteration 0) to its
// last, held-out panel first, with the values metrics.jsonl records; a resumed run that is
// extended still reads from the first process's iteration 0, and a run without an evaluation at
// the start gives the final values alone.
func TestTrainClosingLine(t *testing.T) {
	dir := t.TempDir()
	cfg := writeTiny(t, dir, "")
	runs := filepath.Join(dir, "runs")
	run := filepath.Join(runs, "cli")
	want := func() string {
		evals := evalLines(t, run)
		first, last := evals[0], evals[len(evals)-1]
		if first["iter"] != 0.0 {
			t.Fatalf("the first evaluation is of iteration %v, want 0", first["iter"])
		}
		return fmt.Sprintf("greedy success held-out %.3f → %.3f, train %.3f → %.3f",
			first["eval/heldout/greedy/success"], last["eval/heldout/greedy/success"],
			first["eval/train/greedy/success"], last["eval/train/greedy/success"])
	}
	_, stderr, code := cli(t, "train", "--config", cfg, "--out-dir", runs, "-q")
	if code != 0 {
		t.Fatalf("train: status %d\n%s", code, stderr)
	}
	if line, w := closingLine(t, stderr), "2 iterations, "; !strings.Contains(line, w) || !strings.HasSuffix(line, "; "+want()) {
		t.Errorf("closing line %q, want %q and to end with %q", line, w, want())
	}

	_, stderr, code = cli(t, "train", "--resume", run, "--set", "iterations=3", "-q")
	if code != 0 {
		t.Fatalf("train --resume: status %d\n%s", code, stderr)
	}
	if line, w := closingLine(t, stderr), "3 iterations, "; !strings.Contains(line, w) || !strings.HasSuffix(line, "; "+want()) {
		t.Errorf("closing line after resuming %q, want %q and to end with %q", line, w, want())
	}

	late := filepath.Join(dir, "late.yaml")
	if err := os.WriteFile(late, []byte(strings.Replace(tinyConfig, "eval: {every: 1}", "eval: {every: 1, at_start: false}", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = cli(t, "train", "--config", late, "--out-dir", runs, "--name", "late", "-q")
	if code != 0 {
		t.Fatalf("train with eval.at_start false: status %d\n%s", code, stderr)
	}
	evals := evalLines(t, filepath.Join(runs, "late"))
	last := evals[len(evals)-1]
	w := fmt.Sprintf("; greedy success held-out %.3f, train %.3f", last["eval/heldout/greedy/success"], last["eval/train/greedy/success"])
	if line := closingLine(t, stderr); !strings.HasSuffix(line, w) {
		t.Errorf("closing line without a start evaluation %q, want it to end with %q", line, w)
	}
}
