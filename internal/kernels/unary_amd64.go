//go:build amd64 && !purego

package kernels

import "golang.org/x/sys/cpu"

// haveUnaryKernels reports whether the Exp and Tanh kernels of unary_amd64.s can run: they need
// AVX2 and FMA3, the latter also being what makes math.Exp take the FMA path they reproduce.
var haveUnaryKernels = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// ExpF32FMA is the Exp kernel of unary_amd64.s; see expFloat32 in internal/gobackend.
//
//go:noescape
func ExpF32FMA(dst, src *float32, n int) int

// TanhF32FMA is the Tanh kernel of unary_amd64.s; see tanhFloat32 in internal/gobackend.
//
//go:noescape
func TanhF32FMA(dst, src *float32, n int) int

// LogisticF32FMA is the Logistic kernel of unary_amd64.s; see logisticFloat32 in
// internal/gobackend.
//
//go:noescape
func LogisticF32FMA(dst, src *float32, n int) int
