//go:build amd64 && !purego

package policy

import "golang.org/x/sys/cpu"

// useAVX reports whether the element-wise kernels of elementwise_amd64.s can run (AVX enabled by
// the OS).
var useAVX = cpu.X86.HasAVX

// The kernels of elementwise_amd64.s: dst[i] = a[i] op b[i] (or op c) for i < n, n a multiple
// of 16.

//go:noescape
func mulF32AVX(dst, a, b *float32, n int)

//go:noescape
func addF32AVX(dst, a, b *float32, n int)

//go:noescape
func subF32AVX(dst, a, b *float32, n int)

//go:noescape
func divF32AVX(dst, a, b *float32, n int)

//go:noescape
func mulScalarF32AVX(dst, a *float32, c float32, n int)

//go:noescape
func addScalarF32AVX(dst, a *float32, c float32, n int)

//go:noescape
func subScalarF32AVX(dst, a *float32, c float32, n int)

//go:noescape
func divScalarF32AVX(dst, a *float32, c float32, n int)

// fillF32AVX sets dst[i] = c for i < n, n a multiple of 16.
//
//go:noescape
func fillF32AVX(dst *float32, c float32, n int)
