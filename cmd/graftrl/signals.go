package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// stopSignals ask graftrl to stop: Ctrl-C in a terminal, SIGTERM from a scheduler (Slurm's time
// limit and scancel) or kill.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// sameRequestWindow is how long after the first stop signal a repeat of that same signal is
// taken for the first request delivered again rather than for a second request. One request
// often arrives twice: GNU timeout(1), unless run with --foreground, sends its signal to the
// command and then to the command's process group, which holds the command again, a few
// microseconds later; a wrapper that forwards a Ctrl-C the process also got from the terminal
// does the same. The kernel merges the two only while the first is still pending, so a process
// often sees both. A second request to quit at once comes from someone who read the first one's
// message, which takes longer than this; a Ctrl-C pressed twice within it counts once.
const sameRequestWindow = time.Second

// notifyStop returns a copy of parent that the first stop signal cancels, after first (when not
// nil) has run with it. A later signal runs again; a nil again instead restores the default
// action, so that a later signal ends graftrl at once. A repeat of the first signal within
// sameRequestWindow of it is the same request and does neither; another stop signal in that
// window is a new one. stop releases the signals and the context; it may be called more than once.
func notifyStop(parent context.Context, first, again func(os.Signal)) (ctx context.Context, stop func()) {
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	// signal.Notify drops a signal when this buffer is full, so the receiver below only times and
	// sorts signals: a callback that blocks (a full stderr pipe) must not delay the time a repeat
	// is seen at, which would make a repeat look like a new request.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, stopSignals...)
	done := make(chan struct{})
	requests := make(chan os.Signal, 4)
	go func() {
		var firstSig os.Signal
		var firstAt time.Time
		var windowEnd <-chan time.Time
		for {
			select {
			case sig := <-sigs:
				now := time.Now()
				switch {
				case firstSig == nil:
					firstSig, firstAt = sig, now
					if again == nil {
						timer := time.NewTimer(sameRequestWindow)
						defer timer.Stop()
						windowEnd = timer.C
					}
				case sig == firstSig && now.Sub(firstAt) < sameRequestWindow:
					continue // the first request delivered again
				case again == nil:
					// A new request within the window: the default action, as it would
					// have had after the window.
					signal.Stop(sigs)
					if p, err := os.FindProcess(os.Getpid()); err == nil {
						p.Signal(sig)
					}
					return
				}
				select {
				case requests <- sig:
				case <-done:
					return
				}
			case <-windowEnd:
				signal.Stop(sigs) // from now on a stop signal takes its default action
				return
			case <-done:
				return
			}
		}
	}()
	go func() {
		stopped := false
		for {
			select {
			case sig := <-requests:
				if stopped {
					again(sig) // the receiver forwards later requests only when again is set
					continue
				}
				stopped = true
				if first != nil {
					first(sig)
				}
				cancel()
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(sigs)
			close(done)
			cancel()
		})
	}
}

// interruptContext is notifyStop for the commands that run training processes (sweep, compare
// --run, headtohead): the first signal stops the runs, each after its current iteration; a second
// one kills graftrl at once (the training processes die with it).
func interruptContext(parent context.Context, log io.Writer) (context.Context, func()) {
	return notifyStop(parent, func(os.Signal) {
		fmt.Fprintln(log, "graftrl: stopping the runs (each stops after its current iteration); Ctrl-C again, a second or more later, to kill them now")
	}, nil)
}
