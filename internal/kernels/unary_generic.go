//go:build !amd64 || purego

package kernels

// haveUnaryKernels is false where no assembly kernel exists: callers use math.Exp and math.Tanh.
const haveUnaryKernels = false

// ExpF32FMA is a stub that handles no element (HasUnaryKernels is false here).
func ExpF32FMA(_, _ *float32, _ int) int { return 0 }

// TanhF32FMA is a stub that handles no element (HasUnaryKernels is false here).
func TanhF32FMA(_, _ *float32, _ int) int { return 0 }

// LogisticF32FMA is a stub that handles no element (HasUnaryKernels is false here).
func LogisticF32FMA(_, _ *float32, _ int) int { return 0 }
