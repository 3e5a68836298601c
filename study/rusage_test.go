package study

import (
	"runtime"
	"testing"
	"time"
)

// selfCPU counts this process's CPU time in seconds: busy work of 50 ms shows in it, and no more
// than the wall time on every core. Systems with no process times report 0 and skip.
func TestSelfCPU(t *testing.T) {
	before, start := selfCPU(), time.Now()
	x := 1.0
	for time.Since(start) < 50*time.Millisecond {
		for i := 0; i < 1000; i++ {
			x = x*1.0000001 + 1e-9
		}
	}
	wall := time.Since(start).Seconds()
	after := selfCPU()
	if after == 0 && runtime.GOOS != "linux" {
		t.Skipf("no process CPU time on %s", runtime.GOOS)
	}
	if d := after - before; d < 0.01 || d > wall*float64(runtime.NumCPU())+0.1 {
		t.Errorf("selfCPU grew by %.3f s over %.3f s of busy wall time (x %v)", d, wall, x)
	}
}
