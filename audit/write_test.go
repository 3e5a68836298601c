package audit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"fmt"
	"image/png"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/config"
	_ "github.com/graftrl/graftrl/envs/all"
	"github.com/graftrl/graftrl/rundir"
	"github.com/graftrl/graftrl/trainer"
)

func checkPNG(t *testing.T, path string, minW, minH int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() < minW || b.Dy() < minH {
		t.Errorf("%s is only %v", path, b)
	}
}

// Write lays out every file of an audit; readResult reads audit.json back; WriteCheckpoints adds
// the metrics over checkpoints. Set GRAFTRL_AUDIT_OUT to keep the files (to look at the plots).
func TestWriteFiles(t *testing.T) {
	res, err := Run(chainSetup(t, 16), Options{Steps: 30, MC: 8, Seed: 2, Slots: 32})
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("GRAFTRL_AUDIT_OUT")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := res.Write(dir); err != nil {
		t.Fatal(err)
	}
	back, err := readResult(filepath.Join(dir, rundir.AuditJSON))
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Steps) != len(res.Steps) || len(back.Metrics) != len(DefaultVariants()) || back.Steps[3].Key != res.Steps[3].Key ||
		len(back.Steps[0].Est) != len(DefaultVariants()) {
		t.Fatalf("audit.json round trip: %d steps, %d metrics", len(back.Steps), len(back.Metrics))
	}
	f, err := os.Open(filepath.Join(dir, rundir.AuditTable))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) != 1+len(DefaultVariants()) || rows[0][0] != "estimator" || rows[8][0] != "graft-td-raw" {
		t.Fatalf("table.csv: %v %v", rows, err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, rundir.AuditMarkdown))
	for _, want := range []string{"## Estimators against the true advantage", "### " + SliceFailedProgress, "## Definitions", "![estimates against the truth](scatter.png)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("audit.md lacks %q", want)
		}
	}
	sum, _ := os.ReadFile(filepath.Join(dir, rundir.AuditSummary))
	if !strings.Contains(string(sum), "30 steps of a fresh batch of 16 episodes") {
		t.Errorf("summary: %s", sum)
	}
	checkPNG(t, filepath.Join(dir, rundir.AuditScatter+".png"), 1200, 500)

	a, b := *res, *res
	a.Iter, b.Iter = 10, 20
	if err := WriteCheckpoints(dir, []*Result{&a, &b}); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, filepath.Join(dir, rundir.AuditCheckpointsPlot+".png"), 800, 600)
	data, _ := os.ReadFile(filepath.Join(dir, rundir.AuditCheckpointsCSV))
	if got := strings.Count(string(data), "\n"); got != 1+2*len(DefaultVariants()) {
		t.Errorf("checkpoints.csv has %d lines", got)
	}
}

// AuditRun on a tiny trained run: the newest checkpoint by default, one by iteration number, and
// every checkpoint with the metrics over training.
func TestAuditRun(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny run")
	}
	const tiny = `
name: tiny
iterations: 2
env: {name: maze, size: 5}
tasks: {train: 2, eval: 2, per_iter: 2, group_size: 3}
rollout: {action_max_tokens: 1}
policy: {d_model: 16, layers: 1, heads: 2, d_ff: 32, max_len: 128}
update: {epochs: 1, minibatches: 1}
eval: {every: 1, at_start: false}
checkpoint: {every: 1, keep_last: 5}
`
	root := t.TempDir()
	cfg, err := config.Parse("tiny.yaml", []byte(tiny), []string{"out_dir=" + root})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trainer.New(cfg, trainer.Options{Out: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	run := tr.Dir()
	before := runFiles(t, run)
	opts := Options{Steps: 6, MC: 2, Slots: 8}
	res, err := AuditRun(RunOptions{Run: run, Audit: opts})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Iter != 2 || res[0].Env != "maze" || res[0].Batch.Episodes != 6 || len(res[0].Steps) != 6 {
		t.Fatalf("%+v", res[0])
	}
	if _, err := os.Stat(filepath.Join(rundir.AuditPath(run), rundir.AuditJSON)); err != nil {
		t.Fatal(err)
	}
	res, err = AuditRun(RunOptions{Run: run, Checkpoint: "1", Out: filepath.Join(root, "one"), Audit: opts})
	if err != nil || res[0].Iter != 1 {
		t.Fatalf("checkpoint 1: %v", err)
	}
	if _, err := AuditRun(RunOptions{Run: run, Checkpoint: "7", Audit: opts}); err == nil {
		t.Fatal("a missing checkpoint was accepted")
	}
	all := filepath.Join(root, "all")
	res, err = AuditRun(RunOptions{Run: run, AllCheckpoints: true, Out: all, Audit: opts})
	if err != nil || len(res) != 2 || res[0].Iter != 1 || res[1].Iter != 2 {
		t.Fatalf("all checkpoints: %d results, %v", len(res), err)
	}
	for _, f := range []string{filepath.Join(rundir.CheckpointName(1), rundir.AuditJSON), filepath.Join(rundir.CheckpointName(2), rundir.AuditTable), rundir.AuditJSON, rundir.AuditCheckpointsCSV, rundir.AuditCheckpointsPlot + ".png"} {
		if _, err := os.Stat(filepath.Join(all, f)); err != nil {
			t.Error(err)
		}
	}
	// An audit writes its own folder and changes nothing else of the run it reads.
	if after := runFiles(t, run); !maps.Equal(before, after) {
		t.Errorf("the audits changed the run directory outside audit/:\nbefore %v\nafter  %v", before, after)
	}
}

// runFiles maps every file of a run directory outside its audit folder to its size, mode,
// modification time and SHA-256.
func runFiles(t *testing.T, run string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(run, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == rundir.AuditPath(run) {
				return filepath.SkipDir
			}
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[path] = fmt.Sprintf("%d %v %d %x", info.Size(), info.Mode(), info.ModTime().UnixNano(), sha256.Sum256(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
