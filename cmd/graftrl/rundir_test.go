package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/graftrl/graftrl/rundir"
)

// tinySFT gives the tiny config a small warm start.
const tinySFT = "sft: {demos: 4, steps: 2, batch: 4}\n"

// Refusals that the config, the flags and the run directory decide: status 2 before any work —
// no line saying that training starts, nothing left in the output directory — each naming what
// was wrong: a flag's problem names the flag, not the config file.
func TestRefusedBeforeWork(t *testing.T) {
	dir := t.TempDir()
	cfg := writeTiny(t, dir, "")
	empty := filepath.Join(dir, "empty.yaml")
	comments := filepath.Join(dir, "comments.yaml")
	os.WriteFile(empty, nil, 0o644)
	os.WriteFile(comments, []byte("# a config, to come\n"), 0o644)
	runs := filepath.Join(dir, "runs")
	for _, tc := range []struct {
		args []string
		want string // the error's beginning when it starts with "--", else a part of it
	}{
		{[]string{"train", "--config", cfg, "--out-dir", runs, "--set", "policy.max_len=8"}, "--set policy.max_len=8: policy.max_len: 8 is too short for env maze"},
		{[]string{"sft", "--config", writeTiny(t, t.TempDir(), tinySFT), "--out-dir", runs, "--set", "policy.max_len=8"}, "--set policy.max_len=8: policy.max_len: 8 is too short"},
		{[]string{"train", "--config", empty, "--out-dir", runs, "--name", "x"}, "config " + empty + ": the file holds no config"},
		{[]string{"train", "--config", comments, "--out-dir", runs}, "the file holds no config"},
		{[]string{"train", "--config", os.DevNull, "--out-dir", runs, "--name", "x"}, "the file holds no config"},
		{[]string{"sft", "--config", empty}, "the file holds no config"},
		{[]string{"train", "--config", cfg, "--out-dir", runs, "--set", "optim.lr=-1"}, "--set optim.lr=-1: optim.lr: -1 is out of range"},
		{[]string{"train", "--config", cfg, "--out-dir", runs, "--estimator", "ppo"}, `--estimator ppo: estimator.name: unknown estimator "ppo"`},
		{[]string{"train", cfg}, "did you mean --config " + cfg + "?"},
		{[]string{"sft", cfg}, "did you mean --config " + cfg + "?"},
		{[]string{"eval", dir}, "did you mean --run " + dir + "?"},
		{[]string{"eval", "--run", dir}, "--run " + dir + ": not a run directory (no config.yaml)"},
	} {
		_, stderr, err := cliErr(t, tc.args...)
		msg := fmt.Sprint(err)
		ok := strings.Contains(msg, tc.want)
		if strings.HasPrefix(tc.want, "--") {
			ok = strings.HasPrefix(msg, tc.want)
		}
		if exitStatus(err) != exitConfig || !ok {
			t.Errorf("%v: status %d, error %q; want status 2 and %q", tc.args, exitStatus(err), msg, tc.want)
		}
		if strings.Contains(stderr, "graftrl: training") || strings.Contains(stderr, "sft:") {
			t.Errorf("%v started work before its refusal:\n%s", tc.args, stderr)
		}
	}
	if entries, _ := os.ReadDir(runs); len(entries) > 0 {
		t.Errorf("refused commands left %v in the output directory", entries)
	}
}

// A directory that holds a run, and a resume whose config differs, are refused before the warm
// start: no sft/ folder appears and no line says that training starts.
func TestRefusedBeforeWarmStart(t *testing.T) {
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	plain := writeTiny(t, dir, "")
	if _, stderr, code := cli(t, "train", "--config", plain, "--out-dir", runs, "--iterations", "1", "-q"); code != 0 {
		t.Fatalf("first run: status %d\n%s", code, stderr)
	}
	withSFT := writeTiny(t, t.TempDir(), tinySFT)
	run := filepath.Join(runs, "cli")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "--config", withSFT, "--out-dir", runs}, "already holds a run"},
		{[]string{"train", "--resume", run, "--config", withSFT}, "the config differs from the run's recorded config"},
	} {
		_, stderr, err := cliErr(t, tc.args...)
		if exitStatus(err) != exitConfig || !strings.Contains(fmt.Sprint(err), tc.want) || strings.HasPrefix(fmt.Sprint(err), "config ") {
			t.Errorf("%v: status %d, error %v; want status 2 and %q", tc.args, exitStatus(err), err, tc.want)
		}
		if strings.Contains(stderr, "sft") || strings.Contains(stderr, "graftrl: training") {
			t.Errorf("%v worked before its refusal:\n%s", tc.args, stderr)
		}
		if _, err := os.Stat(filepath.Join(runs, rundir.WarmStartsDir)); err == nil {
			t.Fatalf("%v left %s/ behind", tc.args, rundir.WarmStartsDir)
		}
	}
}

// A finished run resumed changes nothing on disk and says so (status 0); resumed with fewer
// iterations than it holds it is refused naming both numbers; with more it continues, ends as a
// straight run of that length ends, and config.yaml records the new length.
func TestResumeFinishedRunCLI(t *testing.T) {
	dir := t.TempDir()
	cfg := writeTiny(t, dir, "")
	runs := filepath.Join(dir, "runs")
	run := filepath.Join(runs, "cli")
	if _, stderr, code := cli(t, "train", "--config", cfg, "--out-dir", runs, "-q"); code != 0 {
		t.Fatalf("train: status %d\n%s", code, stderr)
	}
	files := []string{rundir.SummaryFile, rundir.ConfigFile, rundir.MetricsFile, rundir.TimingFile}
	before := map[string][]byte{}
	for _, f := range files {
		before[f], _ = os.ReadFile(filepath.Join(run, f))
	}
	_, stderr, code := cli(t, "train", "--resume", run)
	if code != 0 || !strings.Contains(stderr, "already finished (2 iterations") || strings.Contains(stderr, "no evaluation") {
		t.Fatalf("resume of the finished run: status %d\n%s", code, stderr)
	}
	for _, f := range files {
		if got, _ := os.ReadFile(filepath.Join(run, f)); !bytes.Equal(got, before[f]) {
			t.Errorf("%s changed when the finished run was resumed", f)
		}
	}
	_, _, err := cliErr(t, "train", "--resume", run, "--set", "iterations=1")
	if exitStatus(err) != exitConfig || !strings.Contains(fmt.Sprint(err), "iterations: 1") || !strings.Contains(fmt.Sprint(err), "holds 2 iterations") {
		t.Fatalf("shrinking the run: status %d, %v", exitStatus(err), err)
	}
	if got, _ := os.ReadFile(filepath.Join(run, rundir.ConfigFile)); !bytes.Equal(got, before[rundir.ConfigFile]) {
		t.Error("the refused shrink changed config.yaml")
	}
	if _, stderr, code := cli(t, "train", "--resume", run, "--iterations", "3", "-q"); code != 0 || !strings.Contains(stderr, "resuming") {
		t.Fatalf("extending the run: status %d\n%s", code, stderr)
	}
	straight := filepath.Join(dir, "straight")
	if _, stderr, code := cli(t, "train", "--config", cfg, "--out-dir", straight, "--iterations", "3", "-q"); code != 0 {
		t.Fatalf("straight run: status %d\n%s", code, stderr)
	}
	want, _ := os.ReadFile(filepath.Join(straight, "cli", rundir.MetricsFile))
	got, _ := os.ReadFile(filepath.Join(run, rundir.MetricsFile))
	if !bytes.Equal(got, want) {
		t.Errorf("the extended run's metrics differ from a straight 3-iteration run's")
	}
	rec, _ := os.ReadFile(filepath.Join(run, rundir.ConfigFile))
	var s struct{ Iterations int }
	data, _ := os.ReadFile(filepath.Join(run, rundir.SummaryFile))
	if json.Unmarshal(data, &s); !bytes.Contains(rec, []byte("iterations: 3\n")) || s.Iterations != 3 {
		t.Errorf("after extending: summary %d iterations, config.yaml\n%s", s.Iterations, rec)
	}
}

// startTrain starts the built binary training the tiny config for a long time (it must be
// stopped) in dir, and waits until it holds the run directory's lock and has written config.yaml.
func startTrain(t *testing.T, bin, dir string) *exec.Cmd {
	t.Helper()
	cfg := writeTiny(t, dir, "")
	cmd := exec.Command(bin, "train", "--config", cfg, "--iterations", "100000", "-q")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	lock := filepath.Join(dir, "runs", "cli", rundir.LockFile)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		data, _ := os.ReadFile(lock)
		if _, err := os.Stat(filepath.Join(dir, "runs", "cli", rundir.ConfigFile)); err == nil && strings.TrimSpace(string(data)) == fmt.Sprint(cmd.Process.Pid) {
			return cmd
		}
	}
	t.Fatal("the training process did not take the run directory's lock within a minute")
	return nil
}

// One process at a time writes a run directory or a warm start, through the built binary.
func TestOneWriterPerRun(t *testing.T) {
	bin := buildBinary(t)
	t.Run("train", func(t *testing.T) { oneTrainPerRun(t, bin) })
	t.Run("race", func(t *testing.T) { raceForOneRun(t, bin) })
	t.Run("sft", func(t *testing.T) { oneSFTPerWarmStart(t, bin) })
}

// While one process trains a run, a second train of the same run — resumed or fresh — is
// refused at once (status 2) naming the first's PID, before it says that training starts; the
// first is undisturbed.
func oneTrainPerRun(t *testing.T, bin string) {
	dir := t.TempDir()
	first := startTrain(t, bin, dir)
	pid := fmt.Sprintf("PID %d", first.Process.Pid)
	for _, args := range [][]string{
		{"train", "--resume", filepath.Join("runs", "cli")},
		{"train", "--config", filepath.Join(dir, "tiny.yaml")},
	} {
		_, stderr, code := graftrlIn(t, bin, dir, args...)
		if code != exitConfig || !strings.Contains(stderr, pid) || !strings.Contains(stderr, "is in use") || strings.Contains(stderr, "graftrl: training") {
			t.Errorf("%v while %s trains: status %d\n%s", args, pid, code, stderr)
		}
	}
	// The first still trained (status 75: stopped by the signal, not done with its 100,000
	// iterations), so the refusals came while it held the run, not after.
	first.Process.Signal(syscall.SIGTERM)
	first.Wait()
	if code := first.ProcessState.ExitCode(); code != exitInterrupted {
		t.Errorf("the first process ended with status %d, want %d", code, exitInterrupted)
	}
}

// Two processes racing for one new run (seeds 1 and 2, started together, several times) never
// both succeed: the second is refused (status 2), and the run left is the first's, whole.
func raceForOneRun(t *testing.T, bin string) {
	for trial := range 4 {
		work := t.TempDir()
		cfg := writeTiny(t, work, "")
		var cmds [2]*exec.Cmd
		var logs [2]bytes.Buffer
		for i := range cmds {
			cmds[i] = exec.Command(bin, "train", "--config", cfg, "--seed", fmt.Sprint(i+1), "-q")
			cmds[i].Dir, cmds[i].Stderr = work, &logs[i]
		}
		for _, c := range cmds {
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
		}
		var codes [2]int
		for i, c := range cmds {
			c.Wait()
			codes[i] = c.ProcessState.ExitCode()
		}
		if codes[0] == 0 && codes[1] == 0 || codes[0] != 0 && codes[1] != 0 {
			t.Fatalf("trial %d: statuses %v, want one 0 and one refusal\n%s\n---\n%s", trial, codes, &logs[0], &logs[1])
		}
		winner := 1
		if codes[0] == 0 {
			winner = 0
		}
		if loser := 1 - winner; codes[loser] != exitConfig {
			t.Errorf("trial %d: the second process ended with status %d, want 2\n%s", trial, codes[loser], &logs[loser])
		}
		run := filepath.Join(work, "runs", "cli")
		rec, _ := os.ReadFile(filepath.Join(run, rundir.ConfigFile))
		if !bytes.Contains(rec, []byte(fmt.Sprintf("seed: %d\n", winner+1))) {
			t.Errorf("trial %d: config.yaml is not the winner's (seed %d):\n%s", trial, winner+1, rec)
		}
		metrics, _ := os.ReadFile(filepath.Join(run, rundir.MetricsFile))
		for _, line := range bytes.Split(bytes.TrimSpace(metrics), []byte("\n")) {
			if !json.Valid(line) {
				t.Errorf("trial %d: metrics.jsonl holds an invalid line %q", trial, line)
			}
		}
	}
}

// graftrl sft holds the warm start's lock while it computes: a second sft of the same warm start
// is refused at once naming the first's PID.
func oneSFTPerWarmStart(t *testing.T, bin string) {
	dir := t.TempDir()
	cfg := writeTiny(t, dir, "sft: {demos: 4, steps: 10000000, batch: 4}\n")
	first := exec.Command(bin, "sft", "--config", cfg, "-q")
	first.Dir = dir
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		first.Process.Kill()
		first.Wait()
	}()
	pid := fmt.Sprint(first.Process.Pid)
	held := false
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline) && !held; time.Sleep(20 * time.Millisecond) {
		locks, _ := filepath.Glob(filepath.Join(dir, "runs", rundir.WarmStartsDir, "*.lock"))
		for _, l := range locks {
			if data, _ := os.ReadFile(l); strings.TrimSpace(string(data)) == pid {
				held = true
			}
		}
	}
	if !held {
		t.Fatal("sft did not take the warm start's lock within a minute")
	}
	_, stderr, code := graftrlIn(t, bin, dir, "sft", "--config", cfg)
	if code != exitConfig || !strings.Contains(stderr, "PID "+pid) || !strings.Contains(stderr, "warm start") {
		t.Errorf("a second sft while PID %s computes the warm start: status %d\n%s", pid, code, stderr)
	}
}
