package rundir

import (
	"errors"
	"os"
	"strconv"
	"strings"
)

// ErrLocked is TryLock's answer when another process holds the lock.
var ErrLocked = errors.New("held by another process")

// LockHolder reads the PID that a lock's holder wrote into the lock file at path (0 when there
// is none).
func LockHolder(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid < 1 {
		return 0
	}
	return pid
}

// writeHolder records this process's PID in the lock file f it holds.
func writeHolder(f *os.File) {
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
}
