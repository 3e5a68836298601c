//go:build unix

package compare

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/graftrl/graftrl/internal/limits"
	"github.com/graftrl/graftrl/rundir"
)

// fifoRun is a run directory whose metrics.jsonl is a named pipe; the caller writes into it.
func fifoRun(t *testing.T) (dir, fifo string) {
	t.Helper()
	dir = simpleRun("pipe").write(t, t.TempDir())
	fifo = filepath.Join(dir, rundir.MetricsFile)
	if err := os.Remove(fifo); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return dir, fifo
}

// openWriter opens the pipe for writing once a reader has opened it (a non-blocking open
// succeeds only then), so that the caller knows the reader is waiting on it.
func openWriter(t *testing.T, fifo string, within time.Duration) *os.File {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			return f
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reader opened %s within %s: %v", fifo, within, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A metrics.jsonl that never ends — valid lines, forever — stops at the metrics limit with an
// error naming the file and the limit.
func TestLoadRunEndlessMetrics(t *testing.T) {
	dir, fifo := fifoRun(t)
	t.Setenv(limits.Metrics.Env(), "1MiB")
	done := make(chan error, 1)
	go func() {
		_, err := LoadRun(dir)
		done <- err
	}()
	w := openWriter(t, fifo, 10*time.Second)
	// (The package's tests have a helper called close, so the writer stops on a context.)
	writing, stop := context.WithCancel(context.Background())
	go func() {
		line := []byte(`{"type":"train","iter":1,"env_steps":100,"tokens":300,"success":0.5}` + "\n")
		for writing.Err() == nil {
			if _, err := w.Write(line); err != nil && !errors.Is(err, syscall.EAGAIN) {
				return // the reader is gone
			}
		}
	}()
	defer func() { stop(); w.Close() }()
	select {
	case err := <-done:
		if !errors.Is(err, limits.ErrTooLarge) || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "1MiB") {
			t.Errorf("endless metrics.jsonl: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("LoadRun still reading an endless metrics.jsonl after 30 s")
	}
}

// Cancelling the context ends a read that waits on a metrics.jsonl giving nothing (a pipe, a
// stalled file system): LoadRunContext returns at once with ErrInterrupted.
func TestLoadRunContextStopsWaitingRead(t *testing.T) {
	dir, fifo := fifoRun(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := LoadRunsContext(ctx, []string{dir})
		done <- err
	}()
	w := openWriter(t, fifo, 10*time.Second)
	defer w.Close()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), fifo) {
			t.Errorf("cancelled read: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("LoadRunsContext still waiting on the pipe 10 s after the cancel")
	}
}
