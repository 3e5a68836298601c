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
}
