package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/graftrl/graftrl/rundir"
)

// writeTiny writes the tiny config into dir, with extra lines, and returns its path.
func writeTiny(t *testing.T, dir, extra string) string {
	t.Helper()
	path := filepath.Join(dir, "tiny.yaml")
	if err := os.WriteFile(path, []byte(tinyConfig+extra), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// graftrlIn is graftrlCmd run in working directory dir.
func graftrlIn(t *testing.T, bin, dir string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), 0
}

// Refused input exits with status 2 before any work, naming the flag, key or command: the
// exit-status table of docs/reliability.md, row 2.
func TestRefusedInput(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	cfg := writeTiny(t, dir, "")
	frac := filepath.Join(dir, "frac.yaml")
	os.WriteFile(frac, []byte(strings.Replace(tinyConfig, "iterations: 2", "iterations: 1.5", 1)), 0o644)
	big := filepath.Join(dir, "big.yaml")
	os.WriteFile(big, []byte(tinyConfig+"label: "+strings.Repeat("x", 50<<20)+"\n"), 0o644)
	runs := filepath.Join(dir, "runs")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "--config", cfg, "--seed", "-5"}, "--seed: -5 is out of range"},
		{[]string{"train", "--config", cfg, "--iterations", "0"}, "--iterations: 0 is out of range"},
		{[]string{"train", "--config", cfg, "--iterations", "-3"}, "--iterations: -3 is out of range"},
		{[]string{"train", "--config", cfg, "--save-batches=-1"}, "--save-batches: -1 is out of range"},
		{[]string{"train", "--config", cfg, "--iterations", "2.5"}, `invalid argument "2.5" for "--iterations"`},
		{[]string{"sft", "--config", cfg, "--seed", "-1"}, "--seed: -1 is out of range"},
		{[]string{"train", "--config", frac}, `key "iterations": value "1.5" is not a valid integer`},
		{[]string{"train", "--config", cfg, "--set", "iterations=2.9"}, `key "iterations": value "2.9" is not a valid integer`},
		{[]string{"train", "--config", cfg, "--set", "tasks.train=16.5"}, `key "tasks.train"`},
		{[]string{"train", "--config", cfg, "--set", "tasks.group_size=1"}, "tasks.group_size: 1 gives grpo no signal"},
		{[]string{"train", "--config", cfg, "--estimator", "gigpo", "--set", "tasks.group_size=1"}, "tasks.group_size: 1 gives gigpo no signal"},
		{[]string{"train", "--config", cfg, "--estimator", "graft", "--set", "estimator.mode=tdd"}, `key "estimator.mode": value "tdd" is not allowed (allowed path, td, paper)`},
		{[]string{"train", "--config", big}, "GRAFTRL_MAX_CONFIG_BYTES"},
		{[]string{"graph", "--batch", cfg, "--rows", "-5"}, "unknown flag: --rows"},
		{[]string{"advantages", "--batch", cfg, "--rows", "-5"}, "--rows -5 is out of range"},
		{[]string{"advantages", "--batch", cfg, "--estimators", "grpo,,graft"}, `--estimators "grpo,,graft": an empty name`},
		{[]string{"sweep", "--config", cfg, "--workers", "-2"}, "--workers -2 is out of range"},
		{[]string{"compare", dir, "--workers", "-1"}, "--workers -1 is out of range"},
		{[]string{"envs", "lsit"}, `unknown command "lsit" for "graftrl envs"`},
		{[]string{"envs", "describe"}, "graftrl envs describe: accepts 1 arg(s), received 0"},
		{[]string{"trian"}, `unknown command "trian" for "graftrl"`},
		{[]string{"version", "extra"}, "graftrl version: unknown command"},
		// The output directory cannot be created: below a file.
		{[]string{"train", "--config", cfg, "--out-dir", filepath.Join(cfg, "runs")}, "is not writable"},
		// An unknown backend (a missing plugin is status 1: TestBackendStatuses).
		{[]string{"train", "--config", cfg, "--out-dir", runs, "--backend", "xla:gpu"}, `unknown backend "xla:gpu"`},
	} {
		out, stderr, code := graftrlCmd(t, bin, tc.args...)
		if code != exitConfig || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", tc.args, code, stderr, tc.want)
		}
		if strings.Contains(out, "Usage:") {
			t.Errorf("%v printed help", tc.args)
		}
	}
	if _, err := os.Stat(runs); err == nil {
		if entries, _ := os.ReadDir(runs); len(entries) > 0 {
			t.Errorf("refused commands wrote runs: %v", entries)
		}
	}
}

// The commands that succeed: --set estimator.KEY after --estimator applies to the chosen
// estimator; a command group alone prints its help; version and --version print the version
// and the commit.
func TestAcceptedInput(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	cfg := writeTiny(t, dir, "")
	_, stderr, code := graftrlCmd(t, bin, "train", "--config", cfg, "--out-dir", filepath.Join(dir, "runs"), "--iterations", "1",
		"--estimator", "graft", "--set", "estimator.mode=td", "--seed", "0")
	if code != 0 {
		t.Fatalf("--estimator graft --set estimator.mode=td: exit %d\n%s", code, stderr)
	}
	rec, err := os.ReadFile(filepath.Join(dir, "runs", "cli-graft", rundir.ConfigFile))
	if err != nil || !bytes.Contains(rec, []byte("mode: td")) || !bytes.Contains(rec, []byte("seed: 0")) || !bytes.Contains(rec, []byte("iterations: 1")) {
		t.Fatalf("recorded config lacks mode: td, seed: 0, iterations: 1:\n%s", rec)
	}
	for _, args := range [][]string{{}, {"envs"}, {"sweep", "--help"}} {
		if out, stderr, code := graftrlCmd(t, bin, args...); code != 0 || !strings.Contains(out, "Usage:") {
			t.Errorf("%v: exit %d, %q %q", args, code, out, stderr)
		}
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, stderr, code := graftrlCmd(t, bin, args...)
		if code != 0 || !strings.HasPrefix(out, "graftrl "+version+" (commit ") {
			t.Errorf("%v: exit %d, %q %q", args, code, out, stderr)
		}
	}
}

func TestFormatVersion(t *testing.T) {
	for _, tc := range []struct {
		settings []debug.BuildSetting
		want     string
	}{
		{nil, version + " (commit unknown)"},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "false"}}, version + " (commit 0123456789ab)"},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}, version + " (commit 0123456789ab, modified)"},
	} {
		if got := formatVersion(tc.settings); got != tc.want {
			t.Errorf("formatVersion(%v) = %q, want %q", tc.settings, got, tc.want)
		}
	}
}

// Resume follows the run directory, not the spelling of its path: a run made with out_dir: runs
// resumes through its absolute path from another working directory, through a relative path
// from another directory, and after being copied under another name; each ends with a
// metrics.jsonl byte-identical to a straight run's.
func TestResumeAnyPath(t *testing.T) {
	bin := buildBinary(t)
	straightDir := t.TempDir()
	cfg := writeTiny(t, straightDir, "")
	if _, stderr, code := graftrlIn(t, bin, straightDir, "train", "--config", cfg, "--iterations", "4", "-q"); code != 0 {
		t.Fatalf("straight run: exit %d\n%s", code, stderr)
	}
	want, err := os.ReadFile(filepath.Join(straightDir, "runs", "cli", rundir.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		// resume returns the working directory and the --resume path, given the directory the
		// run was created in (its run directory is work/runs/cli).
		resume func(t *testing.T, work string) (cwd, path string)
	}{
		{"absolute path from elsewhere", func(t *testing.T, work string) (string, string) {
			return t.TempDir(), filepath.Join(work, "runs", "cli")
		}},
		{"relative path from another directory", func(t *testing.T, work string) (string, string) {
			sub := filepath.Join(work, "sub")
			os.Mkdir(sub, 0o755)
			return sub, filepath.Join("..", "runs", "cli")
		}},
		{"copied run directory", func(t *testing.T, work string) (string, string) {
			os.Mkdir(filepath.Join(work, "elsewhere"), 0o755)
			if out, err := exec.Command("cp", "-a", filepath.Join(work, "runs", "cli"), filepath.Join(work, "elsewhere", "cli2")).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v %s", err, out)
			}
			return work, filepath.Join("elsewhere", "cli2")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			cfg := writeTiny(t, work, "")
			if _, stderr, code := graftrlIn(t, bin, work, "train", "--config", cfg, "--iterations", "2", "-q"); code != 0 {
				t.Fatalf("first part: exit %d\n%s", code, stderr)
			}
			cwd, path := tc.resume(t, work)
			_, stderr, code := graftrlIn(t, bin, cwd, "train", "--resume", path, "--iterations", "4", "-q")
			if code != 0 || !strings.Contains(stderr, "resuming") {
				t.Fatalf("resume %s from %s: exit %d\n%s", path, cwd, code, stderr)
			}
			run := path
			if !filepath.IsAbs(run) {
				run = filepath.Join(cwd, run)
			}
			got, err := os.ReadFile(filepath.Join(run, rundir.MetricsFile))
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("metrics after resume differ from the straight run's (%v):\n%s\n---\n%s", err, got, want)
			}
		})
	}
}

// Signals: the first SIGTERM ends train with status 75 after a checkpoint (resumable); a
// second request, sent once the first was acknowledged and while the iteration still runs, ends
// it at once with status 130. It is another signal here: the same one within sameRequestWindow
// is the first delivered again (signals_test.go).
func TestTrainSignalStatuses(t *testing.T) {
	bin := buildBinary(t)
	for _, tc := range []struct {
		signals []syscall.Signal
		want    int
	}{
		{[]syscall.Signal{syscall.SIGTERM}, exitInterrupted},
		{[]syscall.Signal{syscall.SIGTERM, syscall.SIGINT}, exitKilled},
	} {
		dir := t.TempDir()
		cfg := writeTiny(t, dir, "")
		// 2 × 256 episodes per iteration: long enough for the second signal to land inside it.
		cmd := exec.Command(bin, "train", "--config", cfg, "--iterations", "100000", "--set", "tasks.group_size=256", "-q")
		cmd.Dir = dir
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		acked := make(chan struct{}, 1)
		var log bytes.Buffer
		done := make(chan struct{})
		go func() {
			defer close(done)
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				log.WriteString(sc.Text() + "\n")
				if strings.Contains(sc.Text(), "signal again") {
					acked <- struct{}{}
				}
			}
		}()
		deadline := time.Now().Add(2 * time.Minute)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(rundir.CheckpointPath(filepath.Join(dir, "runs", "cli"), 1)); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cmd.Process.Signal(tc.signals[0])
		if len(tc.signals) > 1 {
			select {
			case <-acked:
			case <-time.After(time.Minute):
			}
			cmd.Process.Signal(tc.signals[1])
		}
		<-done
		cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != tc.want {
			t.Errorf("%v: exit %d, want %d\n%s", tc.signals, code, tc.want, log.String())
		}
	}
}
