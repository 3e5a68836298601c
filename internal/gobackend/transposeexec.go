package gobackend

import (
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
)

// The Go backend transposes with an iterator that computes every output's index value by
// value (~5 % of a training step, pprof: attention heads in and out of [batch, heads, tokens,
// head_dim] and their gradients). The executor below copies float32 transposes row by row with
// transposeInto instead; a transpose only moves values, so results are the same.
func installTranspose() {
	overrideExecutor(backends.OpTypeTranspose, execTransposeFloat32)
}

// execTransposeFloat32 runs a float32 Transpose node; ok is false when it is not one (or its
// operand does not match its permutation).
func execTransposeFloat32(b *simplego.Backend, node *simplego.Node, in []*simplego.Buffer, _ []bool) (*simplego.Buffer, bool) {
	if len(in) != 1 {
		return nil, false
	}
	outShape, perm, ok := readShapeAndAxes(node)
	if !ok || outShape.DType != dtypes.Float32 {
		return nil, false
	}
	opShape, err1 := b.BufferShape(in[0])
	opAny, err2 := b.BufferData(in[0])
	x, isF32 := opAny.([]float32)
	if err1 != nil || err2 != nil || !isF32 || len(perm) != opShape.Rank() || len(x) != opShape.Size() || outShape.Size() != len(x) {
		return nil, false
	}
	seen := make([]bool, len(perm))
	for i, a := range perm {
		if a < 0 || a >= len(perm) || seen[a] || outShape.Dimensions[i] != opShape.Dimensions[a] {
			return nil, false
		}
		seen[a] = true
	}
	out, values, ok := newFloat32Buffer(b, outShape)
	if !ok {
		return nil, false
	}
	transposeInto(values, x, opShape.Dimensions, perm)
	return out, true
}

// transposeInto writes x (row-major with dims) with its axes permuted by perm into out.
func transposeInto(out, x []float32, dims, perm []int) {
	rank := len(dims)
	if rank == 0 || len(x) == 0 || keepsOrder(dims, perm) {
		copy(out, x)
		return
	}
	strides := make([]int, rank)
	s := 1
	for a := rank - 1; a >= 0; a-- {
		strides[a] = s
		s *= dims[a]
	}
	outDims := make([]int, rank)
	inStride := make([]int, rank) // input stride of each output axis
	for i, a := range perm {
		outDims[i] = dims[a]
		inStride[i] = strides[a]
	}
	// Output index idx reads x[Σ idx[i]·inStride[i]]: a broadcast that skips no input axis
	// (rows along the innermost axis are strided copies, split across the worker pool).
	broadcastFloat32(out, outDims, x, inStride)
}

// keepsOrder reports whether permuting axes by perm leaves the row-major memory order unchanged:
// true when the axes of size > 1 stay in increasing order.
func keepsOrder(dims, perm []int) bool {
	prev := -1
	for _, a := range perm {
		if dims[a] == 1 {
			continue
		}
		if a < prev {
			return false
		}
		prev = a
	}
	return true
}
