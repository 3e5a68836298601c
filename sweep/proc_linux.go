//go:build linux

package sweep

import "syscall"

// sysProcAttr: a process group of its own, and SIGKILL when the sweep dies, so that a sweep
// killed with SIGKILL leaves no training process behind to race with the next attempt.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
