//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/graftrl/graftrl/rundir"
)

// The first SIGINT or SIGTERM stops `graftrl compare` at once, here while it waits on a run's
// metrics.jsonl (a named pipe that gives nothing): exit status 75, as an interrupted sweep,
// "interrupted" in the message, and no report, partial or whole.
func TestCompareStopsOnFirstSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			root := t.TempDir()
			runs := writeRunsDir(t, root, "0.5")
			fifo := filepath.Join(runs, "maze-graft-s2", rundir.MetricsFile)
			if err := os.Remove(fifo); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			report := filepath.Join(root, "report")
			type result struct {
				stderr string
				err    error
			}
			done := make(chan result, 1)
			go func() {
				_, stderr, err := cliErr(t, "compare", runs, "--out", report)
				done <- result{stderr, err}
			}()
			// A non-blocking open for writing succeeds once compare has opened the pipe to read
			// it: from then on compare waits on it, its signal handler in place.
			var w *os.File
			for deadline := time.Now().Add(20 * time.Second); w == nil; {
				f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
				switch {
				case err == nil:
					w = f
				case time.Now().After(deadline):
					t.Fatalf("compare did not open %s: %v", fifo, err)
				default:
					time.Sleep(5 * time.Millisecond)
				}
			}
			defer w.Close()
			if err := syscall.Kill(os.Getpid(), sig); err != nil {
				t.Fatal(err)
			}
			select {
			case r := <-done:
				if code := exitStatus(r.err); code != exitInterrupted || r.err == nil || !strings.Contains(r.err.Error(), "interrupted") ||
					!strings.Contains(r.stderr, "stopping the comparison") {
					t.Errorf("exit %d, error %v, stderr %q; want exit %d, interrupted", code, r.err, r.stderr, exitInterrupted)
				}
			case <-time.After(20 * time.Second):
				w.Close() // end the pipe, so that compare does not wait on it for ever
				<-done
				t.Fatalf("compare still running 20 s after %s", sig)
			}
			if entries, _ := os.ReadDir(root); len(entries) != 1 {
				t.Errorf("an interrupted comparison left files beside the runs: %v", entries)
			}
		})
	}
}
