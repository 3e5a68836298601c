//go:build unix

package rundir

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Lock takes an exclusive advisory lock (flock) on path, created if absent, waiting for the
// process that holds it, and records this process's PID in it. The returned function releases
// it; so does the process's exit, however it exits.
func Lock(path string) (release func(), err error) {
	return lock(path, syscall.LOCK_EX)
}

// TryLock is Lock without waiting: when another process holds the lock it returns ErrLocked at
// once.
func TryLock(path string) (release func(), err error) {
	return lock(path, syscall.LOCK_EX|syscall.LOCK_NB)
}

func lock(path string, how int) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	// The holder before may have removed the file (a run it abandoned) after this process
	// opened it: a lock on the removed file guards nothing.
	held, errHeld := f.Stat()
	named, errNamed := os.Stat(path)
	if errHeld != nil || errNamed != nil || !os.SameFile(held, named) {
		unlocker(f)()
		if how&syscall.LOCK_NB == 0 {
			return lock(path, how)
		}
		return nil, ErrLocked
	}
	writeHolder(f)
	return unlocker(f), nil
}

func unlocker(f *os.File) func() {
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
}
