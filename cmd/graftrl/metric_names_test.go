package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/compare"
	"github.com/graftrl/graftrl/rundir"
)

// compare.EvalMetrics, the names a sweep's compare.metric and tune.metric are checked against
// before any run trains, are exactly the keys of the eval lines the trainer writes (with a
// training panel and sampled evaluation, which write them all).
func TestEvalMetricsMatchTrainer(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "tiny.yaml")
	body := strings.Replace(tinyConfig, "eval: {every: 1}", "eval: {every: 1, sampled: true}", 1)
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := cli(t, "train", "--config", cfg, "--out-dir", filepath.Join(dir, "runs"), "--iterations", "1", "-q"); code != 0 {
		t.Fatalf("train: exit %d\n%s", code, stderr)
	}
	f, err := os.Open(filepath.Join(dir, "runs", "cli", rundir.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keys := map[string]bool{}
	evals := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		if line["type"] != "eval" {
			continue
		}
		evals++
		for k := range line {
			if k != "type" && k != "iter" && k != "env_steps" {
				keys[k] = true
			}
		}
	}
	written := make([]string, 0, len(keys))
	for k := range keys {
		written = append(written, k)
	}
	sort.Strings(written)
	if want := compare.EvalMetrics(); evals == 0 || !slices.Equal(written, want) {
		t.Errorf("the trainer's eval lines (%d) carry\n%q\ncompare.EvalMetrics() is\n%q", evals, written, want)
	}
}
