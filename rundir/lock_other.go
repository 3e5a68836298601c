//go:build !unix

package rundir

import (
	"fmt"
	"os"
)

// Lock only creates the lock file and records this process in it where advisory locks are not
// available: there is no exclusion outside Unix.
func Lock(path string) (release func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	writeHolder(f)
	return func() { f.Close() }, nil
}

// TryLock is Lock (no exclusion outside Unix: it never returns ErrLocked).
func TryLock(path string) (release func(), err error) { return Lock(path) }
