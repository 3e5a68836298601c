package gobackend

import (
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"

	"github.com/graftrl/graftrl/internal/kernels"
	"github.com/graftrl/graftrl/internal/workers"
)

// The Go backend reduces through a multi-axis output iterator advanced once per input element.
// The model's reductions are over trailing axes (softmax maxima, sums over a row) or leading
// axes (bias and scale gradients summed over tokens), where plain loops do. The executors below
// handle those float32 cases and visit the input in the same order, accumulating into each
// output from the same initial value (0 for sums, the lowest float32 for maxima), so the results
// are bit-identical to the backend's. Other cases go to the backend's executor.
func installReduce() {
	for _, op := range []backends.OpType{backends.OpTypeReduceMax, backends.OpTypeReduceSum} {
		isMax := op == backends.OpTypeReduceMax
		overrideExecutor(op, func(b *simplego.Backend, node *simplego.Node, in []*simplego.Buffer, _ []bool) (*simplego.Buffer, bool) {
			return execReduceFloat32(b, node, in, isMax)
		})
	}
}

// execReduceFloat32 runs a float32 ReduceMax (isMax) or ReduceSum over leading or trailing axes;
// ok is false for anything else.
func execReduceFloat32(b *simplego.Backend, node *simplego.Node, in []*simplego.Buffer, isMax bool) (*simplego.Buffer, bool) {
	if len(in) != 1 {
		return nil, false
	}
	outShape, axes, ok := readShapeAndAxes(node)
	if !ok || len(axes) == 0 || outShape.DType != dtypes.Float32 {
		return nil, false
	}
	inShape, err1 := b.BufferShape(in[0])
	xAny, err2 := b.BufferData(in[0])
	x, isF32 := xAny.([]float32)
	if err1 != nil || err2 != nil || !isF32 || len(x) != inShape.Size() {
		return nil, false
	}
	outer, inner, trailing, ok := reduceSplit(inShape.Dimensions, axes)
	want := inner
	if trailing {
		want = outer
	}
	if !ok || outShape.Size() != want {
		return nil, false
	}
	out, o, ok := newFloat32Buffer(b, outShape)
	if !ok {
		return nil, false
	}
	reduceRows(o, x, outer, inner, trailing, isMax)
	return out, true
}

// reduceSplit views dims as [outer, inner]: with trailing, the reduced axes are the last ones
// (inner is reduced); otherwise they are the first ones (outer is reduced).
func reduceSplit(dims, axes []int) (outer, inner int, trailing, ok bool) {
	reduced := make([]bool, len(dims))
	for _, a := range axes {
		if a < 0 || a >= len(dims) || reduced[a] {
			return 0, 0, false, false
		}
		reduced[a] = true
	}
	k := len(axes)
	prefix, suffix := true, true
	for a := range dims {
		if reduced[a] != (a < k) {
			prefix = false
		}
		if reduced[a] != (a >= len(dims)-k) {
			suffix = false
		}
	}
	split := len(dims) - k // trailing: dims[:split] kept
	if !suffix {
		if !prefix {
			return 0, 0, false, false
		}
		split = k
	}
	outer, inner = 1, 1
	for a, d := range dims {
		if a < split {
			outer *= d
		} else {
			inner *= d
		}
	}
	return outer, inner, suffix, true
}

// reduceRows reduces x, [outer, inner] row-major, over inner (trailing) or over outer, into out,
// in the input's order.
func reduceRows(out, x []float32, outer, inner int, trailing, isMax bool) {
	if trailing {
		workers.ParallelRange(outer, max(1, elementGrain/max(1, inner)), 1, func(lo, hi int) {
			reduceTrailing(out[lo:hi], x[lo*inner:hi*inner], inner, isMax)
		})
		return
	}
	workers.ParallelRange(inner, max(1, elementGrain/max(1, outer)), 16, func(lo, hi int) {
		reduceLeading(out[lo:hi], x, outer, inner, lo, isMax)
	})
}

// reduceInit is the value a reduction starts from.
func reduceInit(isMax bool) float32 {
	if isMax {
		return dtypes.Float32.LowestValue().(float32)
	}
	return 0
}

// reduceTrailing sets out[r] to the reduction of row r of x (rows of inner values). Sums run
// eight rows at a time (sumRows8): each row's sum is its own chain of additions in order, as the
// backend's, and eight chains keep the adder busy where one waits out every addition's latency.
func reduceTrailing(out, x []float32, inner int, isMax bool) {
	init := reduceInit(isMax)
	r := 0
	if !isMax {
		for ; r+8 <= len(out); r += 8 {
			sumRows8((*[8]float32)(out[r:r+8]), x[r*inner:(r+8)*inner], inner)
		}
	}
	for ; r < len(out); r++ {
		row := x[r*inner : (r+1)*inner]
		acc := init
		if isMax {
			acc = maxRow(init, row)
		} else {
			for _, v := range row {
				acc += v
			}
		}
		out[r] = acc
	}
}

// sumRows8 sets out[j] to the in-order sum, from 0, of row j of x (eight rows of inner values).
func sumRows8(out *[8]float32, x []float32, inner int) {
	x0, x1, x2, x3 := x[:inner], x[inner:2*inner], x[2*inner:3*inner], x[3*inner:4*inner]
	x4, x5, x6, x7 := x[4*inner:5*inner], x[5*inner:6*inner], x[6*inner:7*inner], x[7*inner:8*inner]
	var a0, a1, a2, a3, a4, a5, a6, a7 float32
	for i := range x0 {
		a0 += x0[i]
		a1 += x1[i]
		a2 += x2[i]
		a3 += x3[i]
		a4 += x4[i]
		a5 += x5[i]
		a6 += x6[i]
		a7 += x7[i]
	}
	*out = [8]float32{a0, a1, a2, a3, a4, a5, a6, a7}
}

// maxRow is max(init, row...). Go's max is associative and commutative (a NaN wins, +0 beats
// −0), so four interleaved running maxima give the in-order result with four comparisons in
// flight instead of one.
func maxRow(init float32, row []float32) float32 {
	a, b, c, d := init, init, init, init
	j := 0
	for ; j+4 <= len(row); j += 4 {
		a = max(a, row[j])
		b = max(b, row[j+1])
		c = max(c, row[j+2])
		d = max(d, row[j+3])
	}
	for ; j < len(row); j++ {
		a = max(a, row[j])
	}
	return max(max(a, b), max(c, d))
}

// reduceLeading sets out[j] to the reduction over the outer rows of x (rows of inner values) of
// column col+j, adding the rows in order. Sums of eight columns or more go down the rows in
// registers (kernels.SumRowsF32AVX, the same additions): added row by row into out, each row's
// call and out's loads and stores cost more than the additions, and the bias gradients of a
// T128×B64 step summed at 4–8 GB/s.
func reduceLeading(out, x []float32, outer, inner, col int, isMax bool) {
	if n8 := len(out) &^ 7; !isMax && useAVX && n8 > 0 && outer > 0 {
		_ = x[(outer-1)*inner+col+n8-1] // the last value read
		kernels.SumRowsF32AVX(&out[0], &x[col], outer, inner, n8)
		if n8 == len(out) {
			return
		}
		out, col = out[n8:], col+n8 // the last 1–7 columns: below, row by row
	}
	init := reduceInit(isMax)
	for j := range out {
		out[j] = init
	}
	for r := range outer {
		row := x[r*inner+col : r*inner+col+len(out)]
		if isMax {
			for j, v := range row {
				out[j] = max(out[j], v)
			}
		} else {
			addInPlace(out, row)
		}
	}
}
