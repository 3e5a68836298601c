//go:build windows

package sweep

import (
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"
)

// startInGroup starts the training process in a process group of its own, so that the sweep
// can stop it with a Ctrl-Break aimed at that group alone: Go delivers it to the child as
// os.Interrupt, which makes it write a checkpoint and exit as a Ctrl-C would on Unix. Windows
// has no signals to send a process, so where no console is shared with the child (the event
// cannot be delivered) the child is killed at once rather than after the grace period.
func startInGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
	cmd.Cancel = func() error {
		if err := windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(cmd.Process.Pid)); err != nil {
			return cmd.Process.Kill()
		}
		return nil
	}
}

// exitCode is the process's exit status. Windows does not tell a killed process from one that
// exited with that status (TerminateProcess sets the code), so it is never -1 here.
func exitCode(ps *os.ProcessState) int { return ps.ExitCode() }
