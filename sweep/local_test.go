package sweep

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graftrl/graftrl/rundir"
)

// starts reads the fake trainer's log: the run names in the order they were started.
func starts(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(data))
}

func TestRunLocal(t *testing.T) {
	dir := t.TempDir()
	c := writeSweep(t, dir, "name: loc\nbase: tiny.yaml\ngrid:\n  estimator: [grpo, graft]\n  seed: [1, 2]\nset: [env_steps=20]\n")
	m, err := c.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "starts")
	t.Setenv("GRAFTRL_FAKE_LOG", log)
	var out bytes.Buffer
	res, err := RunLocal(context.Background(), c.Dir(), m, LocalOptions{Workers: 2, Launcher: fakeLauncher(t)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Runs != 4 || res.Done != 4 || res.Skipped != 0 {
		t.Errorf("first pass: %+v", res)
	}
	for _, st := range Statuses(c.Dir(), m, "") {
		if st.State != Finished || st.EnvSteps != 20 || st.Attempt == nil || st.Attempt.N != 1 || *st.Attempt.Exit != 0 {
			t.Errorf("%s: %+v", st.Run.Name, st)
		}
		logText, _ := os.ReadFile(filepath.Join(c.Dir(), LogDir, st.Run.Name+".log"))
		if !strings.Contains(string(logText), "== attempt 1 of run "+st.Run.Name) || !strings.Contains(string(logText), "fake train: done") {
			t.Errorf("log of %s:\n%s", st.Run.Name, logText)
		}
	}
	// Running the same sweep again trains nothing.
	fl := fakeLauncher(t)
	fl.Out = &out
	res, err = RunLocal(context.Background(), c.Dir(), m, LocalOptions{Workers: 2, Launcher: fl})
	if err != nil || res.Done != 0 || res.Skipped != 4 {
		t.Errorf("second pass: %+v, %v", res, err)
	}
	if n := len(starts(t, log)); n != 4 {
		t.Errorf("%d trainings started, want 4", n)
	}
	if !strings.Contains(out.String(), "all 4 runs are finished") {
		t.Errorf("second pass said: %s", out.String())
	}
}

// Kill a sweep halfway (after its first run finished, while the second runs) and run it again:
// the finished run is not redone, the interrupted one resumes and finishes.
func TestRunLocalInterruptAndRerun(t *testing.T) {
	dir := t.TempDir()
	c := writeSweep(t, dir, "name: kill\nbase: tiny.yaml\ngrid:\n  seed: [1, 2, 3]\nset: [iterations=40]\n")
	m, err := c.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	sd := c.Dir()
	log := filepath.Join(dir, "starts")
	t.Setenv("GRAFTRL_FAKE_LOG", log)
	t.Setenv("GRAFTRL_FAKE_SLOW", "maze-grpo-s2") // 40 × 200 ms: long enough to be interrupted
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type ret struct {
		res Result
		err error
	}
	done := make(chan ret, 1)
	go func() {
		res, err := RunLocal(ctx, sd, m, LocalOptions{Workers: 1, Launcher: fakeLauncher(t)})
		done <- ret{res, err}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for Check(sd, &m.Runs[0], "").State != Finished || Check(sd, &m.Runs[1], "").Iter < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the first run did not finish, or the second did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel() // what Ctrl-C does
	r := <-done
	if !errors.Is(r.err, ErrInterrupted) || !strings.Contains(r.err.Error(), "1 of 3 runs finished; run the same command again") {
		t.Fatalf("interrupted sweep: %v", r.err)
	}
	if r.res.Done != 1 || len(r.res.Stopped) != 1 || r.res.Stopped[0] != "maze-grpo-s2" {
		t.Errorf("interrupted result %+v", r.res)
	}
	st := Check(sd, &m.Runs[1], "")
	if st.State != Unfinished || !strings.Contains(st.Detail, "stopped at iteration") || st.Attempt.Exit == nil || *st.Attempt.Exit != 1 {
		t.Errorf("interrupted run: %+v", st)
	}
	if Check(sd, &m.Runs[2], "").State != Pending {
		t.Error("the third run started after the interrupt")
	}
	summary0 := filepath.Join(sd, m.Runs[0].RunPath(), rundir.SummaryFile)
	fi0, err := os.Stat(summary0)
	if err != nil {
		t.Fatal(err)
	}

	t.Setenv("GRAFTRL_FAKE_SLOW", "")
	res, err := RunLocal(context.Background(), sd, m, LocalOptions{Workers: 1, Launcher: fakeLauncher(t)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped != 1 || res.Done != 2 {
		t.Errorf("rerun: %+v", res)
	}
	if got := strings.Join(starts(t, log), " "); got != "maze-grpo-s1 maze-grpo-s2 maze-grpo-s2 maze-grpo-s3" {
		t.Errorf("trainings started: %s", got)
	}
	fi1, err := os.Stat(summary0)
	if err != nil || !fi1.ModTime().Equal(fi0.ModTime()) {
		t.Error("the finished run's summary.json was rewritten")
	}
	for i, wantN := range []int{1, 2, 1} {
		st := Check(sd, &m.Runs[i], "")
		if st.State != Finished || st.Attempt.N != wantN || st.Iter != 40 {
			t.Errorf("%s after the rerun: %s, attempt %d, iter %d", m.Runs[i].Name, st.State, st.Attempt.N, st.Iter)
		}
	}
}

// A failing run does not stop the others; the error names it and its log.
func TestRunLocalFailure(t *testing.T) {
	dir := t.TempDir()
	c := writeSweep(t, dir, "name: fail\nbase: tiny.yaml\ngrid:\n  seed: [1, 2]\n")
	m, err := c.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GRAFTRL_FAKE_FAIL", "maze-grpo-s1")
	var out bytes.Buffer
	l := fakeLauncher(t)
	l.Out = &out
	res, err := RunLocal(context.Background(), c.Dir(), m, LocalOptions{Workers: 1, Launcher: l})
	if err == nil || !strings.Contains(err.Error(), "1 of 2 runs failed") || !strings.Contains(err.Error(), "run maze-grpo-s1 failed (exit status 3)") ||
		!strings.Contains(err.Error(), filepath.Join(LogDir, "maze-grpo-s1.log")) {
		t.Errorf("error: %v", err)
	}
	if res.Done != 1 || len(res.Failed) != 1 {
		t.Errorf("result %+v", res)
	}
	if !strings.Contains(out.String(), "FAILED  maze-grpo-s1") || !strings.Contains(out.String(), "| fake train: failing on purpose") {
		t.Errorf("output lacks the failure and the log's tail:\n%s", out.String())
	}
	var table bytes.Buffer
	PrintStatus(&table, c.Dir(), m, Statuses(c.Dir(), m, ""), nil, nil, "")
	if !strings.Contains(table.String(), "last attempt 1 exited 3") || !strings.Contains(table.String(), "1 finished, 1 unfinished, 0 pending") {
		t.Errorf("status:\n%s", table.String())
	}
}

// A run whose lock another process holds is left to it.
func TestRunLocalBusy(t *testing.T) {
	dir := t.TempDir()
	c := writeSweep(t, dir, "name: busy\nbase: tiny.yaml\ngrid:\n  seed: [1, 2]\n")
	m, err := c.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	release, err := rundir.TryLock(filepath.Join(c.Dir(), StateDir, "maze-grpo-s2.lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	res, err := RunLocal(context.Background(), c.Dir(), m, LocalOptions{Workers: 2, Launcher: fakeLauncher(t)})
	if err == nil || !strings.Contains(err.Error(), "being trained by another process (maze-grpo-s2)") || res.Done != 1 {
		t.Errorf("%+v, %v", res, err)
	}
	if Check(c.Dir(), &m.Runs[1], "").State != Pending {
		t.Error("a locked run was touched")
	}
}

// RunOne trains one run of the manifest and skips it once it is finished.
func TestRunOne(t *testing.T) {
	dir := t.TempDir()
	c := writeSweep(t, dir, "name: one\nbase: tiny.yaml\ngrid:\n  seed: [1, 2]\n")
	m, err := c.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	l := fakeLauncher(t)
	l.Out = &out
	if err := RunOne(context.Background(), c.Dir(), 1, &l); err != nil {
		t.Fatal(err)
	}
	if Check(c.Dir(), &m.Runs[1], "").State != Finished || Check(c.Dir(), &m.Runs[0], "").State != Pending {
		t.Error("RunOne trained the wrong run")
	}
	if err := RunOne(context.Background(), c.Dir(), 1, &l); err != nil || !strings.Contains(out.String(), "skip    maze-grpo-s2: finished before") {
		t.Errorf("second RunOne: %v\n%s", err, out.String())
	}
	if err := RunOne(context.Background(), c.Dir(), 2, &l); err == nil || !strings.Contains(err.Error(), "index 2 is out of range") {
		t.Errorf("index 2: %v", err)
	}
}
