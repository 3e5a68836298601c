//go:build !amd64 || purego

package kernels

// expShiftedAVX512 is a stub that is never called (useAVX512 is false here).
func expShiftedAVX512(_ *float32, _ int, _ float32, _ *ExpConsts) {}

// geluAVX512 is a stub that is never called (useAVX512 is false here).
func geluAVX512(_ *float32, _ int, _ *ExpConsts) {}
