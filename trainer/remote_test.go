package trainer

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/openenv"
	"github.com/graftrl/graftrl/rundir"
)

// hookedEnv is an env whose every Step first calls hook (with the server's step count); a hook
// error fails the step.
type hookedEnv struct {
	envs.Env
	hook func() error
}

func (h *hookedEnv) Step(a string) (envs.Observation, error) {
	if err := h.hook(); err != nil {
		return envs.Observation{}, err
	}
	return h.Env.Step(a)
}

func (h *hookedEnv) ActionWords() []string { return h.Env.(envs.ActionWorder).ActionWords() }

// remoteServer serves tinyYAML's maze on a fixed loopback address and can be killed (every
// socket closed at once, as when the process dies) and started again on the same address.
type remoteServer struct {
	t     *testing.T
	addr  string
	steps atomic.Int64
	// onStep runs in the server's env calls after each step is counted.
	onStep func(n int64)
	// failSteps makes every env step fail.
	failSteps atomic.Bool

	mu  sync.Mutex
	srv *openenv.Server
}

func newRemoteServer(t *testing.T) *remoteServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &remoteServer{t: t, addr: ln.Addr().String()}
	r.serve(ln)
	t.Cleanup(r.kill)
	return r
}

func (r *remoteServer) serve(ln net.Listener) {
	srv, err := openenv.NewServer(openenv.ServerOptions{Env: "maze", Addr: r.addr, NewEnv: func() (envs.Env, error) {
		m, err := envs.New("maze", envs.Options{"size": 5})
		return &hookedEnv{Env: m, hook: func() error {
			if n := r.steps.Add(1); r.onStep != nil {
				r.onStep(n)
			}
			if r.failSteps.Load() {
				return errors.New("the env's step failed")
			}
			return nil
		}}, err
	}})
	if err != nil {
		r.t.Fatal(err)
	}
	r.mu.Lock()
	r.srv = srv
	r.mu.Unlock()
	go srv.Serve(context.Background(), ln)
}

func (r *remoteServer) kill() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.srv.Close()
}

// restart starts the server again on its address after a pause.
func (r *remoteServer) restart(pause time.Duration) {
	time.Sleep(pause)
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		r.t.Errorf("restart: %v", err)
		return
	}
	r.serve(ln)
}

// remoteTiny prepares tinyYAML in dir, played on the server.
func remoteTiny(t *testing.T, dir string, r *remoteServer, sets ...string) *Trainer {
	t.Helper()
	return newTiny(t, dir, remoteSets(r, sets...)...)
}

// remoteSets are the overrides of remoteTiny.
func remoteSets(r *remoteServer, sets ...string) []string {
	return append([]string{"iterations=3", "env=openenv", "env.url=ws://" + r.addr, "eval.every=0", "eval.at_start=false"}, sets...)
}

// withoutRetried returns metrics.jsonl of a run with the retried counts left out.
func withoutRetried(t *testing.T, run string) []map[string]any {
	lines := trainLines(t, run)
	for _, m := range lines {
		delete(m, "retried")
	}
	return lines
}

// A remote env server killed in the middle of an iteration and back 0.3 s later: the episodes
// it was serving are replayed on new sessions, no episode fails, the retried episodes are
// counted in metrics.jsonl, and every metric is the one of a run whose server never died.
func TestRemoteServerKilledMidIteration(t *testing.T) {
	straight := t.TempDir()
	tr := remoteTiny(t, straight, newRemoteServer(t))
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	tr.Close()

	dir := t.TempDir()
	r := newRemoteServer(t)
	var once sync.Once
	r.onStep = func(n int64) {
		if n == 90 { // in the second iteration: the first takes 72 steps, the second 44
			once.Do(func() {
				go func() {
					r.kill()
					r.restart(300 * time.Millisecond)
				}()
			})
		}
	}
	tr = remoteTiny(t, dir, r)
	defer tr.Close()
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines := trainLines(t, filepath.Join(dir, "tiny"))
	retried := 0.0
	for i, m := range lines {
		if v, ok := m["retried"].(float64); ok {
			retried += v
		}
		if m["errors"].(float64) != 0 {
			t.Errorf("iteration %d: %v errored episodes", i+1, m["errors"])
		}
	}
	if r1, _ := lines[1]["retried"].(float64); retried == 0 || r1 == 0 {
		t.Fatalf("retried %v in iteration 2, %v in all: the server was not killed mid-iteration", lines[1]["retried"], retried)
	}
	want := withoutRetried(t, filepath.Join(straight, "tiny"))
	got := withoutRetried(t, filepath.Join(dir, "tiny"))
	if len(got) != len(want) {
		t.Fatalf("%d iterations, want %d", len(got), len(want))
	}
	for i := range want {
		if !jsonEqualMaps(got[i], want[i]) {
			t.Errorf("iteration %d differs from the run without a fault:\n got %v\nwant %v", i+1, got[i], want[i])
		}
	}
}

// jsonEqualMaps compares two decoded JSON objects.
func jsonEqualMaps(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// A server that stays dead: the iteration where no episode can run stops the run with a message
// saying so, even when faults.max_error_share allows every episode to fail.
func TestRemoteServerDeadStopsTheRun(t *testing.T) {
	r := newRemoteServer(t)
	tr := remoteTiny(t, t.TempDir(), r, "faults.max_error_share=1", "faults.retries=1", "env.connect_retries=0")
	defer tr.Close()
	tr.afterIteration = func() {
		if tr.iter == 1 {
			r.kill()
		}
	}
	_, err := tr.Run(context.Background())
	if !errors.Is(err, ErrAborted) || !strings.Contains(err.Error(), "iteration 2") || !strings.Contains(err.Error(), "no episode could run") {
		t.Fatalf("error %v, want iteration 2 aborted because no episode could run", err)
	}
}

// A stop signal while the collector waits for a dead server takes effect at once (not after the
// retries, which would take minutes here): the run stops with ErrInterrupted and a checkpoint of
// the last complete iteration, and resuming it once the server is back ends exactly where a run
// without the interruption ends.
func TestInterruptWhileWaitingOnRemote(t *testing.T) {
	straight := t.TempDir()
	sets := []string{"faults.retries=100", "env.capacity_wait=3600"}
	r := newRemoteServer(t)
	tr := remoteTiny(t, straight, r, sets...)
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	tr.Close()
	want, err := os.ReadFile(filepath.Join(straight, "tiny", rundir.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	r = newRemoteServer(t)
	tr = remoteTiny(t, dir, r, sets...)
	ctx, cancel := context.WithCancel(context.Background())
	tr.afterIteration = func() {
		if tr.iter == 1 {
			r.kill()
			time.AfterFunc(time.Second, cancel)
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := tr.Run(ctx)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrInterrupted) {
			t.Fatalf("error %v, want ErrInterrupted", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not stop within a minute of the signal")
	}
	tr.Close()
	if _, err := os.Stat(rundir.CheckpointPath(filepath.Join(dir, "tiny"), 1)); err != nil {
		t.Fatalf("no checkpoint of iteration 1: %v", err)
	}
	r.restart(0)
	tr, err = New(tinyConfig(t, dir, remoteSets(r, sets...)...), Options{Out: io.Discard, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "tiny", rundir.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("resumed metrics differ from the straight run's:\n got %s\nwant %s", got, want)
	}
}

// graftrl eval of a remote run whose env fails every step: every episode fails, and the
// evaluation is an error naming the count and the first failure, not a success rate of 0.
func TestEvaluateRunAllEpisodesFailed(t *testing.T) {
	r := newRemoteServer(t)
	dir := t.TempDir()
	tr := remoteTiny(t, dir, r, "iterations=2", "checkpoint.every=1", "faults.retries=0")
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	run := tr.Dir()
	tr.Close()
	if _, err := EvaluateRun(run, "", Options{Quiet: true, Out: io.Discard}); err != nil {
		t.Fatalf("eval with a healthy server: %v", err)
	}
	r.failSteps.Store(true)
	m, err := EvaluateRun(run, "", Options{Quiet: true, Out: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "all 8 episodes failed, so nothing was evaluated (the first: ") ||
		!strings.Contains(err.Error(), "the env's step failed") {
		t.Fatalf("eval when every step fails: metrics %v, error %v; want all 8 episodes (2 panels × 2 tasks, greedy and sampled) failed", m, err)
	}
}
