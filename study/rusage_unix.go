//go:build unix

package study

import (
	"syscall"
	"time"
)

// selfCPU is this process's user + system CPU time in seconds (getrusage), 0 when unknown.
func selfCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
