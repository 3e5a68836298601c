package gobackend

import (
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"

	"github.com/graftrl/graftrl/internal/kernels"
	"github.com/graftrl/graftrl/internal/workers"
)

// Float32 Mul, Add, Sub and Div of same-shape operands, or of a tensor and a scalar, are the next
// largest costs of a training step on the Go backend after DotGeneral (~20 %, pprof: GELU, layer
// norm, softmax and their gradients over [batch, tokens, d_ff] and [batch, heads, tokens, tokens]
// activations). Where the CPU has AVX the executors below compute them eight lanes at a time;
// every lane is the same IEEE single-precision operation as the backend's Go loop, so results are
// bit-identical. Other shapes and dtypes go to the backend's executor.
func installBinary() {
	if !useAVX {
		return
	}
	for i, op := range []backends.OpType{backends.OpTypeMul, backends.OpTypeAdd, backends.OpTypeSub, backends.OpTypeDiv} {
		bop := binaryOp(i) // opMul, opAdd, opSub, opDiv
		overrideExecutor(op, func(b *simplego.Backend, _ *simplego.Node, in []*simplego.Buffer, owned []bool) (*simplego.Buffer, bool) {
			return execBinaryFloat32(b, in, owned, bop)
		})
	}
}

// binaryOp is an element-wise float32 operation with an AVX kernel.
type binaryOp int

const (
	opMul binaryOp = iota
	opAdd
	opSub
	opDiv
)

// commutative reports whether the operands of op may be swapped.
func (op binaryOp) commutative() bool { return op == opMul || op == opAdd }

// apply is op on two values, as the backend's Go loop computes it.
func (op binaryOp) apply(a, b float32) float32 {
	switch op {
	case opMul:
		return a * b
	case opAdd:
		return a + b
	case opSub:
		return a - b
	default:
		return a / b
	}
}

// kernels returns op's vector-vector and vector-scalar kernels.
func (op binaryOp) kernels() (func(dst, a, b *float32, n int), func(dst, a *float32, c float32, n int)) {
	switch op {
	case opMul:
		return kernels.MulF32AVX, kernels.MulScalarF32AVX
	case opAdd:
		return kernels.AddF32AVX, kernels.AddScalarF32AVX
	case opSub:
		return kernels.SubF32AVX, kernels.SubScalarF32AVX
	default:
		return kernels.DivF32AVX, kernels.DivScalarF32AVX
	}
}

// execBinaryFloat32 runs a float32 op whose operands have equal shapes, or where the right
// operand (for Mul and Add either one) holds a single value; ok is false for anything else. As the
// backend's own executors do, it writes into an owned operand of the output's shape (the right
// one first) rather than a new buffer.
func execBinaryFloat32(b *simplego.Backend, in []*simplego.Buffer, owned []bool, op binaryOp) (*simplego.Buffer, bool) {
	if len(in) != 2 || len(owned) != 2 {
		return nil, false
	}
	ls, err1 := b.BufferShape(in[0])
	rs, err2 := b.BufferShape(in[1])
	la, err3 := b.BufferData(in[0])
	ra, err4 := b.BufferData(in[1])
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return nil, false
	}
	l, ok1 := la.([]float32)
	r, ok2 := ra.([]float32)
	if !ok1 || !ok2 || len(l) != ls.Size() || len(r) != rs.Size() {
		return nil, false
	}
	take := -1 // the operand whose buffer may hold the output
	switch {
	case ls.Equal(rs):
		if owned[1] {
			take = 1
		} else if owned[0] {
			take = 0
		}
	case len(r) == 1 && len(l) > 1 && (rs.Rank() == 0 || rs.Rank() == ls.Rank()):
		if owned[0] {
			take = 0
		}
	case op.commutative() && len(l) == 1 && len(r) > 1 && (ls.Rank() == 0 || ls.Rank() == rs.Rank()):
		l, r, ls = r, l, rs // the scalar goes right
		if owned[1] {
			take = 1
		}
	default:
		return nil, false
	}
	out, values, ok := takeOrNewFloat32Buffer(b, in, owned, take, ls)
	if !ok {
		return nil, false
	}
	workers.ParallelRange(len(l), elementGrain, 16, func(lo, hi int) {
		rr := r
		if len(r) > 1 {
			rr = r[lo:hi]
		}
		binaryFloat32(values[lo:hi], l[lo:hi], rr, op)
	})
	return out, true
}

// elementGrain is the fewest values of an element-wise operation worth a share of the worker
// pool (a few microseconds of work).
const elementGrain = 1 << 14

// binaryFloat32 sets dst[i] = l[i] op r[i]; r is either as long as l or a single value.
func binaryFloat32(dst, l, r []float32, op binaryOp) {
	n := len(l)
	dst, head := dst[:n], n&^15
	vector, scalar := op.kernels()
	if len(r) == 1 {
		c := r[0]
		if head > 0 {
			scalar(&dst[0], &l[0], c, head)
		}
		for i := head; i < n; i++ {
			dst[i] = op.apply(l[i], c)
		}
		return
	}
	r = r[:n]
	if head > 0 {
		vector(&dst[0], &l[0], &r[0], head)
	}
	for i := head; i < n; i++ {
		dst[i] = op.apply(l[i], r[i])
	}
}

// addInPlace sets dst[i] += src[i] for i < len(dst): the same additions as the loop, eight lanes
// at a time where the CPU has AVX.
func addInPlace(dst, src []float32) {
	if useAVX {
		binaryFloat32(dst, dst, src, opAdd)
		return
	}
	src = src[:len(dst)]
	for i := range dst {
		dst[i] += src[i]
	}
}
