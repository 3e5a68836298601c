//go:build !unix

package sweep

import (
	"os"
	"os/exec"
)

func startInGroup(cmd *exec.Cmd) {
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
}

func exitCode(ps *os.ProcessState) int { return ps.ExitCode() }
