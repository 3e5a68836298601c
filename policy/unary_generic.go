//go:build !amd64 || purego

package policy

// haveUnaryKernels is false where no assembly kernel exists: the backend's executors run.
const haveUnaryKernels = false

func expF32FMA(_, _ *float32, _ int) int  { return 0 }
func tanhF32FMA(_, _ *float32, _ int) int { return 0 }
