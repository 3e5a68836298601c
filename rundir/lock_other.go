//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || windows)

package rundir

import (
	"errors"
	"fmt"
	"runtime"
)

// On the other systems (Solaris, illumos, AIX, Plan 9, wasm) graftrl has no lock that belongs
// to an open file: fcntl's record locks belong to the process and are dropped when any of its
// descriptors of the file closes, and a lock file created with O_EXCL outlives a killed holder,
// so that the run could not be resumed without removing it by hand. Rather than train with no
// exclusion, the lock is refused: one writer per run is a promise or nothing.

// Lock refuses on this system: it has no file lock graftrl can hold (see above). The error wraps
// errors.ErrUnsupported.
func Lock(path string) (release func(), err error) {
	return nil, fmt.Errorf("lock %s: graftrl keeps one writer per run with flock (Linux, macOS, the BSDs) or LockFileEx (Windows), and %s has neither: %w",
		path, runtime.GOOS, errors.ErrUnsupported)
}

// TryLock is Lock: it refuses on this system, never returning ErrLocked.
func TryLock(path string) (release func(), err error) { return Lock(path) }
