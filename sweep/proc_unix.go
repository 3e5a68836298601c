//go:build unix

package sweep

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// startInGroup puts the training process in its own process group, so that a Ctrl-C in the
// terminal reaches only the sweep (which forwards it), and so that the group can be signalled.
func startInGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = sysProcAttr()
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
}

// errLocked is returned by tryLock when another process holds the lock.
var errLocked = errors.New("locked by another process")

// tryLock takes an exclusive advisory lock on path (created if needed) without waiting. The
// lock is released when the returned file is closed or the process exits, however it exits.
func tryLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errLocked
		}
		return nil, err
	}
	return f, nil
}

// exitCode is the process's exit status, -1 when a signal killed it.
func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1
	}
	return ps.ExitCode()
}
