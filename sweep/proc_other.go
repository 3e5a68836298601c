//go:build unix && !linux

package sweep

import "syscall"

// sysProcAttr: a process group of its own (no parent-death signal outside Linux).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
