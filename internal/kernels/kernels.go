// Package kernels holds graftrl's float32 compute kernels for the CPU: FMA matrix products over
// 4-wide column panels (panels.go), the product over 16-column groups with a bias and an add
// epilogue for the host decoder (AVX-512, with its gather, in groups_amd64.s; two 8-lane halves
// on AVX2 in groups_fma_amd64.s; their shared macros in groups_amd64.h), element-wise arithmetic
// (elementwise_amd64.s), Exp, Tanh and Logistic bit-identical to Go's math package
// (unary_amd64.s; Unary runs one over a slice, math where the kernel leaves values), and the
// host decoder's shifted exponential and GELU sixteen lanes wide (softexp_amd64.s), and one
// attention head's scores and weighted values over a KV cache (attend_amd64.s). Each assembly
// kernel has a Go declaration and, on other platforms or with the purego tag, a stub that is
// never called because its Has… function reports false. The Go-backend executors
// (internal/gobackend) and the host inference engine (policy/host) are its two users; it knows
// about neither, nor about GoMLX.
package kernels

// HasFMA reports whether MatmulPanels runs its FMA kernel (AVX with FMA3, enabled by the OS).
func HasFMA() bool { return useFMA }

// HasGroups reports whether MatmulGroups can run: on its AVX-512 kernel, or on its 8-lane FMA
// kernel where the CPU has FMA but no AVX-512.
func HasGroups() bool { return useFMA }

// HasAVX512 reports whether GatherF32AVX512 can run and MatmulGroups runs sixteen lanes wide
// (AVX-512F besides FMA).
func HasAVX512() bool { return useAVX512 }

// HasAVX reports whether the element-wise kernels (MulF32AVX … FillF32AVX, SqrtF32AVX,
// SumRowsF32AVX, TransposeF32AVX) can run.
func HasAVX() bool { return useAVX }

// HasUnaryKernels reports whether ExpF32FMA and TanhF32FMA can run (AVX2 and FMA3).
func HasUnaryKernels() bool { return haveUnaryKernels }
