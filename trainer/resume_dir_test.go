package trainer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/rundir"
)

// trainPart runs the resume config into out_dir dir (resuming what is there), stopped as by a
// signal after iteration stop (0: not stopped), and returns its log.
func trainPart(t *testing.T, dir string, stop int, sets ...string) (string, error) {
	t.Helper()
	cfg, err := config.Parse("r.yaml", []byte(resumeYAML), append([]string{"out_dir=" + dir}, sets...))
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	tr, err := New(cfg, Options{Out: &log, Quiet: true, Resume: true})
	if err != nil {
		return log.String(), err
	}
	defer tr.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr.afterIteration = func() {
		if tr.iter == stop {
			cancel()
		}
	}
	_, err = tr.Run(ctx)
	if stop > 0 && errors.Is(err, ErrInterrupted) {
		err = nil
	}
	return log.String(), err
}

// A run directory copied elsewhere under another name resumes there, ends exactly where the
// straight run ends, and its config.yaml records where it is now.
func TestResumeCopiedRunDirectory(t *testing.T) {
	want, wantWeights := straightRun(t)
	a := t.TempDir()
	if _, err := trainPart(t, a, 4); err != nil {
		t.Fatal(err)
	}
	b := t.TempDir()
	if out, err := exec.Command("cp", "-a", filepath.Join(a, "r"), filepath.Join(b, "copy")).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	log, err := trainPart(t, b, 0, "name=copy")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log, "was recorded as") {
		t.Errorf("no note of the new location:\n%s", log)
	}
	got, gotWeights := readRun(t, filepath.Join(b, "copy"))
	if !bytes.Equal(got, want) || gotWeights != wantWeights {
		t.Fatal("the copied run resumed does not end where the straight run ends")
	}
	rec, err := config.Load(filepath.Join(b, "copy", rundir.ConfigFile), nil)
	if err != nil || rec.Name != "copy" || rec.OutDir != b {
		t.Fatalf("recorded location %q %q (%v), want copy %q", rec.Name, rec.OutDir, err, b)
	}
	// The original, resumed by another spelling of its path, keeps its recorded location.
	if _, err := trainPart(t, a+"/./", 0); err != nil {
		t.Fatal(err)
	}
	if rec, _ := config.Load(filepath.Join(a, "r", rundir.ConfigFile), nil); rec.OutDir != a {
		t.Errorf("out_dir rewritten to %q", rec.OutDir)
	}
}

// A deleted metrics.jsonl does not restart the run from iteration 0: resume stops, naming the
// file and the ways out, and leaves the checkpoints alone.
func TestResumeDeletedMetrics(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "r")
	if _, err := trainPart(t, dir, 4); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(run, rundir.MetricsFile)); err != nil {
		t.Fatal(err)
	}
	_, err := trainPart(t, dir, 0)
	var de *DirError
	if !errors.As(err, &de) {
		t.Fatalf("resume without metrics.jsonl: %v, want a refusal", err)
	}
	for _, w := range []string{rundir.MetricsFile + " is missing", "Restore", "remove " + run, "--name"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	if _, err := os.Stat(filepath.Join(run, rundir.MetricsFile)); err == nil {
		t.Error("metrics.jsonl was written again")
	}
	if list, _ := rundir.ListCheckpoints(run); len(list) != 3 {
		t.Errorf("checkpoints %v", list)
	}
}

// metrics.jsonl cut back or altered past the newest checkpoints: resume falls back to the newest
// checkpoint whose part of metrics.jsonl is intact, and still ends where the straight run ends.
func TestResumeDamagedMetricsFallsBack(t *testing.T) {
	want, wantWeights := straightRun(t)
	dir := t.TempDir()
	run := filepath.Join(dir, "r")
	if _, err := trainPart(t, dir, 5); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(run, rundir.MetricsFile)
	data, _ := os.ReadFile(path)
	lines := bytes.SplitAfter(data, []byte("\n"))
	// The line of iteration 5 (a train line; evaluations are at 3 and 6) altered in place.
	lines[len(lines)-2] = bytes.Replace(lines[len(lines)-2], []byte(`"type":"train"`), []byte(`"type":"tra1n"`), 1)
	os.WriteFile(path, bytes.Join(lines, nil), 0o644)
	log, err := trainPart(t, dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log, rundir.CheckpointName(5)+" is not valid") || !strings.Contains(log, "differs from what the checkpoint recorded") {
		t.Errorf("no fallback warning:\n%s", log)
	}
	got, gotWeights := readRun(t, run)
	if !bytes.Equal(got, want) || gotWeights != wantWeights {
		t.Fatal("the run resumed past damaged metrics does not end where the straight run ends")
	}
}

// A garbage trainer.json whose manifest matches (rewritten with it) is not a usable checkpoint:
// resume falls back to the previous one with a warning and ends where the straight run ends.
func TestResumeGarbageTrainerState(t *testing.T) {
	want, wantWeights := straightRun(t)
	dir := t.TempDir()
	run := filepath.Join(dir, "r")
	if _, err := trainPart(t, dir, 5); err != nil {
		t.Fatal(err)
	}
	newest := rundir.CheckpointPath(run, 5)
	for name, garbage := range map[string]string{"truncated JSON": `{"iter": 5, "rng": {`, "no streams": `{"iter": 5}`} {
		os.WriteFile(filepath.Join(newest, rundir.TrainerStateFile), []byte(garbage), 0o644)
		os.Remove(filepath.Join(newest, rundir.ManifestFile))
		if err := writeManifest(newest); err != nil {
			t.Fatal(err)
		}
		if err := VerifyCheckpoint(newest); err != nil {
			t.Fatalf("%s: the manifest does not match: %v", name, err)
		}
		if _, err := readState(newest); err == nil {
			t.Fatalf("%s: the trainer state reads", name)
		}
	}
	log, err := trainPart(t, dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log, rundir.CheckpointName(5)+" is not valid") || !strings.Contains(log, rundir.TrainerStateFile) {
		t.Errorf("no fallback warning:\n%s", log)
	}
	got, gotWeights := readRun(t, run)
	if !bytes.Equal(got, want) || gotWeights != wantWeights {
		t.Fatal("the run resumed past a garbage trainer.json does not end where the straight run ends")
	}
}

// graftrl eval of a checkpoint repeats the run's own evaluation of it, sampled episodes
// included; when the newest checkpoint is corrupt it evaluates the previous one and says so.
func TestEvaluateRunMatchesRunEvaluation(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "r")
	if _, err := trainPart(t, dir, 7); err != nil {
		t.Fatal(err)
	}
	var evalAt6 map[string]any
	data, _ := os.ReadFile(filepath.Join(run, rundir.MetricsFile))
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		if bytes.Contains(line, []byte(`"type":"eval"`)) && bytes.Contains(line, []byte(`"iter":6,`)) {
			if err := json.Unmarshal(line, &evalAt6); err != nil {
				t.Fatal(err)
			}
		}
	}
	if evalAt6 == nil {
		t.Fatalf("no evaluation at iteration 6 in\n%s", data)
	}
	// Iteration 7 is the newest; break it so that eval falls back to 6.
	newest := rundir.CheckpointPath(run, 7)
	os.WriteFile(filepath.Join(newest, rundir.TrainerStateFile), []byte("{"), 0o644)
	var log bytes.Buffer
	m, err := EvaluateRun(run, "", Options{Out: &log, Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "evaluating checkpoint "+rundir.CheckpointPath(run, 6)) || !strings.Contains(log.String(), "not the run's newest") {
		t.Errorf("eval does not say which checkpoint it evaluates:\n%s", log.String())
	}
	compared := 0
	for k, v := range evalAt6 {
		if !strings.HasPrefix(k, "eval/") {
			continue
		}
		if got, ok := m[k].(float64); !ok || got != v.(float64) {
			t.Errorf("%s: eval %v, the run's own evaluation %v", k, m[k], v)
		}
		compared++
	}
	if compared == 0 || m["eval/train/sampled/success"] == nil {
		t.Fatalf("nothing compared: %v", m)
	}
}
