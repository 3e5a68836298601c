//go:build amd64 && !purego

package kernels

// fmaLoopAVX512 is the AVX-512 loop of peak_amd64.s; see FMALoop.
//
//go:noescape
func fmaLoopAVX512(n int)

// fmaLoopAVX2 is the AVX2 loop of peak_amd64.s; see FMALoop.
//
//go:noescape
func fmaLoopAVX2(n int)
