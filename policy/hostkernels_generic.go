//go:build !amd64 || purego

package policy

// useFMA is false where no assembly kernel exists: matmulPanels runs the Go loop.
const useFMA = false

func matmulPanelsFMA(*float32, int, *float32, int, int, int, *[4]float32, int, int, *float32, int) {
	panic("policy: no FMA kernel on this platform")
}

// useAVX512 is false where no assembly kernel exists.
const useAVX512 = false

func matmulGroupsAVX512(*float32, int, *float32, int, int, int, int, *float32, int, int, int) {
	panic("policy: no AVX-512 kernel on this platform")
}

func gatherF32AVX512(*float32, *float32, *int32, int, int) {
	panic("policy: no AVX-512 kernel on this platform")
}
