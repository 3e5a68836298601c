package trainer

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/rollout"
	"github.com/graftrl/graftrl/rundir"
)

// One trainer at a time holds a run directory: a second one is refused at once with a *DirError
// naming the holder's PID; once the first is closed the directory can be taken again.
func TestRunDirectoryLock(t *testing.T) {
	dir := t.TempDir()
	first := newTiny(t, dir)
	_, err := New(tinyConfig(t, dir), Options{Out: io.Discard})
	var de *DirError
	if !errors.As(err, &de) || de.PID != os.Getpid() || !strings.Contains(err.Error(), fmt.Sprintf("PID %d", os.Getpid())) ||
		!strings.Contains(err.Error(), "is in use") {
		t.Fatalf("second trainer on a held run directory: %v, want a refusal naming PID %d", err, os.Getpid())
	}
	first.Close()
	again := newTiny(t, dir)
	again.Close()
}

// policy.max_len is refused below the env's first turn (its prompt and one action), with the
// number needed: that number is accepted and one less is not. A refused fresh run leaves no
// run directory behind.
func TestMaxLenTooShort(t *testing.T) {
	dir := t.TempDir()
	_, err := New(tinyConfig(t, dir, "policy.max_len=8"), Options{Out: io.Discard})
	var ce *config.Error
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "policy.max_len: 8 is too short for env maze") {
		t.Fatalf("max_len 8: %v", err)
	}
	m := regexp.MustCompile(`allowed (\d+)\.\.8192`).FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("the message does not say the length needed: %v", err)
	}
	need, _ := strconv.Atoi(m[1])
	cfg := tinyConfig(t, dir, "policy.max_len="+strconv.Itoa(need-1))
	if _, err := ProbeEnv(&cfg); err == nil {
		t.Errorf("max_len %d (one below the %d needed) accepted", need-1, need)
	}
	cfg = tinyConfig(t, dir, "policy.max_len="+strconv.Itoa(need))
	if _, err := ProbeEnv(&cfg); err != nil {
		t.Errorf("max_len %d (the length needed): %v", need, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "tiny")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused run left its directory: %v", err)
	}
}

// An iteration whose episodes took no action — every one cut off at its prompt — is an error
// (ErrAborted) naming policy.max_len, not an update on nothing.
func TestNoTrainableToken(t *testing.T) {
	tr := &Trainer{cfg: config.Defaults()}
	b := &rollout.Batch{Tasks: 1, Trajs: []rollout.Trajectory{
		{Truncated: true, Rows: []rollout.Row{{Tokens: []int32{1, 2}, StepOf: []int16{-1, -1}}}},
		{Truncated: true},
		{Err: "env failed"},
	}}
	err := tr.checkTrainable(b)
	if !errors.Is(err, ErrAborted) || !strings.Contains(err.Error(), "no trainable token") || !strings.Contains(err.Error(), "policy.max_len = 128") ||
		!strings.Contains(err.Error(), "none of its 2 episodes") {
		t.Fatalf("a batch without action tokens: %v", err)
	}
	b.Trajs[0].Rows[0].StepOf[1] = 0
	if err := tr.checkTrainable(b); err != nil {
		t.Fatalf("a batch with an action token: %v", err)
	}
}

// Resuming a finished run changes nothing on disk; a larger length extends it and config.yaml
// records the new length; a smaller one is refused naming both numbers; a finished run that
// lost its summary.json (stopped after its last checkpoint) gets it back.
func TestResumeFinishedRun(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "tiny")
	runTiny(t, dir, "iterations=2", "eval.every=1")
	files := []string{rundir.SummaryFile, rundir.ConfigFile, rundir.MetricsFile, rundir.TimingFile}
	before := map[string][]byte{}
	for _, f := range files {
		before[f], _ = os.ReadFile(filepath.Join(run, f))
	}
	tr, err := New(tinyConfig(t, dir, "iterations=2", "eval.every=1"), Options{Out: io.Discard, Resume: true})
	if err != nil || !tr.Finished() {
		t.Fatalf("resume of the finished run: %v (finished %v)", err, err == nil && tr.Finished())
	}
	s, err := tr.Run(t.Context())
	if err != nil || s.Iterations != 2 || s.Final == nil {
		t.Fatalf("finished run: summary %+v, %v", s, err)
	}
	for _, f := range files {
		if got, _ := os.ReadFile(filepath.Join(run, f)); string(got) != string(before[f]) {
			t.Errorf("%s changed when the finished run was resumed", f)
		}
	}
	_, err = New(tinyConfig(t, dir, "iterations=1", "eval.every=1"), Options{Out: io.Discard, Resume: true})
	var de *DirError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "iterations: 1") || !strings.Contains(err.Error(), "holds 2 iterations") {
		t.Fatalf("shrinking the run to 1 iteration: %v", err)
	}
	os.Remove(filepath.Join(run, rundir.SummaryFile))
	tr, err = New(tinyConfig(t, dir, "iterations=2", "eval.every=1"), Options{Out: io.Discard, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := tr.Run(t.Context()); err != nil || s.Iterations != 2 || s.Final["eval/success"] == nil {
		t.Fatalf("the summary written again: %+v, %v", s, err)
	}
	if _, err := os.Stat(filepath.Join(run, rundir.SummaryFile)); err != nil {
		t.Fatalf("summary.json not written again: %v", err)
	}
	s, _ = runTiny(t, dir, "iterations=3", "eval.every=1", "resume=auto")
	rec, err := config.Load(filepath.Join(run, rundir.ConfigFile), nil)
	if s.Iterations != 3 || err != nil || rec.Iterations != 3 {
		t.Fatalf("extended run: %d iterations, config.yaml records %d (%v)", s.Iterations, rec.Iterations, err)
	}
}
