//go:build windows

package study

import (
	"syscall"
	"time"
)

// selfCPU is this process's user + kernel CPU time in seconds (GetProcessTimes, Windows's
// getrusage), 0 when unknown.
func selfCPU() float64 {
	self, err := syscall.GetCurrentProcess()
	if err != nil {
		return 0
	}
	var created, exited, kernel, user syscall.Filetime
	if syscall.GetProcessTimes(self, &created, &exited, &kernel, &user) != nil {
		return 0
	}
	// Filetime counts 100-ns intervals; as durations its Nanoseconds would add the 1601 epoch.
	ticks := func(ft syscall.Filetime) int64 { return int64(ft.HighDateTime)<<32 | int64(ft.LowDateTime) }
	return time.Duration((ticks(kernel) + ticks(user)) * 100).Seconds()
}
