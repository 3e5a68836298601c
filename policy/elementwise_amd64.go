//go:build amd64 && !purego

package policy

import "golang.org/x/sys/cpu"

// useAVX reports whether the element-wise kernels of elementwise_amd64.s can run (AVX enabled by
// the OS).
var useAVX = cpu.X86.HasAVX

//go:noescape
func mulF32AVX(dst, a, b *float32, n int)

//go:noescape
func addF32AVX(dst, a, b *float32, n int)

//go:noescape
func mulScalarF32AVX(dst, a *float32, c float32, n int)

//go:noescape
func addScalarF32AVX(dst, a *float32, c float32, n int)
