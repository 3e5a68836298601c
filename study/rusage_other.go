//go:build !unix && !windows

package study

// selfCPU is 0, unknown: these systems (Plan 9, wasm) have neither getrusage nor
// GetProcessTimes, so the study's notes count no CPU time for the study process itself.
func selfCPU() float64 { return 0 }
