package gobackend

import (
	"math"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"

	"github.com/graftrl/graftrl/internal/kernels"
	"github.com/graftrl/graftrl/internal/workers"
)

// After DotGeneral, BroadcastInDim is the Go backend's largest single cost in a training step
// (~13 %, pprof): its generic executor advances a multi-axis iterator for every output element.
// The executor below does the same data movement for float32 with whole-row copies and fills:
// biases repeated over tokens, per-row statistics spread over a row. It moves values without
// arithmetic, so results are bit-identical to the backend's own executor. Other dtypes, and
// nodes whose parameters cannot be read, go to the backend's executor, as in dotexec.go.
func installBroadcast() {
	overrideExecutor(backends.OpTypeBroadcastInDim, execBroadcastInDimFloat32)
}

// execBroadcastInDimFloat32 runs a float32 BroadcastInDim node; ok is false when it is not one
// (or its operand does not match its parameters).
func execBroadcastInDimFloat32(b *simplego.Backend, node *simplego.Node, in []*simplego.Buffer, _ []bool) (*simplego.Buffer, bool) {
	if len(in) != 1 {
		return nil, false
	}
	outShape, axes, ok := readShapeAndAxes(node)
	if !ok || outShape.DType != dtypes.Float32 {
		return nil, false
	}
	opShape, err1 := b.BufferShape(in[0])
	opAny, err2 := b.BufferData(in[0])
	x, isF32 := opAny.([]float32)
	if err1 != nil || err2 != nil || !isF32 || len(axes) != opShape.Rank() || len(x) != opShape.Size() {
		return nil, false
	}
	strides, ok := broadcastStrides(outShape.Dimensions, opShape.Dimensions, axes)
	if !ok {
		return nil, false
	}
	out, values, ok := newFloat32Buffer(b, outShape)
	if !ok {
		return nil, false
	}
	broadcastFloat32(values, outShape.Dimensions, x, strides)
	return out, true
}

// broadcastStrides gives, for every output axis, the operand stride that moving along it takes:
// the operand axis's row-major stride where the operand axis has the output's size, 0 where the
// axis is broadcast (not an operand axis, or an operand axis of size 1).
func broadcastStrides(outDims, opDims, axes []int) ([]int, bool) {
	strides := make([]int, len(outDims))
	s := 1
	for i := len(opDims) - 1; i >= 0; i-- {
		a := axes[i]
		if a < 0 || a >= len(outDims) {
			return nil, false
		}
		switch opDims[i] {
		case outDims[a]:
			if opDims[i] > 1 {
				strides[a] = s
			}
		case 1:
		default:
			return nil, false
		}
		s *= opDims[i]
	}
	return strides, true
}

// broadcastFloat32 writes out (row-major with outDims) with out[idx] = x[Σ idx[a]·strides[a]].
// The innermost axis is a copy (stride 1), a fill (stride 0) or a strided gather.
func broadcastFloat32(out []float32, outDims []int, x []float32, strides []int) {
	if len(out) == 0 {
		return
	}
	outDims, strides = mergeAxes(outDims, strides)
	if len(outDims) == 0 {
		out[0] = x[0]
		return
	}
	inner := outDims[len(outDims)-1]
	if inner == 0 {
		return
	}
	if t := len(outDims) - 2; useAVX && !useAVX512 && t >= 0 && strides[t] == 1 && strides[t+1] > 1 &&
		outDims[t] >= 8 && inner >= 8 {
		broadcastTransposed(out, outDims, x, strides)
		return
	}
	rows := len(out) / inner
	workers.ParallelRange(rows, max(1, elementGrain/inner), 1, func(r0, r1 int) {
		broadcastRows(out, outDims, x, strides, r0, r1)
	})
}

// broadcastTransposed is broadcastFloat32 where the last two axes transpose x (strides 1 and s >
// 1, a transposition or a permutation of heads): out[p][i][j] = x[base(p) + i + j·s] for each
// plane p over the axes before them. Without AVX-512's gather, the rows of a plane go eight at a
// time through kernels.TransposeF32AVX (blocks of 8 × 8 transposed in registers): value by
// value, each read a stride apart, the loop ran at a value every few cycles.
func broadcastTransposed(out []float32, outDims []int, x []float32, strides []int) {
	t := len(outDims) - 2
	rows, cols, s := outDims[t], outDims[t+1], strides[t+1]
	cols8 := cols &^ 7
	bands := (rows + 7) / 8 // of eight rows, the last maybe fewer
	planes := len(out) / (rows * cols)
	workers.ParallelRange(planes*bands, max(1, elementGrain/(8*cols)), 1, func(lo, hi int) {
		for u := lo; u < hi; u++ {
			p, i0 := u/bands, 8*(u%bands)
			i1 := min(i0+8, rows)
			base := 0
			for a, q := t-1, p; a >= 0; a-- {
				base += q % outDims[a] * strides[a]
				q /= outDims[a]
			}
			dst := out[(p*rows+i0)*cols : (p*rows+i1)*cols]
			j0 := 0
			if i1-i0 == 8 {
				_ = x[base+i0+7+(cols8-1)*s] // the last value read
				kernels.TransposeF32AVX(&dst[0], cols, &x[base+i0], s, 8, cols8)
				j0 = cols8
			}
			for i := i0; i < i1; i++ {
				row := dst[(i-i0)*cols : (i-i0+1)*cols]
				for j := j0; j < cols; j++ {
					row[j] = x[base+i+j*s]
				}
			}
		}
	})
}

// mergeAxes drops the axes of size 1 and merges each axis into the next where one stride walks
// both (stride[a] = stride[a+1]·dims[a+1], a run of copies or of fills), so that rows are as
// long as the layout allows: a scalar broadcast to [n, 1] is one fill of n values, not n rows of
// one.
func mergeAxes(dims, strides []int) ([]int, []int) {
	var d, s []int
	for a, n := range dims {
		if n == 1 {
			continue
		}
		if k := len(d) - 1; k >= 0 && s[k] == strides[a]*n {
			d[k] *= n
			s[k] = strides[a]
			continue
		}
		d, s = append(d, n), append(s, strides[a])
	}
	return d, s
}

// broadcastRows fills rows r0..r1−1 (runs along the last axis) of broadcastFloat32's output.
func broadcastRows(out []float32, outDims []int, x []float32, strides []int, r0, r1 int) {
	last := len(outDims) - 1
	inner, innerStride := outDims[last], strides[last]
	idx := make([]int, last)
	// Strided rows of 16 values or more go 16 at a time through one AVX-512 gather.
	var idx16 [16]int32
	gather := useAVX512 && innerStride > 1 && inner >= 16 && 16*innerStride <= math.MaxInt32/4
	for j := range idx16 {
		idx16[j] = int32(j * innerStride)
	}
	for a, r := last-1, r0; a >= 0; a-- {
		idx[a] = r % outDims[a]
		r /= outDims[a]
	}
	for o := r0 * inner; o < r1*inner; o += inner {
		base := 0
		for a, i := range idx {
			base += i * strides[a]
		}
		row := out[o : o+inner]
		switch innerStride {
		case 1:
			copy(row, x[base:base+inner])
		case 0:
			v, j := x[base], 0
			if useAVX && inner >= 16 {
				j = inner &^ 15
				kernels.FillF32AVX(&row[0], v, j)
			}
			for ; j < inner; j++ {
				row[j] = v
			}
		default:
			j := 0
			if gather {
				_ = x[base+(inner-1)*innerStride] // the last value read
				j = inner &^ 15
				kernels.GatherF32AVX512(&row[0], &x[base], &idx16[0], j/16, 64*innerStride)
			}
			for ; j < inner; j++ {
				row[j] = x[base+j*innerStride]
			}
		}
		for a := last - 1; a >= 0; a-- {
			idx[a]++
			if idx[a] < outDims[a] {
				break
			}
			idx[a] = 0
		}
	}
}
