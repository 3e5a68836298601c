//go:build !unix

package sweep

import (
	"errors"
	"os"
	"os/exec"
)

func startInGroup(cmd *exec.Cmd) {
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
}

var errLocked = errors.New("locked by another process")

// tryLock without flock: the lock file is only created (no exclusion outside Unix).
func tryLock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
}

func exitCode(ps *os.ProcessState) int { return ps.ExitCode() }
