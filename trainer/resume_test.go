package trainer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/rundir"
)

// resumeYAML checkpoints every iteration so that a kill at any moment has something to resume.
const resumeYAML = `
name: r
iterations: 8
env: {name: maze, size: 5}
tasks: {train: 3, eval: 2, per_iter: 2, group_size: 3}
rollout: {action_max_tokens: 1}
policy: {d_model: 16, layers: 1, heads: 2, d_ff: 32, max_len: 128}
update: {epochs: 1, minibatches: 2, entropy_coef: 0.05, kl: k3}
eval: {every: 3}
checkpoint: {every: 1, keep_last: 3}
`

// TestMain lets the test binary act as a training process that a test can kill (-9 or SIGTERM).
func TestMain(m *testing.M) {
	if dir := os.Getenv("GRAFTRL_TEST_TRAIN_DIR"); dir != "" {
		os.Exit(childTrain(dir, os.Getenv("GRAFTRL_TEST_SLOW") != ""))
	}
	os.Exit(m.Run())
}

// childTrain runs (or resumes) the resume config into dir — or, with GRAFTRL_TEST_TRAIN_MODEL
// set, lmYAML on that model; exit 75 when interrupted.
func childTrain(dir string, slow bool) int {
	yaml, sets := resumeYAML, []string{"out_dir=" + dir}
	if model := os.Getenv("GRAFTRL_TEST_TRAIN_MODEL"); model != "" {
		yaml, sets = lmYAML, append(sets, "policy.pretrained="+model)
	}
	cfg, err := config.Parse("r.yaml", []byte(yaml), sets)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	t, err := New(cfg, Options{Out: os.Stderr, Quiet: true, Resume: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if slow {
		t.afterIteration = func() { time.Sleep(150 * time.Millisecond) }
	}
	_, err = t.Run(ctx)
	switch {
	case errors.Is(err, ErrInterrupted):
		return 75
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func startChild(t *testing.T, dir string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "GRAFTRL_TEST_TRAIN_DIR="+dir, "GRAFTRL_TEST_SLOW=1"), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("child stderr:\n%s", stderr.String())
		}
	})
	return cmd
}

// straightRun trains the resume config without interruption.
func straightRun(t *testing.T) (metrics []byte, weights string) {
	t.Helper()
	dir := t.TempDir()
	cfg, err := config.Parse("r.yaml", []byte(resumeYAML), []string{"out_dir=" + dir})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := New(cfg, Options{Out: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return readRun(t, filepath.Join(dir, "r"))
}

// readRun returns a run's metrics.jsonl and a SHA-256 of the weights of its newest checkpoint.
func readRun(t *testing.T, run string) ([]byte, string) {
	t.Helper()
	metrics, err := os.ReadFile(filepath.Join(run, rundir.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(filepath.Join(run, rundir.ConfigFile), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.OutDir = t.TempDir()
	tr, err := New(cfg, Options{Out: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	ckpt, err := latestValidCheckpoint(run, t.Logf)
	if err != nil || ckpt == "" {
		t.Fatalf("no checkpoint in %s: %v", run, err)
	}
	if _, err := tr.restore(ckpt); err != nil {
		t.Fatal(err)
	}
	w, err := tr.pol.Weights()
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for _, p := range w {
		for _, x := range p {
			binary.Write(h, binary.LittleEndian, math.Float32bits(x))
		}
	}
	return metrics, fmt.Sprintf("%x", h.Sum(nil))
}

func waitForCheckpoint(t *testing.T, run string, iter int, cmd *exec.Cmd) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(rundir.CheckpointPath(run, iter)); err == nil {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Kill()
	t.Fatalf("no checkpoint %d after 2 minutes", iter)
}

// A run killed at a random moment (kill -9, or SIGTERM) and resumed produces exactly what the
// uninterrupted run produced: byte-identical metrics.jsonl and identical final weights.
func TestResumeAfterKill(t *testing.T) {
	wantMetrics, wantWeights := straightRun(t)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			run := filepath.Join(dir, "r")
			cmd := startChild(t, dir)
			at := 2 + rng.IntN(4)
			waitForCheckpoint(t, run, at, cmd)
			time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond) // somewhere inside a later iteration
			t.Logf("%v after checkpoint %d", sig, at)
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			code := cmd.ProcessState.ExitCode()
			if sig == syscall.SIGTERM && code != 75 && code != 0 {
				t.Fatalf("SIGTERM: exit status %d (%v), want 75 (interrupted, checkpoint written)", code, err)
			}
			resumeMatches(t, dir, run, wantMetrics, wantWeights)
		})
	}
}

// resumeMatches resumes the run in dir (a child process, with env) and checks that it ends
// where the uninterrupted run ended: the same metrics.jsonl bytes and final weights.
func resumeMatches(t *testing.T, dir, run string, wantMetrics []byte, wantWeights string, env ...string) {
	t.Helper()
	if err := startChild(t, dir, env...).Wait(); err != nil {
		t.Fatalf("resume: %v", err)
	}
	gotMetrics, gotWeights := readRun(t, run)
	if !bytes.Equal(gotMetrics, wantMetrics) {
		t.Fatalf("resumed metrics differ from the uninterrupted run:\n%s\n---\n%s", gotMetrics, wantMetrics)
	}
	if gotWeights != wantWeights {
		t.Fatalf("resumed final weights differ: %s vs %s", gotWeights, wantWeights)
	}
}

// A corrupt newest checkpoint (truncated file, flipped byte) is refused and resume falls back
// to the previous valid one with a warning — and still ends where the straight run ends.
func TestCorruptCheckpointFallback(t *testing.T) {
	wantMetrics, wantWeights := straightRun(t)
	for _, corrupt := range []string{"truncate", "flip"} {
		t.Run(corrupt, func(t *testing.T) {
			dir := t.TempDir()
			run := filepath.Join(dir, "r")
			cfg, _ := config.Parse("r.yaml", []byte(resumeYAML), []string{"out_dir=" + dir, "iterations=5"})
			tr, err := New(cfg, Options{Out: io.Discard})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tr.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			newest := rundir.CheckpointPath(run, 5)
			bins, _ := filepath.Glob(filepath.Join(rundir.PolicyPath(newest), "*.bin"))
			if len(bins) != 1 {
				t.Fatalf("checkpoint files: %v", bins)
			}
			data, _ := os.ReadFile(bins[0])
			if corrupt == "truncate" {
				data = data[:len(data)/2]
			} else {
				data[len(data)/3] ^= 0x01
			}
			os.WriteFile(bins[0], data, 0o644)
			if err := VerifyCheckpoint(newest); err == nil {
				t.Fatal("the corrupt checkpoint verifies")
			}
			var log bytes.Buffer
			cfg, _ = config.Parse("r.yaml", []byte(resumeYAML), []string{"out_dir=" + dir})
			tr, err = New(cfg, Options{Out: &log, Resume: true, Quiet: true})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tr.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(log.String(), rundir.CheckpointName(5)+" is not valid") || !strings.Contains(log.String(), rundir.CheckpointName(4)) {
				t.Errorf("no fallback warning:\n%s", log.String())
			}
			gotMetrics, gotWeights := readRun(t, run)
			if !bytes.Equal(gotMetrics, wantMetrics) || gotWeights != wantWeights {
				t.Fatal("the run resumed from the previous checkpoint does not match the straight run")
			}
		})
	}
}

// Resuming with a config that changes what the run computes is refused with a diff; the keys
// that only change its length are allowed.
func TestResumeConfigDiff(t *testing.T) {
	dir := t.TempDir()
	cfg, _ := config.Parse("r.yaml", []byte(resumeYAML), []string{"out_dir=" + dir, "iterations=1"})
	tr, _ := New(cfg, Options{Out: io.Discard})
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	cfg, _ = config.Parse("r.yaml", []byte(resumeYAML), []string{"out_dir=" + dir, "optim.lr=0.002", "update.epochs=2", "iterations=3"})
	_, err := New(cfg, Options{Out: io.Discard, Resume: true})
	var de *DirError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "optim.lr: 0.001 → 0.002") || !strings.Contains(err.Error(), "update.epochs: 1 → 2") || strings.Contains(err.Error(), "iterations: ") {
		t.Fatalf("error %v", err)
	}
	// Without resume, the directory is not reused.
	cfg, _ = config.Parse("r.yaml", []byte(resumeYAML), []string{"out_dir=" + dir, "iterations=3"})
	if _, err := New(cfg, Options{Out: io.Discard}); !errors.As(err, &de) || !strings.Contains(err.Error(), "already holds a run") {
		t.Fatalf("rerun without resume: %v", err)
	}
	tr, _ = New(cfg, Options{Out: io.Discard, Resume: true})
	if s, err := tr.Run(context.Background()); err != nil || s.Iterations != 3 {
		t.Fatalf("resume with more iterations: %+v %v", s, err)
	}
}
