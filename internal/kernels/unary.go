package kernels

import (
	"math"
	"sync"
)

// Unary sets dst[i] = float32(scalar(float64(src[i]))) for every value of src, where kernel (one
// of ExpF32FMA, TanhF32FMA, LogisticF32FMA) computes scalar's values (math.Exp, math.Tanh,
// Logistic): with the kernel from the start where the CPU runs it and UnaryExact holds; where it
// stops (at a group of four it leaves to scalar, or at the last < 4 values) those values are
// computed with scalar and the kernel resumes after them. dst may be src.
func Unary(dst, src []float32, kernel func(dst, src *float32, n int) int, scalar func(float64) float64) {
	unary(dst, src, kernel, scalar, haveUnaryKernels && UnaryExact())
}

// unary is Unary with the kernel used or not as useKernel says.
func unary(dst, src []float32, kernel func(dst, src *float32, n int) int, scalar func(float64) float64, useKernel bool) {
	n := len(src)
	dst = dst[:n]
	for i := 0; i < n; {
		if n-i >= 4 && useKernel {
			i += kernel(&dst[i], &src[i], n-i)
		}
		for end := min(i+4, n); i < end; i++ {
			dst[i] = float32(scalar(float64(src[i])))
		}
	}
}

// Logistic is the Go backend's float64 logistic (execLogisticGeneric of gomlx v0.26.0), which
// LogisticF32FMA computes: 1/(1+e^−x) for x ≥ 0, e^x/(1+e^x) below.
func Logistic(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// UnaryExact reports whether the Exp, Tanh and Logistic kernels run here and give math's values
// (math.Exp, math.Tanh, Logistic), bit for bit, on values that reach every branch of those
// functions and the kernels' range limits: checked once, the first time it is asked. Where it is
// false (say, a toolchain that fuses the multiply-adds of math.Tanh) Unary computes with math.
func UnaryExact() bool { return unaryExact() }

// unaryExact is unaryKernelsMatchMath, run once.
var unaryExact = sync.OnceValue(unaryKernelsMatchMath)

// unaryKernelsMatchMath is UnaryExact's check.
func unaryKernelsMatchMath() bool {
	if !haveUnaryKernels {
		return false
	}
	var probe []float32
	for _, v := range []float64{0, 1e-30, 1e-7, 0.1, 0.5, 0.624, 0.625, 0.626, 1, 2, 10, 44, 44.02, 45,
		87, 88.7, 89, 100, 103.9, 104, 150, 699, 700, 701, 745, 1e30} {
		probe = append(probe, float32(v), float32(-v))
	}
	probe = append(probe, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.SmallestNonzeroFloat32)
	for i := range 4096 {
		probe = append(probe, float32(i-2048)/64)
	}
	got := make([]float32, len(probe))
	for _, k := range []struct {
		kernel func(dst, src *float32, n int) int
		math   func(float64) float64
	}{{ExpF32FMA, math.Exp}, {TanhF32FMA, math.Tanh}, {LogisticF32FMA, Logistic}} {
		unary(got, probe, k.kernel, k.math, true)
		for i, x := range probe {
			if w := float32(k.math(float64(x))); math.Float32bits(got[i]) != math.Float32bits(w) {
				return false
			}
		}
	}
	return true
}
