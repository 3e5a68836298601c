//go:build !unix

package bench

// processPeakRSS is 0, unknown: outside Unix there is no getrusage (Windows keeps the peak
// working set only behind psapi, which graftrl does not load).
func processPeakRSS() int64 { return 0 }
