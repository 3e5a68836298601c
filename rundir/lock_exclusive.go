//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly || windows

package rundir

import (
	"errors"
	"fmt"
	"os"
)

// errWouldBlock is what lockFile answers, without waiting, when another open file holds the lock.
var errWouldBlock = errors.New("lock held")

// Lock takes an exclusive lock on path (flock on Linux, macOS and the BSDs; LockFileEx on
// Windows), created if absent, waiting for the process that holds it, and records this process's
// PID in it. The returned function releases it; so does the process's exit, however it exits.
// Both kinds of lock belong to an open file, not to the process, so a second Lock of the same
// path in the same process waits as another process would.
func Lock(path string) (release func(), err error) {
	return lock(path, true)
}

// TryLock is Lock without waiting: when another process holds the lock it returns ErrLocked at
// once.
func TryLock(path string) (release func(), err error) {
	return lock(path, false)
}

func lock(path string, wait bool) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f, wait); err != nil {
		f.Close()
		if errors.Is(err, errWouldBlock) {
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
		if wait {
			return lock(path, wait)
		}
		return nil, ErrLocked
	}
	writeHolder(f)
	return unlocker(f), nil
}

func unlocker(f *os.File) func() {
	return func() {
		_ = unlockFile(f)
		f.Close()
	}
}
