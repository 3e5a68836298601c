//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package rundir

import (
	"errors"
	"os"
	"syscall"
)

// These are the systems whose syscall package has Flock. Solaris, illumos and AIX have only
// fcntl's record locks, which belong to the process and vanish when any of its descriptors of
// the file is closed (LockHolder's read would drop them): lock_other.go.

// lockFile takes flock's exclusive lock on f, waiting for it when wait is set.
func lockFile(f *os.File, wait bool) error {
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	err := syscall.Flock(int(f.Fd()), how)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errWouldBlock
	}
	return err
}

func unlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
