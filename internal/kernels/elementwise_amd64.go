//go:build amd64 && !purego

package kernels

import "golang.org/x/sys/cpu"

// useAVX reports whether the element-wise kernels of elementwise_amd64.s can run (AVX enabled by
// the OS).
var useAVX = cpu.X86.HasAVX

// The kernels of elementwise_amd64.s: dst[i] = a[i] op b[i] (or op c) for i < n, n a multiple
// of 16.

// MulF32AVX sets dst[i] = a[i] · b[i].
//
//go:noescape
func MulF32AVX(dst, a, b *float32, n int)

// AddF32AVX sets dst[i] = a[i] + b[i].
//
//go:noescape
func AddF32AVX(dst, a, b *float32, n int)

// SubF32AVX sets dst[i] = a[i] − b[i].
//
//go:noescape
func SubF32AVX(dst, a, b *float32, n int)

// DivF32AVX sets dst[i] = a[i] / b[i].
//
//go:noescape
func DivF32AVX(dst, a, b *float32, n int)

// MulScalarF32AVX sets dst[i] = a[i] · c.
//
//go:noescape
func MulScalarF32AVX(dst, a *float32, c float32, n int)

// AddScalarF32AVX sets dst[i] = a[i] + c.
//
//go:noescape
func AddScalarF32AVX(dst, a *float32, c float32, n int)

// SubScalarF32AVX sets dst[i] = a[i] − c.
//
//go:noescape
func SubScalarF32AVX(dst, a *float32, c float32, n int)

// DivScalarF32AVX sets dst[i] = a[i] / c.
//
//go:noescape
func DivScalarF32AVX(dst, a *float32, c float32, n int)

// FillF32AVX sets dst[i] = c for i < n, n a multiple of 16.
//
//go:noescape
func FillF32AVX(dst *float32, c float32, n int)

// SqrtF32AVX sets dst[i] = √a[i].
//
//go:noescape
func SqrtF32AVX(dst, a *float32, n int)

// SumRowsF32AVX sets dst[j] to the in-order sum from +0 of src[r·ld + j] over r < rows, for j <
// n, n a multiple of 8: the columns of rows rows of ld values, summed down.
//
//go:noescape
func SumRowsF32AVX(dst, src *float32, rows, ld, n int)

// TransposeF32AVX sets dst[i·ldd + j] = src[j·lds + i] for i < rows and j < cols, both multiples
// of 8.
//
//go:noescape
func TransposeF32AVX(dst *float32, ldd int, src *float32, lds, rows, cols int)
