package trainer

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/rundir"
)

// tinyYAML trains a very small policy for a few iterations: enough to exercise every stage.
const tinyYAML = `
name: tiny
iterations: 3
env: {name: maze, size: 5}
tasks: {train: 2, eval: 2, per_iter: 2, group_size: 3}
rollout: {action_max_tokens: 1}
policy: {d_model: 16, layers: 1, heads: 2, d_ff: 32, max_len: 128}
update: {epochs: 2, minibatches: 2, entropy_coef: 0.05}
eval: {every: 2}
checkpoint: {every: 2, keep_last: 1}
`

// newTiny prepares the tiny run in dir with the overrides.
func newTiny(t *testing.T, dir string, sets ...string) *Trainer {
	t.Helper()
	tr, err := New(tinyConfig(t, dir, sets...), Options{Out: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func runTiny(t *testing.T, dir string, sets ...string) (Summary, []byte) {
	t.Helper()
	return runConfig(t, tinyConfig(t, dir, sets...))
}

// runConfig trains cfg to the end and returns the summary and metrics.jsonl.
func runConfig(t *testing.T, cfg config.Config) (Summary, []byte) {
	t.Helper()
	tr, err := New(cfg, Options{Out: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	s, err := tr.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(tr.Dir(), rundir.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	return s, data
}

// Same config and seed → byte-identical metrics.jsonl; another seed → different metrics.
func TestRunDeterminism(t *testing.T) {
	for _, sampler := range []string{"host", "graph"} {
		t.Run(sampler, func(t *testing.T) {
			_, a := runTiny(t, t.TempDir(), "rollout.sampler="+sampler)
			_, b := runTiny(t, t.TempDir(), "rollout.sampler="+sampler)
			if !bytes.Equal(a, b) {
				t.Fatalf("two runs with the same seed differ:\n%s\n---\n%s", a, b)
			}
			_, c := runTiny(t, t.TempDir(), "rollout.sampler="+sampler, "seed=2")
			if bytes.Equal(a, c) {
				t.Fatal("runs with different seeds wrote identical metrics")
			}
		})
	}
}

// A run writes one train line per iteration and eval lines at the configured points, with the
// keys the comparison tools read, and checkpoints it can be evaluated from.
func TestRunOutputs(t *testing.T) {
	dir := t.TempDir()
	s, data := runTiny(t, dir)
	if s.Iterations != 3 || s.EnvSteps == 0 {
		t.Fatalf("summary = %+v", s)
	}
	var train, eval int
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("bad metrics line %q: %v", line, err)
		}
		switch m["type"] {
		case "train":
			train++
			for _, k := range []string{"iter", "env_steps", "success", "loss", "pg_loss", "entropy", "approx_kl",
				"clip_frac", "grad_norm", "est/adv_mean", "logp_diff_max"} {
				if _, ok := m[k]; !ok {
					t.Errorf("train line lacks %q: %s", k, line)
				}
			}
			if d := m["logp_diff_max"].(float64); d > 1e-4 {
				t.Errorf("sampled and recomputed log-probs differ by %g", d)
			}
		case "eval":
			eval++
			for _, k := range []string{"eval/success", "eval/heldout/success", "eval/train/sampled/success",
				"eval/train/greedy/turns", "eval/train/greedy/invalid_rate", "eval/train/greedy/return"} {
				if _, ok := m[k]; !ok {
					t.Errorf("eval line lacks %q: %s", k, line)
				}
			}
		}
	}
	// at_start (iter 0), every 2 (iter 2), and the last (iter 3)
	if train != 3 || eval != 3 {
		t.Errorf("got %d train and %d eval lines, want 3 and 3", train, eval)
	}
	ckpts, err := rundir.ListCheckpoints(filepath.Join(dir, "tiny"))
	if err != nil || len(ckpts) != 1 || !strings.HasSuffix(ckpts[0], rundir.CheckpointName(3)) {
		t.Fatalf("checkpoints = %v, %v (keep_last 1 should leave iter-000003)", ckpts, err)
	}
	m, err := EvaluateRun(filepath.Join(dir, "tiny"), "", Options{Out: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if m["iter"] != 3 {
		t.Errorf("evaluated iteration %v, want 3", m["iter"])
	}
	// A second run into the same directory is refused before any work: nothing is overwritten.
	cfg, _ := config.Parse("tiny.yaml", []byte(tinyYAML), []string{"out_dir=" + dir})
	if _, err := New(cfg, Options{Out: io.Discard}); err == nil || !strings.Contains(err.Error(), "already holds a run") {
		t.Fatalf("rerun into an existing run directory: %v", err)
	}
}

// Every estimator, both layouts, the step objective, KL to the reference, dual clip and the other
// aggregations run end to end, and the sampled log-probs match the trainer's recomputation.
func TestRunVariants(t *testing.T) {
	variants := [][]string{
		{"estimator=drgrpo", "update.aggregation=seq-mean-token-sum-norm"},
		{"estimator=gigpo", "update.aggregation=seq-mean-token-mean"},
		{"estimator=graphgpo", "update.dual_clip=3"},
		{"estimator=graft", "update.objective=step"},
		{"estimator=graft", "estimator.mode=paper", "update.kl=k3"},
		{"rollout.layout=window", "rollout.window_turns=1", "update.objective=step"},
		{"rollout.layout=window", "rollout.sampler=graph", "rollout.action_max_tokens=2", "rollout.constrain_actions=false"},
		{"env_steps=10", "iterations=50"},
	}
	for _, v := range variants {
		t.Run(strings.Join(v, ","), func(t *testing.T) {
			s, data := runTiny(t, t.TempDir(), append([]string{"iterations=2"}, v...)...)
			if s.Iterations < 1 {
				t.Fatalf("summary = %+v", s)
			}
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				var m map[string]any
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatal(err)
				}
				if m["type"] == "train" {
					if d, _ := m["logp_diff_max"].(float64); d > 1e-4 {
						t.Errorf("sampled vs recomputed log-prob difference %g", d)
					}
					if m["skipped_updates"].(float64) != 0 {
						t.Errorf("skipped updates: %s", line)
					}
				}
			}
		})
	}
}
