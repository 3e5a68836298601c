//go:build !unix

package trainer

import (
	"errors"
	"os"
)

// lockFile does nothing where advisory locks are not available: concurrent runs that need the
// same warm start then each compute it, and the first to finish provides it.
func lockFile(string) (func(), error) { return func() {}, nil }

// errHeld is tryLockFile's answer when another process holds the lock (never, outside Unix).
var errHeld = errors.New("held by another process")

// tryLockFile only creates the lock file and records this process in it: there is no exclusion
// outside Unix.
func tryLockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	writeHolder(f)
	return func() { f.Close() }, nil
}
