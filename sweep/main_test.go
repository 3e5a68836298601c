package sweep

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/graftrl/graftrl/config"
	_ "github.com/graftrl/graftrl/envs/all" // register the environments the test configs use
	"github.com/graftrl/graftrl/rundir"
)

// TestMain lets the test binary stand in for `graftrl train` (GRAFTRL_FAKE_TRAIN=1), so that
// executor tests run real processes quickly and deterministically.
func TestMain(m *testing.M) {
	if os.Getenv("GRAFTRL_FAKE_TRAIN") == "1" {
		os.Exit(fakeTrain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeTrain mimics `graftrl train --config FILE --out-dir DIR`: it writes the run directory the
// way the trainer does (config.yaml, metrics.jsonl, summary.json), 10 env steps per iteration,
// and on SIGINT stops early with a summary short of the budget and exit status 1. The
// environment steers it: GRAFTRL_FAKE_SLOW (a run name whose iterations take 200 ms instead of
// 5 ms), GRAFTRL_FAKE_FAIL (a run name that fails), GRAFTRL_FAKE_LOG (a file each start is
// appended to).
func fakeTrain(args []string) int {
	var cfgPath, outDir string
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--config":
			cfgPath = args[i+1]
		case "--out-dir":
			outDir = args[i+1]
		}
	}
	if len(args) == 0 || args[0] != "train" || cfgPath == "" || outDir == "" {
		fmt.Fprintln(os.Stderr, "fake train: bad arguments", args)
		return 2
	}
	cfg, err := config.Load(cfgPath, []string{"out_dir=" + outDir})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if log := os.Getenv("GRAFTRL_FAKE_LOG"); log != "" {
		f, _ := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		fmt.Fprintln(f, cfg.Name)
		f.Close()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir := filepath.Join(cfg.OutDir, cfg.Name)
	if _, err := os.Stat(filepath.Join(dir, rundir.MetricsFile)); err == nil {
		fmt.Fprintln(os.Stderr, "fake train: run directory exists")
		return 1
	}
	_ = os.MkdirAll(dir, 0o755)
	_ = os.WriteFile(filepath.Join(dir, rundir.ConfigFile), cfg.YAML(), 0o644)
	mf, _ := os.Create(filepath.Join(dir, rundir.MetricsFile))
	defer mf.Close()
	line := func(m map[string]any) {
		data, _ := json.Marshal(m)
		mf.Write(append(data, '\n'))
	}
	line(map[string]any{"type": "eval", "iter": 0, "env_steps": 0, "eval/success": 0.0})
	if os.Getenv("GRAFTRL_FAKE_FAIL") == cfg.Name {
		fmt.Fprintln(os.Stderr, "fake train: failing on purpose")
		return 3
	}
	delay := 5 * time.Millisecond
	if os.Getenv("GRAFTRL_FAKE_SLOW") == cfg.Name {
		delay = 200 * time.Millisecond
	}
	iter, steps := 0, int64(0)
	for iter < cfg.Iterations && !(cfg.EnvSteps > 0 && steps >= cfg.EnvSteps) && ctx.Err() == nil {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
		}
		iter++
		steps += 10
		line(map[string]any{"type": "train", "iter": iter, "env_steps": steps, "tokens": steps})
	}
	line(map[string]any{"type": "eval", "iter": iter, "env_steps": steps, "eval/success": float64(iter) / float64(cfg.Iterations)})
	summary, _ := json.Marshal(map[string]any{"iterations": iter, "env_steps": steps, "tokens": steps})
	_ = os.WriteFile(filepath.Join(dir, rundir.SummaryFile), summary, 0o644)
	if ctx.Err() != nil {
		return 1
	}
	fmt.Fprintln(os.Stderr, "fake train: done")
	return 0
}

// tinyBase is a valid training config for tests.
const tinyBase = `name: tiny
iterations: 4
env: {name: maze}
tasks: {train: 2, eval: 2, per_iter: 2, group_size: 2}
rollout: {action_max_tokens: 1}
policy: {d_model: 16, layers: 1, heads: 2, d_ff: 32}
eval: {every: 1}
`

// writeSweep writes tiny.yaml and a sweep config (with out_dir inside the temp dir) and loads it.
func writeSweep(t *testing.T, dir, sweepYAML string) *Config {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "tiny.yaml"), []byte(tinyBase), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "sweep.yaml")
	if !strings.Contains(sweepYAML, "out_dir:") {
		sweepYAML += "out_dir: " + filepath.Join(dir, "out") + "\n"
	}
	if err := os.WriteFile(path, []byte(sweepYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fakeLauncher runs the test binary as the training command.
func fakeLauncher(t *testing.T) Launcher {
	t.Helper()
	t.Setenv("GRAFTRL_FAKE_TRAIN", "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Launcher{Binary: exe, Grace: 5 * time.Second}
}
