//go:build !amd64 || purego

package policy

// useAVX is false where no assembly kernel exists: the element-wise executors run Go loops.
const useAVX = false

func mulF32AVX(_, _, _ *float32, _ int) { panic("policy: no AVX kernel on this platform") }
func addF32AVX(_, _, _ *float32, _ int) { panic("policy: no AVX kernel on this platform") }
func mulScalarF32AVX(_, _ *float32, _ float32, _ int) {
	panic("policy: no AVX kernel on this platform")
}
func addScalarF32AVX(_, _ *float32, _ float32, _ int) {
	panic("policy: no AVX kernel on this platform")
}
