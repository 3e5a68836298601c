package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// stopSignals ask graftrl to stop: Ctrl-C in a terminal, SIGTERM from a scheduler (Slurm's time
// limit and scancel) or kill.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// notifyStop returns a copy of parent that the first stop signal cancels, after first (when not
// nil) has run with it. A later signal runs again; a nil again instead restores the default action
// when the first signal arrives, so that a second one ends graftrl at once. stop releases the
// signals and the context; it may be called more than once.
func notifyStop(parent context.Context, first, again func(os.Signal)) (ctx context.Context, stop func()) {
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, stopSignals...)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			if again == nil {
				signal.Stop(sigs)
			}
			if first != nil {
				first(sig)
			}
			cancel()
		case <-done:
			return
		}
		if again == nil {
			return
		}
		for {
			select {
			case sig := <-sigs:
				again(sig)
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
		fmt.Fprintln(log, "graftrl: stopping the runs (each stops after its current iteration); Ctrl-C again to kill them now")
	}, nil)
}
