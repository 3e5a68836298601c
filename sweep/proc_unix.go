//go:build unix

package sweep

import (
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

// exitCode is the process's exit status, -1 when a signal killed it.
func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1
	}
	return ps.ExitCode()
}
