//go:build unix

package trainer

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on path (created if absent), waiting for other
// processes that hold it, and records this process's PID in it; the returned function releases it.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	writeHolder(f)
	return unlocker(f), nil
}

// errHeld is tryLockFile's answer when another process holds the lock.
var errHeld = errors.New("held by another process")

// tryLockFile is lockFile without waiting: when another process holds the lock it returns
// errHeld at once. The lock is released by the returned function, or when the process exits,
// however it exits.
func tryLockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errHeld
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	// The holder before may have removed the file (a run it abandoned) after this process
	// opened it: a lock on the removed file guards nothing.
	held, errHeldFile := f.Stat()
	named, errNamed := os.Stat(path)
	if errHeldFile != nil || errNamed != nil || !os.SameFile(held, named) {
		unlocker(f)()
		return nil, errHeld
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
