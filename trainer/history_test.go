package trainer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/rundir"
)

// historyFiles are the files of a run directory that record its past.
var historyFiles = []string{rundir.ConfigFile, rundir.MetricsFile, rundir.TimingFile, rundir.SummaryFile}

// readFiles reads the named files of run (nil for a missing one).
func readFiles(t *testing.T, run string, names ...string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, n := range names {
		out[n], _ = os.ReadFile(filepath.Join(run, n))
	}
	return out
}

// sameFiles fails the test for each file whose bytes differ from before.
func sameFiles(t *testing.T, run string, before map[string][]byte, what string) {
	t.Helper()
	for n, data := range readFiles(t, run, historyFiles...) {
		if !bytes.Equal(data, before[n]) {
			t.Errorf("%s: %s changed (%d bytes, was %d)", what, n, len(data), len(before[n]))
		}
	}
}

// A run whose checkpoints are gone while its metrics, timings or summary remain is refused,
// naming what is missing, what remains and the ways out, and every file is left as it was;
// only a run directory that holds no history (its config, empty files) starts again.
func TestResumeRefusesLostCheckpoints(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "tiny")
	runTiny(t, dir, "iterations=2", "checkpoint.every=1")
	ckpts := filepath.Join(run, rundir.CheckpointsDir)
	if err := os.RemoveAll(ckpts); err != nil {
		t.Fatal(err)
	}
	before := readFiles(t, run, historyFiles...)
	metricsLines := bytes.Count(before[rundir.MetricsFile], []byte("\n"))
	for _, sets := range [][]string{{"iterations=2"}, {"iterations=60"}} {
		_, err := New(tinyConfig(t, dir, sets...), Options{Out: io.Discard, Resume: true})
		var de *DirError
		if !errors.As(err, &de) {
			t.Fatalf("%v: resume without checkpoints: %v, want a refusal", sets, err)
		}
		for _, w := range []string{ckpts + " is missing", fmt.Sprintf("%s (%d lines)", rundir.MetricsFile, metricsLines),
			rundir.TimingFile, rundir.SummaryFile, "Restore " + ckpts, "remove " + run, "--name"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q does not say %q", sets, err, w)
			}
		}
		sameFiles(t, run, before, fmt.Sprintf("refused resume %v", sets))
	}
	// An empty checkpoints/ and no summary: metrics alone are history enough.
	os.Mkdir(ckpts, 0o755)
	os.Remove(filepath.Join(run, rundir.SummaryFile))
	before = readFiles(t, run, historyFiles...)
	_, err := New(tinyConfig(t, dir, "iterations=2"), Options{Out: io.Discard, Resume: true})
	if err == nil || !strings.Contains(err.Error(), ckpts+" holds no checkpoint") {
		t.Fatalf("resume with an empty checkpoints/: %v", err)
	}
	sameFiles(t, run, before, "refused resume with an empty checkpoints/")
	// A run stopped before it wrote anything but its config starts again, with a warning.
	for _, f := range []string{rundir.MetricsFile, rundir.TimingFile} {
		os.WriteFile(filepath.Join(run, f), nil, 0o644)
	}
	var log bytes.Buffer
	tr, err := New(tinyConfig(t, dir, "iterations=2"), Options{Out: &log, Resume: true})
	if err != nil {
		t.Fatalf("resume of a run without history: %v", err)
	}
	defer tr.Close()
	if !strings.Contains(log.String(), "starting the run again from the beginning") {
		t.Errorf("no warning that the run starts again:\n%s", log.String())
	}
	if s, err := tr.Run(context.Background()); err != nil || s.Iterations != 2 {
		t.Fatalf("the run started again: %+v, %v", s, err)
	}
}

// A run stopped in an evaluation before its first checkpoint leaves no history behind (only
// this process wrote it), so it resumes from the beginning rather than being refused.
func TestInterruptedBeforeFirstCheckpoint(t *testing.T) {
	dir := t.TempDir()
	var log bytes.Buffer
	tr, err := New(tinyConfig(t, dir, "iterations=2"), Options{Out: &log})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.openRun(); err != nil {
		t.Fatal(err)
	}
	if err := tr.writeLine(tr.metrics, Metrics{"type": "eval", "iter": 0}); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.interruptedInEval(nil, time.Now()); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("interruptedInEval: %v", err)
	}
	tr.closeRun()
	tr.Close()
	run := filepath.Join(dir, "tiny")
	for _, f := range []string{rundir.MetricsFile, rundir.TimingFile} {
		if fi, err := os.Stat(filepath.Join(run, f)); err != nil || fi.Size() != 0 {
			t.Errorf("%s after the interruption: %v, %v bytes; want it empty", f, err, fi.Size())
		}
	}
	if !strings.Contains(log.String(), "starts the run again from the beginning") {
		t.Errorf("the log does not say how the run resumes:\n%s", log.String())
	}
	tr, err = New(tinyConfig(t, dir, "iterations=2"), Options{Out: io.Discard, Resume: true})
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	tr.Close()
}

// editConfig rewrites the run's config.yaml with each old → new replacement, failing the test
// when one is not there.
func editConfig(t *testing.T, run string, pairs ...string) {
	t.Helper()
	path := filepath.Join(run, rundir.ConfigFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(pairs); i += 2 {
		if !bytes.Contains(data, []byte(pairs[i])) {
			t.Fatalf("config.yaml holds no %q:\n%s", pairs[i], data)
		}
		data = bytes.Replace(data, []byte(pairs[i]), []byte(pairs[i+1]), 1)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// rewriteState changes the trainer.json of checkpoint ckpt and writes its manifest again, as
// an older graftrl (or a later one) would have written it.
func rewriteState(t *testing.T, ckpt string, change func(map[string]any)) {
	t.Helper()
	path := filepath.Join(ckpt, rundir.TrainerStateFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	change(st)
	data, _ = json.MarshalIndent(st, "", " ")
	os.WriteFile(path, data, 0o644)
	os.Remove(filepath.Join(ckpt, rundir.ManifestFile))
	if err := writeManifest(ckpt); err != nil {
		t.Fatal(err)
	}
}

// A run whose config.yaml was edited in keys that change what it computes is refused on resume
// — config.yaml is where resume reads the config from, so only the checkpoint's record of the
// config it was trained with can tell — naming each key with the value the checkpoint was
// trained with and the new one; a new length stays allowed. A checkpoint that predates the
// record is accepted with a note, and a key the record lacks (added to graftrl since) is no
// difference while it holds its default.
func TestResumeRefusesEditedConfig(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "tiny")
	runTiny(t, dir, "iterations=2", "checkpoint.every=1")
	original, _ := os.ReadFile(filepath.Join(run, rundir.ConfigFile))
	editConfig(t, run, "size: 5", "size: 6", "name: grpo", "name: graft", "entropy_coef: 0.05", "entropy_coef: 0.1")
	before := readFiles(t, run, historyFiles...)
	// What `train --resume DIR --set iterations=4` decodes: config.yaml with the new length.
	cfg, err := config.Load(filepath.Join(run, rundir.ConfigFile), []string{"iterations=4"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(cfg, Options{Out: io.Discard, Resume: true})
	var de *DirError
	if !errors.As(err, &de) {
		t.Fatalf("resume with an edited config.yaml: %v, want a refusal", err)
	}
	for _, w := range []string{"env.size: 5 → 6", "estimator.name: grpo → graft", "update.entropy_coef: 0.05 → 0.1", rundir.CheckpointName(2)} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not name %q", err, w)
		}
	}
	if strings.Contains(err.Error(), "iterations: ") {
		t.Errorf("error %q names the length, which may change", err)
	}
	sameFiles(t, run, before, "refused resume of an edited config")

	os.WriteFile(filepath.Join(run, rundir.ConfigFile), original, 0o644)
	newest := rundir.CheckpointPath(run, 2)
	var recorded map[string]json.RawMessage
	rewriteState(t, newest, func(st map[string]any) {
		data, _ := json.Marshal(st["config"])
		json.Unmarshal(data, &recorded)
		delete(recorded, "credit_diagnostics") // false, its default
		st["config"], st["config_sha256"] = recorded, configSHA256(recorded)
	})
	tr, err := New(tinyConfig(t, dir, "iterations=3"), Options{Out: io.Discard, Resume: true})
	if err != nil {
		t.Fatalf("resume where the checkpoint lacks a key at its default: %v", err)
	}
	tr.Close()
	rewriteState(t, newest, func(st map[string]any) { delete(st, "config"); delete(st, "config_sha256") })
	var log bytes.Buffer
	tr, err = New(tinyConfig(t, dir, "iterations=3"), Options{Out: &log, Resume: true})
	if err != nil {
		t.Fatalf("resume from a checkpoint without a config record: %v", err)
	}
	defer tr.Close()
	if !strings.Contains(log.String(), "does not record the config it was trained with") {
		t.Errorf("no note about the older checkpoint:\n%s", log.String())
	}
	if s, err := tr.Run(context.Background()); err != nil || s.Iterations != 3 {
		t.Fatalf("the extended run: %+v, %v", s, err)
	}
	st, err := readState(rundir.CheckpointPath(run, 3))
	if err != nil || st.ConfigSHA256 != configSHA256(trainedConfig(&tr.cfg)) || len(st.Config) == 0 {
		t.Errorf("the new checkpoint's config record: %q, %d keys (%v)", st.ConfigSHA256, len(st.Config), err)
	}
}
