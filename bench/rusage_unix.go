//go:build unix

package bench

import (
	"runtime"
	"syscall"
)

// processPeakRSS is the process's peak resident set size in bytes from getrusage, in the unit
// this system counts it in (maxrssBytes); 0 where it is unknown.
func processPeakRSS() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	b, _ := maxrssBytes(runtime.GOOS, int64(ru.Maxrss))
	return b
}
