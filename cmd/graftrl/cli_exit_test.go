package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/rundir"
)

// A --checkpoint of eval or audit that names no valid checkpoint is refused input (exit status
// 2, as the exit-status table has it; it was 1), before the run's env and policy are set up,
// with a message naming the value, why, and what is allowed; a valid one is still accepted.
func TestCheckpointFlagRefused(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	cfg := writeTiny(t, dir, "")
	if _, stderr, code := graftrlIn(t, bin, dir, "train", "--config", cfg, "-q"); code != 0 {
		t.Fatalf("train: exit %d\n%s", code, stderr)
	}
	run := filepath.Join("runs", "cli")
	ckpt1 := rundir.CheckpointPath(run, 1)
	// A copy of a checkpoint with a file altered after its manifest was written.
	corrupt := filepath.Join(dir, "corrupt")
	if out, err := exec.Command("cp", "-a", filepath.Join(dir, rundir.CheckpointPath(run, 2)), corrupt).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	f, err := os.OpenFile(filepath.Join(corrupt, rundir.TrainerStateFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(" ")
	f.Close()

	evalAllowed := "allowed: a checkpoint directory such as " + rundir.CheckpointPath(run, 2) + " (the run has iter-000001, iter-000002)"
	auditAllowed := "allowed: an iteration the run has a checkpoint of (1, 2) or a checkpoint directory"
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"eval", "--run", run, "--checkpoint", "nope"}, []string{"eval: --checkpoint nope: no such directory", evalAllowed}},
		{[]string{"eval", "--run", run, "--checkpoint", "1"}, []string{"eval: --checkpoint 1: no such directory", evalAllowed, "did you mean --checkpoint " + ckpt1 + "?"}},
		{[]string{"eval", "--run", run, "--checkpoint", filepath.Join(run, rundir.ConfigFile)}, []string{"not a directory", evalAllowed}},
		{[]string{"eval", "--run", run, "--checkpoint", run}, []string{"--checkpoint " + run + ": not a valid checkpoint: no manifest", evalAllowed}},
		{[]string{"eval", "--run", run, "--checkpoint", corrupt}, []string{"not a valid checkpoint", "checksum mismatch", evalAllowed}},
		{[]string{"audit", "--run", run, "--checkpoint", "99"}, []string{"audit: --checkpoint 99: the run has no checkpoint of iteration 99", auditAllowed}},
		{[]string{"audit", "--run", run, "--checkpoint", "-3"}, []string{"audit: --checkpoint -3: an iteration is a whole number ≥ 0", auditAllowed}},
		{[]string{"audit", "--run", run, "--checkpoint", "nope"}, []string{"audit: --checkpoint nope: no such directory", auditAllowed}},
		{[]string{"audit", "--run", run, "--checkpoint", run}, []string{"not a valid checkpoint: no manifest", auditAllowed}},
		{[]string{"audit", "--run", run, "--checkpoint", corrupt}, []string{"checksum mismatch", auditAllowed}},
		{[]string{"audit", "--run", "nope", "--checkpoint", "1"}, []string{"audit: --run nope: not a run directory (no config.yaml)"}},
	} {
		out, stderr, code := graftrlIn(t, bin, dir, tc.args...)
		if code != exitConfig {
			t.Errorf("%v: exit %d, want %d\n%s", tc.args, code, exitConfig, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", tc.args, w, stderr)
			}
		}
		if out != "" {
			t.Errorf("%v printed %q", tc.args, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.AuditPath(run))); err == nil {
		t.Error("a refused audit wrote its directory")
	}
	for _, args := range [][]string{
		{"eval", "--run", run, "--checkpoint", ckpt1},
		{"audit", "--run", run, "--checkpoint", "1", "--steps", "8", "--mc", "2", "-q"},
		{"audit", "--run", run, "--checkpoint", ckpt1, "--steps", "8", "--mc", "2", "-q"},
	} {
		if _, stderr, code := graftrlIn(t, bin, dir, args...); code != 0 {
			t.Errorf("%v: exit %d\n%s", args, code, stderr)
		}
	}
}

// A word left after a flag whose value is optional (--save-batches, a boolean) that would have
// been the flag's value is explained as such, with --flag=VALUE suggested, rather than as a stray
// argument meant for --config; a word that is no such value keeps the command's suggestion.
func TestLeftoverFlagValue(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	cfg := writeTiny(t, dir, "")
	for _, tc := range []struct {
		args      []string
		want, not string
	}{
		{[]string{"train", "--config", cfg, "--save-batches", "1"},
			`train: unexpected argument "1" after --save-batches, which takes a value only after "=" (alone it means --save-batches=1); did you mean --save-batches=1?`, "--config 1"},
		{[]string{"train", "--save-batches", "3", "--config", cfg},
			"did you mean --save-batches=3?", "--config 3"},
		{[]string{"train", "--config", cfg, "-q", "false"},
			`unexpected argument "false" after --quiet, which takes a value only after "=" (alone it means --quiet=true); did you mean --quiet=false?`, "--config false"},
		{[]string{"sft", "--config", cfg, "--quiet", "true"}, "did you mean --quiet=true?", "--config true"},
		{[]string{"eval", "--run", dir, "--json", "1"}, "did you mean --json=1?", "--run 1"},
		{[]string{"audit", "--run", dir, "--quiet", "0"}, "did you mean --quiet=0?", ""},
		// Not a value of the flag before it: the command's own suggestion stands.
		{[]string{"train", "--quiet", cfg}, "did you mean --config " + cfg + "?", "after --quiet"},
		{[]string{"train", "--save-batches", cfg}, "did you mean --config " + cfg + "?", "after --save-batches"},
		// After "--" every word is an argument by request.
		{[]string{"train", "--config", cfg, "--save-batches", "--", "1"}, `unexpected argument "1"`, "after --save-batches"},
	} {
		out, stderr, code := graftrlCmd(t, bin, tc.args...)
		if code != exitConfig || !strings.Contains(stderr, tc.want) || (tc.not != "" && strings.Contains(stderr, tc.not)) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 with %q and without %q", tc.args, code, stderr, tc.want, tc.not)
		}
		if out != "" {
			t.Errorf("%v printed %q", tc.args, out)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "runs")); len(entries) > 0 {
		t.Errorf("refused commands wrote runs: %v", entries)
	}
}
