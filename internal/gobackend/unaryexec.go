package gobackend

import (
	"math"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"

	"github.com/graftrl/graftrl/internal/kernels"
	"github.com/graftrl/graftrl/internal/workers"
)

// Exp (softmax and log-softmax, forward and backward) and Tanh (GELU) cost ~18 % of a training
// step on the Go backend (pprof at the quickstart shape), Logistic (SwiGLU's σ) ~7 % of
// SmolLM2's: the backend's executors call math.Exp and math.Tanh value by value, on one core
// (Sqrt, Adam's, likewise, and Neg, on one core and into a new buffer; their executors below run
// everywhere). Where the CPU
// has AVX2 and FMA, the executors below compute the very same float64 functions four lanes at a
// time (unary_amd64.s); every output is bit-identical to the backend's. At start-up the kernels
// are checked against math on values covering every branch; on any difference (say, a toolchain
// that fuses the multiply-adds of math.Tanh) the backend's executors stay in place.
func installUnary() {
	overrideExecutor(backends.OpTypeSqrt, func(b *simplego.Backend, _ *simplego.Node, in []*simplego.Buffer, owned []bool) (*simplego.Buffer, bool) {
		return execUnaryFloat32(b, in, owned, sqrtFloat32)
	})
	overrideExecutor(backends.OpTypeNeg, func(b *simplego.Backend, _ *simplego.Node, in []*simplego.Buffer, owned []bool) (*simplego.Buffer, bool) {
		return execUnaryFloat32(b, in, owned, negFloat32)
	})
	if !kernels.UnaryExact() {
		return
	}
	for op, f := range map[backends.OpType]func(dst, src []float32){
		backends.OpTypeExp: expFloat32, backends.OpTypeTanh: tanhFloat32, backends.OpTypeLogistic: logisticFloat32} {
		overrideExecutor(op, func(b *simplego.Backend, _ *simplego.Node, in []*simplego.Buffer, owned []bool) (*simplego.Buffer, bool) {
			return execUnaryFloat32(b, in, owned, f)
		})
	}
}

// execUnaryFloat32 runs f on a float32 tensor into a buffer of the same shape (the input's own
// when owned); ok is false for anything else.
func execUnaryFloat32(b *simplego.Backend, in []*simplego.Buffer, owned []bool, f func(dst, src []float32)) (*simplego.Buffer, bool) {
	if len(in) != 1 {
		return nil, false
	}
	s, err1 := b.BufferShape(in[0])
	xa, err2 := b.BufferData(in[0])
	if err1 != nil || err2 != nil {
		return nil, false
	}
	x, ok := xa.([]float32)
	if !ok || len(x) != s.Size() {
		return nil, false
	}
	out, values, ok := takeOrNewFloat32Buffer(b, in, owned, 0, s)
	if !ok {
		return nil, false
	}
	workers.ParallelRange(len(x), unaryGrain, 4, func(lo, hi int) { f(values[lo:hi], x[lo:hi]) })
	return out, true
}

// unaryGrain is the fewest values of Exp or Tanh worth a share of the worker pool.
const unaryGrain = 1 << 12

// expFloat32 sets dst[i] = float32(math.Exp(float64(src[i]))), with the kernel where it applies.

func expFloat32(dst, src []float32) {
	kernels.Unary(dst, src, kernels.ExpF32FMA, math.Exp)
}

// tanhFloat32 sets dst[i] = float32(math.Tanh(float64(src[i]))), with the kernel where it applies.
func tanhFloat32(dst, src []float32) {
	kernels.Unary(dst, src, kernels.TanhF32FMA, math.Tanh)
}

// sqrtFloat32 sets dst[i] = float32(math.Sqrt(float64(src[i]))), the Go backend's square root
// (Adam's), sixteen values at a time where the CPU has AVX: VSQRTPS's correctly rounded float32
// root is that value (rounding the float64 root to float32 rounds correctly).
func sqrtFloat32(dst, src []float32) {
	n := len(src)
	dst, head := dst[:n], n&^15
	if useAVX && head > 0 {
		kernels.SqrtF32AVX(&dst[0], &src[0], head)
	} else {
		head = 0
	}
	for i := head; i < n; i++ {
		dst[i] = float32(math.Sqrt(float64(src[i])))
	}
}

// negFloat32 sets dst[i] = −src[i] (the sign flipped, NaN's too, as the backend's executor does).
func negFloat32(dst, src []float32) {
	dst = dst[:len(src)]
	for i, x := range src {
		dst[i] = -x
	}
}

// logisticFloat32 sets dst[i] = float32(kernels.Logistic(float64(src[i]))), the Go backend's logistic
// (SwiGLU's σ), with the kernel where it applies.
func logisticFloat32(dst, src []float32) {
	kernels.Unary(dst, src, kernels.LogisticF32FMA, kernels.Logistic)
}
