package trainer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/maze"
	"github.com/graftrl/graftrl/rundir"
)

// faulty wraps the maze and misbehaves on the steps it is told to: it panics, returns an error,
// or hangs. Steps are counted across all instances, so faults land in a few episodes of a run.
type faulty struct {
	envs.Env
	counter *atomic.Int64
	mode    string
	every   int64
}

func (f *faulty) Step(a string) (envs.Observation, error) {
	if n := f.counter.Add(1); n%f.every == 0 {
		switch f.mode {
		case "panic":
			panic(fmt.Sprintf("injected panic at step %d", n))
		case "error":
			return envs.Observation{}, fmt.Errorf("injected error at step %d", n)
		case "hang":
			select {} // never returns
		}
	}
	return f.Env.Step(a)
}

func init() {
	counters := map[string]*atomic.Int64{"panic": {}, "error": {}, "hang": {}}
	envs.Register(envs.Spec{Name: "faulty-test", Description: "maze with injected faults (tests only)",
		New: func(opts envs.Options) (envs.Env, error) {
			mode, _ := opts["mode"].(string)
			every, _ := opts["every"].(int)
			m, err := maze.New(maze.DefaultConfig(5))
			if err != nil {
				return nil, err
			}
			if counters[mode] == nil || every < 1 {
				return nil, errors.New("faulty-test: options mode (panic|error|hang) and every ≥ 1")
			}
			return &faulty{Env: m, counter: counters[mode], mode: mode, every: int64(every)}, nil
		}})
}

func trainLines(t *testing.T, run string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(run, rundir.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		json.Unmarshal([]byte(l), &m)
		if m["type"] == "train" {
			out = append(out, m)
		}
	}
	return out
}

// An env that panics, errors or hangs on some steps ends only those episodes, marked as errors;
// the run completes. A share of failures above faults.max_error_share aborts the run.
func TestFaultContainmentInRuns(t *testing.T) {
	for _, mode := range []string{"panic", "error", "hang"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			s, _ := runTiny(t, dir, "env=faulty-test", "env.mode="+mode, "env.every=37",
				"faults.step_timeout=0.2", "faults.max_error_share=0.9", "iterations=3")
			if s.Iterations != 3 {
				t.Fatalf("run stopped after %d iterations", s.Iterations)
			}
			errs := 0.0
			for _, m := range trainLines(t, filepath.Join(dir, "tiny")) {
				errs += m["errors"].(float64)
			}
			if errs == 0 {
				t.Fatal("no episode was marked as an error")
			}
		})
	}
	dir := t.TempDir()
	cfg, err := config.Parse("tiny.yaml", []byte(tinyYAML), []string{"out_dir=" + dir, "env=faulty-test", "env.mode=error", "env.every=2", "faults.max_error_share=0.1"})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := New(cfg, Options{Out: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(context.Background()); !errors.Is(err, ErrAborted) || !strings.Contains(err.Error(), "faults.max_error_share") {
		t.Fatalf("error %v, want an abort naming faults.max_error_share", err)
	}
}

// closingEnv wraps the maze and counts, across instances, how many were built and closed.
type closingEnv struct {
	envs.Env
	closed *atomic.Int64
	once   atomic.Bool
}

func (e *closingEnv) Close() error {
	if !e.once.CompareAndSwap(false, true) {
		panic("closingEnv closed twice")
	}
	e.closed.Add(1)
	return nil
}

var closingBuilt, closingClosed atomic.Int64

func init() {
	envs.Register(envs.Spec{Name: "closing-test", Description: "maze that counts its Close calls (tests only)",
		New: func(envs.Options) (envs.Env, error) {
			m, err := maze.New(maze.DefaultConfig(5))
			if err != nil {
				return nil, err
			}
			closingBuilt.Add(1)
			return &closingEnv{Env: m, closed: &closingClosed}, nil
		}})
}

// Every env instance a run builds (to check the config, to probe the vocabulary, one per
// collector slot) is closed once: the probes right away, the slots by Close.
func TestTrainerClosesEnvs(t *testing.T) {
	closingBuilt.Store(0)
	closingClosed.Store(0)
	tr := newTiny(t, t.TempDir(), "env=closing-test", "iterations=1")
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	slots := int64(tr.cfg.Tasks.PerIter * tr.cfg.Tasks.GroupSize)
	if built, closed := closingBuilt.Load(), closingClosed.Load(); closed != built-slots {
		t.Fatalf("before Close: %d of %d envs closed, want all but the %d slots", closed, built, slots)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if built, closed := closingBuilt.Load(), closingClosed.Load(); closed != built {
		t.Fatalf("after Close: %d of %d envs closed", closed, built)
	}
}
