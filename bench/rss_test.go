package bench

import (
	"runtime"
	"testing"
)

// ru_maxrss is kilobytes on Linux and the BSDs, bytes on macOS; the systems that do not keep it
// report it as unknown rather than a wrong figure.
func TestMaxrssBytes(t *testing.T) {
	for _, tc := range []struct {
		goos   string
		maxrss int64
		want   int64
		ok     bool
	}{
		{"linux", 65536, 64 << 20, true},
		{"android", 1, 1024, true},
		{"freebsd", 65536, 64 << 20, true},
		{"netbsd", 65536, 64 << 20, true},
		{"openbsd", 65536, 64 << 20, true},
		{"dragonfly", 65536, 64 << 20, true},
		{"darwin", 64 << 20, 64 << 20, true},
		{"ios", 64 << 20, 64 << 20, true},
		{"solaris", 65536, 0, false},
		{"illumos", 65536, 0, false},
		{"aix", 65536, 0, false},
		{"windows", 65536, 0, false},
	} {
		if got, ok := maxrssBytes(tc.goos, tc.maxrss); got != tc.want || ok != tc.ok {
			t.Errorf("maxrssBytes(%q, %d) = %d, %v; want %d, %v", tc.goos, tc.maxrss, got, ok, tc.want, tc.ok)
		}
	}
}

// The process's peak from getrusage, after 64 MiB were allocated and every page of it written,
// is at least 64 MiB and far below a terabyte: a figure in the wrong unit would be 1024 times
// too small or too large. Linux must tell it; elsewhere an unknown peak (0) skips.
func TestProcessPeakRSSPlausible(t *testing.T) {
	const size = 64 << 20
	buf := make([]byte, size)
	for i := 0; i < size; i += 4096 {
		buf[i] = 1
	}
	peak := processPeakRSS()
	runtime.KeepAlive(buf)
	if peak == 0 && runtime.GOOS != "linux" {
		t.Skipf("no peak RSS on %s", runtime.GOOS)
	}
	if peak < size || peak >= 1<<40 {
		t.Fatalf("peak RSS %d bytes (%.1f MiB) after touching 64 MiB: want [64 MiB, 1 TiB)", peak, float64(peak)/(1<<20))
	}
	// peakRSS reads VmHWM on Linux; both counts of the same peak agree on the unit.
	if hwm := peakRSS(); hwm < size || hwm >= 1<<40 {
		t.Fatalf("peakRSS %d bytes after touching 64 MiB: want [64 MiB, 1 TiB)", hwm)
	}
}
