package trainer

import (
	"fmt"

	"github.com/graftrl/graftrl/rundir"
)

// DirError is a run directory, or a warm start's folder, that cannot take the work asked of it:
// another process holds its lock, it already holds a run, it cannot be resumed with this config
// or to this length, it cannot be written. It is decided before any work starts; commands exit
// with status 2 on it.
type DirError struct {
	// Dir is the directory.
	Dir string
	// Msg says what is wrong and the ways out.
	Msg string
	// PID is the process that holds the directory's lock (0 when the error is not about the
	// lock, or the holder has not recorded itself yet).
	PID int
}

func (e *DirError) Error() string { return e.Msg }

// lockedError is the refusal of a directory whose lock file path another process holds; what
// names the directory and the work.
func lockedError(dir, path, what string) *DirError {
	pid := rundir.LockHolder(path)
	holder := "another process"
	if pid > 0 {
		holder = fmt.Sprintf("another process (PID %d)", pid)
	}
	return &DirError{Dir: dir, PID: pid, Msg: fmt.Sprintf("%s is in use: %s holds its lock %s; wait for it to finish, or stop it",
		what, holder, path)}
}
