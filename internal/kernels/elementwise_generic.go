//go:build !amd64 || purego

package kernels

// useAVX is false where no assembly kernel exists: callers run Go loops.
const useAVX = false

func noAVX() { panic("kernels: no AVX kernel on this platform") }

// MulF32AVX is a stub: HasAVX is false here.
func MulF32AVX(_, _, _ *float32, _ int) { noAVX() }

// AddF32AVX is a stub: HasAVX is false here.
func AddF32AVX(_, _, _ *float32, _ int) { noAVX() }

// SubF32AVX is a stub: HasAVX is false here.
func SubF32AVX(_, _, _ *float32, _ int) { noAVX() }

// DivF32AVX is a stub: HasAVX is false here.
func DivF32AVX(_, _, _ *float32, _ int) { noAVX() }

// MulScalarF32AVX is a stub: HasAVX is false here.
func MulScalarF32AVX(_, _ *float32, _ float32, _ int) { noAVX() }

// AddScalarF32AVX is a stub: HasAVX is false here.
func AddScalarF32AVX(_, _ *float32, _ float32, _ int) { noAVX() }

// SubScalarF32AVX is a stub: HasAVX is false here.
func SubScalarF32AVX(_, _ *float32, _ float32, _ int) { noAVX() }

// DivScalarF32AVX is a stub: HasAVX is false here.
func DivScalarF32AVX(_, _ *float32, _ float32, _ int) { noAVX() }

// FillF32AVX is a stub: HasAVX is false here.
func FillF32AVX(_ *float32, _ float32, _ int) { noAVX() }

// SqrtF32AVX is a stub: HasAVX is false here.
func SqrtF32AVX(_, _ *float32, _ int) { noAVX() }

// SumRowsF32AVX is a stub: HasAVX is false here.
func SumRowsF32AVX(_, _ *float32, _, _, _ int) { noAVX() }

// TransposeF32AVX is a stub: HasAVX is false here.
func TransposeF32AVX(_ *float32, _ int, _ *float32, _, _, _ int) { noAVX() }
