//go:build !amd64 || purego

package kernels

// useFMA is false where no assembly kernel exists: MatmulPanels runs the Go loop.
const useFMA = false

func matmulPanelsFMA(*float32, int, *float32, int, int, int, *[4]float32, int, int, *float32, int) {
	panic("kernels: no FMA kernel on this platform")
}

// useAVX512 is false where no assembly kernel exists.
const useAVX512 = false

func matmulGroupsAVX512(*float32, int, *float32, int, int, int, int, *float32, int, int, int, *float32, int, *float32, int, int) {
	panic("kernels: no AVX-512 kernel on this platform")
}

func matmulGroupsFMA(*float32, int, *float32, int, int, int, int, *float32, int, int, int, *float32, int, *float32, int, int) {
	panic("kernels: no FMA kernel on this platform")
}

// GatherF32AVX512 is a stub: HasAVX512 is false here.
func GatherF32AVX512(*float32, *float32, *int32, int, int) {
	panic("kernels: no AVX-512 kernel on this platform")
}

func attendScoresFMA(*float32, *float32, *float32, int, int, int, float32) {
	panic("kernels: no FMA kernel on this platform")
}

func attendValuesFMA(*float32, *float32, *float32, int, int, int) {
	panic("kernels: no FMA kernel on this platform")
}
