package main

import (
	"maps"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// play --run lets a trained run's policy play a task: the episode as the policy saw it, each
// step's action and reward, the outcome; it writes nothing into the run. --env beside --run is
// a usage error.
func TestPlayRun(t *testing.T) {
	dir := t.TempDir()
	run := trainTiny(t, dir, "")
	before := snapshot(t, run)
	out, stderr, code := cli(t, "play", "--run", run, "--seed", "500001")
	if code != 0 {
		t.Fatalf("play --run: status %d\n%s", code, stderr)
	}
	if !strings.Contains(out, "task 500001, checkpoint "+filepath.Join(run, "checkpoints")) {
		t.Errorf("no task and checkpoint line in:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^ 1\. "\S+" +reward `).MatchString(out) {
		t.Errorf("no step line in:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^(success|failed|truncated) after \d+ steps`).MatchString(out) {
		t.Errorf("no outcome line in:\n%s", out)
	}
	if !strings.Contains(out, "<bos>") {
		t.Errorf("the episode's tokens are not shown:\n%s", out)
	}
	if after := snapshot(t, run); !maps.Equal(before, after) {
		t.Error("play --run changed the run directory")
	}
	again, _, _ := cli(t, "play", "--run", run, "--seed", "500001")
	if again != out {
		t.Error("greedy play of the same task differs between two calls")
	}
	if _, _, err := cliErr(t, "play", "--run", run, "--env", "maze"); exitStatus(err) != 2 || !strings.Contains(err.Error(), "--env") {
		t.Errorf("play --run with --env: %v (status %d); want status 2 naming --env", err, exitStatus(err))
	}
	if _, _, err := cliErr(t, "play", "--run", run, "--untrained", "--checkpoint", filepath.Join(run, "checkpoints")); exitStatus(err) != 2 || !strings.Contains(err.Error(), "--untrained") {
		t.Errorf("play --untrained with --checkpoint: %v (status %d); want status 2 naming both", err, exitStatus(err))
	}
}

// play --untrained plays the weights a run started from: the same episode, token for token, as
// the checkpoint of a run of the same config and seed whose learning rate (1e-12) is too small
// to move a float32 weight. The run's own, trained, weights play the task differently.
func TestPlayUntrained(t *testing.T) {
	dir := t.TempDir()
	run := trainTiny(t, dir, "")
	untrained, stderr, code := cli(t, "play", "--run", run, "--seed", "500003", "--untrained")
	if code != 0 {
		t.Fatalf("play --untrained: status %d\n%s", code, stderr)
	}
	if !strings.Contains(untrained, "task 500003, checkpoint untrained") {
		t.Errorf("no untrained checkpoint line in:\n%s", untrained)
	}
	still := filepath.Join(dir, "still")
	if _, stderr, code := cli(t, "train", "--config", filepath.Join(dir, "tiny.yaml"), "--out-dir", still, "--set", "optim.lr=1e-12", "-q"); code != 0 {
		t.Fatalf("train at lr 1e-12: status %d\n%s", code, stderr)
	}
	frozen, _, _ := cli(t, "play", "--run", filepath.Join(still, "cli"), "--seed", "500003")
	body := func(s string) string { _, b, _ := strings.Cut(s, "\n"); return b }
	if body(frozen) != body(untrained) {
		t.Errorf("--untrained differs from the weights training at lr 1e-12 left:\n%s\nwant\n%s", untrained, frozen)
	}
	trained, _, _ := cli(t, "play", "--run", run, "--seed", "500003")
	if body(trained) == body(untrained) {
		t.Error("the trained and the untrained weights play the task identically: the check above cannot tell them apart")
	}
	warm := trainTiny(t, t.TempDir(), tinySFT)
	if _, _, err := cliErr(t, "play", "--run", warm, "--seed", "500003", "--untrained"); exitStatus(err) != 2 || !strings.Contains(err.Error(), "--untrained: run") || !strings.Contains(err.Error(), "warm start") {
		t.Errorf("play --untrained of a warm-started run: %v (status %d); want status 2 naming --untrained and the warm start", err, exitStatus(err))
	}
}
