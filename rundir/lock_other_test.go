//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || windows)

package rundir

import (
	"errors"
	"path/filepath"
	"testing"
)

// Where no file lock exists, Lock and TryLock refuse with errors.ErrUnsupported instead of
// letting two writers share a run.
func TestLockUnsupported(t *testing.T) {
	path := filepath.Join(t.TempDir(), LockFile)
	if _, err := Lock(path); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Lock: %v, want errors.ErrUnsupported", err)
	}
	if _, err := TryLock(path); !errors.Is(err, errors.ErrUnsupported) || errors.Is(err, ErrLocked) {
		t.Errorf("TryLock: %v, want errors.ErrUnsupported", err)
	}
}
