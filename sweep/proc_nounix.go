//go:build !unix && !windows

package sweep

import (
	"os"
	"os/exec"
)

// startInGroup asks the training process to stop with os.Interrupt when the sweep is cancelled:
// systems outside Unix and Windows (Plan 9) have no process groups to put it in.
func startInGroup(cmd *exec.Cmd) {
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
}

// exitCode is the process's exit status.
func exitCode(ps *os.ProcessState) int { return ps.ExitCode() }
