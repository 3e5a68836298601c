//go:build amd64 && !purego

package policy

import "golang.org/x/sys/cpu"

// haveUnaryKernels reports whether the Exp and Tanh kernels of unary_amd64.s can run: they need
// AVX2 and FMA3, the latter also being what makes math.Exp take the FMA path they reproduce.
var haveUnaryKernels = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// expF32FMA is the Exp kernel of unary_amd64.s; see expFloat32.
//
//go:noescape
func expF32FMA(dst, src *float32, n int) int

// tanhF32FMA is the Tanh kernel of unary_amd64.s; see tanhFloat32.
//
//go:noescape
func tanhF32FMA(dst, src *float32, n int) int
