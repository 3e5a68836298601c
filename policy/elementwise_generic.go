//go:build !amd64 || purego

package policy

// useAVX is false where no assembly kernel exists: the element-wise executors run Go loops.
const useAVX = false

func noAVX() { panic("policy: no AVX kernel on this platform") }

func mulF32AVX(_, _, _ *float32, _ int)               { noAVX() }
func addF32AVX(_, _, _ *float32, _ int)               { noAVX() }
func subF32AVX(_, _, _ *float32, _ int)               { noAVX() }
func divF32AVX(_, _, _ *float32, _ int)               { noAVX() }
func mulScalarF32AVX(_, _ *float32, _ float32, _ int) { noAVX() }
func addScalarF32AVX(_, _ *float32, _ float32, _ int) { noAVX() }
func subScalarF32AVX(_, _ *float32, _ float32, _ int) { noAVX() }
func divScalarF32AVX(_, _ *float32, _ float32, _ int) { noAVX() }
func fillF32AVX(_ *float32, _ float32, _ int)         { noAVX() }
