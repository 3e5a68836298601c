package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graftrl/graftrl/rundir"
)

// trainTiny trains the tiny config (with extra lines) into dir/runs/cli through the command
// tree and returns the run directory.
func trainTiny(t *testing.T, dir, extra string) string {
	t.Helper()
	cfg := writeTiny(t, dir, extra)
	runs := filepath.Join(dir, "runs")
	if _, stderr, code := cli(t, "train", "--config", cfg, "--out-dir", runs, "-q"); code != 0 {
		t.Fatalf("train: status %d\n%s", code, stderr)
	}
	return filepath.Join(runs, "cli")
}

// fileState is what a snapshot records of a file: its mode, modification time and content.
type fileState struct {
	mode  fs.FileMode
	mtime time.Time
	sum   [32]byte
}

// snapshot records every file and folder under root.
func snapshot(t *testing.T, root string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		st := fileState{mode: info.Mode(), mtime: info.ModTime()}
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			st.sum = sha256.Sum256(data)
		}
		rel, _ := filepath.Rel(root, path)
		out[rel] = st
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameTree fails the test for each file or folder under root that was added, removed or
// changed (content, mode or modification time) since the snapshot before, but for those
// named in ignore.
func sameTree(t *testing.T, root string, before map[string]fileState, what string, ignore ...string) {
	t.Helper()
	after := snapshot(t, root)
	for _, p := range ignore {
		delete(before, p)
		delete(after, p)
	}
	for p, b := range before {
		a, ok := after[p]
		switch {
		case !ok:
			t.Errorf("%s removed %s", what, p)
		case a.sum != b.sum:
			t.Errorf("%s changed the content of %s", what, p)
		case a.mode != b.mode || !a.mtime.Equal(b.mtime):
			t.Errorf("%s touched %s (mode %v → %v, mtime %v → %v)", what, p, b.mode, a.mode, b.mtime, a.mtime)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s added %s", what, p)
		}
	}
}

// A run whose checkpoints/ was deleted is refused on resume (status 2) — with its own length
// and with a longer one — naming what is missing and the ways out; its metrics, timings,
// summary and config stay byte for byte as they were.
func TestResumeLostCheckpointsCLI(t *testing.T) {
	run := trainTiny(t, t.TempDir(), "")
	ckpts := filepath.Join(run, rundir.CheckpointsDir)
	if err := os.RemoveAll(ckpts); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, run)
	for _, args := range [][]string{
		{"train", "--resume", run},
		{"train", "--resume", run, "--set", "iterations=60"},
	} {
		_, stderr, err := cliErr(t, args...)
		msg := fmt.Sprint(err)
		if exitStatus(err) != exitConfig || !strings.Contains(msg, ckpts+" is missing") || !strings.Contains(msg, rundir.MetricsFile+" (") ||
			!strings.Contains(msg, "remove "+run) || strings.Contains(stderr, "starting the run again") {
			t.Errorf("%v: status %d, error %q\n%s\nwant status 2 naming %s and the way out", args, exitStatus(err), msg, stderr, ckpts)
		}
		// The lock file is the one file a refusal may rewrite (with the refused process's PID),
		// and the run directory's mtime with it.
		sameTree(t, run, before, fmt.Sprint(args), rundir.LockFile, ".")
	}
}

// A run whose config.yaml was edited to another env size and estimator is refused on resume
// (status 2), naming both keys with the values the checkpoint was trained with; metrics.jsonl
// is left as it was.
func TestResumeEditedConfigCLI(t *testing.T) {
	run := trainTiny(t, t.TempDir(), "")
	path := filepath.Join(run, rundir.ConfigFile)
	data, _ := os.ReadFile(path)
	edited := strings.Replace(strings.Replace(string(data), "name: maze\n", "name: maze\n  size: 7\n", 1), "name: grpo", "name: graft", 1)
	if edited == string(data) || !strings.Contains(edited, "size: 7") || !strings.Contains(edited, "name: graft") {
		t.Fatalf("config.yaml not edited:\n%s", data)
	}
	os.WriteFile(path, []byte(edited), 0o644)
	metrics, _ := os.ReadFile(filepath.Join(run, rundir.MetricsFile))
	_, stderr, err := cliErr(t, "train", "--resume", run, "--set", "iterations=4")
	msg := fmt.Sprint(err)
	if exitStatus(err) != exitConfig || !strings.Contains(msg, "env.size: (absent) → 7") || !strings.Contains(msg, "estimator.name: grpo → graft") ||
		strings.Contains(stderr, "resuming") {
		t.Fatalf("resume of an edited config.yaml: status %d, error %q\n%s", exitStatus(err), msg, stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(run, rundir.MetricsFile)); !bytes.Equal(got, metrics) {
		t.Error("the refused resume changed metrics.jsonl")
	}
}

// Resuming a finished run writes nothing at all — not even the lock file — and, on a run
// directory made read-only, still says "already finished" with status 0. (As root, permissions
// do not stop writes; the snapshot of every file's content, mode and mtime still does.)
func TestResumeFinishedWritesNothing(t *testing.T) {
	run := trainTiny(t, t.TempDir(), "")
	readOnly := os.Geteuid() != 0
	if readOnly {
		setModes(t, run, 0o555, 0o444)
		t.Cleanup(func() { setModes(t, run, 0o755, 0o644) })
		if err := os.WriteFile(filepath.Join(run, "probe"), nil, 0o644); err == nil {
			os.Remove(filepath.Join(run, "probe"))
			readOnly = false
		}
	}
	before := snapshot(t, run)
	time.Sleep(10 * time.Millisecond) // a rewrite now has another mtime
	_, stderr, code := cli(t, "train", "--resume", run)
	if code != 0 || !strings.Contains(stderr, "already finished (2 iterations") {
		t.Fatalf("resume of the finished run (read-only: %v): status %d\n%s", readOnly, code, stderr)
	}
	sameTree(t, run, before, "resuming the finished run")
	if !readOnly {
		t.Log("the run directory could not be made read-only (root); checked that nothing was written")
	}
}

// setModes gives every folder under root the mode dirs and every file the mode files.
func setModes(t *testing.T, root string, dirs, files fs.FileMode) {
	t.Helper()
	var paths []string
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil {
			paths = append(paths, path)
		}
		return nil
	})
	for _, p := range paths {
		mode := files
		if info, err := os.Stat(p); err == nil && info.IsDir() {
			mode = dirs
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
}

// Set-up that is refused or fails — a policy.max_len too short, a backend that cannot load, with
// and without a warm start, through train and sft — leaves no directory it created (a nested
// --out-dir included) and no warm start lock; a directory that was there before stays, with
// what it held.
func TestFailedSetUpLeavesNoDirectories(t *testing.T) {
	dir := t.TempDir()
	plain := writeTiny(t, dir, "")
	withSFT := writeTiny(t, t.TempDir(), tinySFT)
	kept := filepath.Join(dir, "kept")
	os.Mkdir(kept, 0o755)
	os.WriteFile(filepath.Join(kept, "keep.txt"), []byte("mine\n"), 0o644)
	const noPlugin = "xla:/nonexistent/pjrt_plugin.so"
	for i, tc := range []struct {
		args   []string
		status int
	}{
		{[]string{"train", "--config", plain, "--set", "policy.max_len=8"}, exitConfig},
		{[]string{"train", "--config", plain, "--backend", noPlugin}, exitError},
		{[]string{"train", "--config", withSFT, "--backend", noPlugin}, exitError},
		{[]string{"sft", "--config", withSFT, "--backend", noPlugin}, exitError},
		{[]string{"sft", "--config", withSFT, "--set", "policy.max_len=8"}, exitConfig},
	} {
		fresh := filepath.Join(dir, fmt.Sprint("new", i))
		for _, out := range []string{filepath.Join(fresh, "a", "runs"), kept} {
			args := append(tc.args, "--out-dir", out)
			_, stderr, code := cli(t, args...)
			if code != tc.status {
				t.Errorf("%v: status %d, want %d\n%s", args, code, tc.status, stderr)
			}
		}
		if _, err := os.Stat(fresh); err == nil {
			var left []string
			filepath.WalkDir(fresh, func(p string, _ fs.DirEntry, _ error) error { left = append(left, p); return nil })
			t.Errorf("%v left %v", tc.args, left)
		}
		if entries, _ := os.ReadDir(kept); len(entries) != 1 || entries[0].Name() != "keep.txt" {
			t.Errorf("%v: the existing out_dir holds %v, want only keep.txt", tc.args, entries)
		}
	}
}
