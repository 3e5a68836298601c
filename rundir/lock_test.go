//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly || windows

package rundir

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A held lock refuses a second holder at once (flock locks belong to an open file, so a second
// open in the same process conflicts as another process would), names its holder's PID, and is
// free again once released.
func TestTryLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), LockFile)
	release, err := TryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TryLock(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("second TryLock: %v, want ErrLocked", err)
	}
	if pid := LockHolder(path); pid != os.Getpid() {
		t.Errorf("LockHolder = %d, want %d", pid, os.Getpid())
	}
	release()
	release2, err := TryLock(path)
	if err != nil {
		t.Fatalf("TryLock after release: %v", err)
	}
	release2()
	if pid := LockHolder(filepath.Join(t.TempDir(), "none")); pid != 0 {
		t.Errorf("LockHolder of a missing file = %d, want 0", pid)
	}
}
