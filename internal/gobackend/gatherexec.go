package gobackend

import (
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
)

// The model gathers rows (token and position embeddings, the hidden states at action positions,
// the log-probabilities of the taken tokens) and its gradients scatter-add them back. The Go
// backend walks both value by value through generic index iterators (~8 % of a training step,
// pprof). The executors below handle that one form — float32 rows of a row-major operand picked
// by int32 index tuples over its leading axes — with whole-row copies and additions in the same
// order as the backend: gather clamps indices into range as it does, scatter adds each update
// row in index order. Anything else, including a scatter index out of range, goes to the
// backend's executor.
func installGather() {
	overrideExecutor(backends.OpTypeGather, execRowGather)
	overrideExecutor(backends.OpTypeScatterSum, execRowScatterSum)
}

// rowIndexing is a gather or scatter over rows: index tuples of length p (the last axis of the
// indices) address the operand's first p axes; each picks a row of rowSize values.
type rowIndexing struct {
	dims    []int   // the operand's first p dimensions
	rowSize int     // values per row: the product of the operand's remaining dimensions
	idx     []int32 // the index tuples, n·p values
	n       int     // number of tuples
}

// readRowIndexing checks that a node with the given index-vector axis, window (offset or update)
// axes, collapsed (inserted) axes and index-to-operand map is a row gather or scatter over an
// operand and indices of these shapes, and returns its layout.
func readRowIndexing(opDims, idxDims []int, indexVectorAxis int, window, collapsed, axisMap []int, idx []int32) (rowIndexing, bool) {
	q := len(idxDims)
	if q == 0 || indexVectorAxis != q-1 {
		return rowIndexing{}, false
	}
	p := idxDims[q-1]
	if p < 1 || p > len(opDims) || len(collapsed) != p || len(axisMap) != p || len(window) != len(opDims)-p {
		return rowIndexing{}, false
	}
	for j := range p {
		if collapsed[j] != j || axisMap[j] != j {
			return rowIndexing{}, false
		}
	}
	for j, a := range window {
		if a != q-1+j {
			return rowIndexing{}, false
		}
	}
	r := rowIndexing{dims: opDims[:p], rowSize: 1, idx: idx, n: len(idx) / p}
	for _, d := range opDims[p:] {
		r.rowSize *= d
	}
	return r, len(idx) == r.n*p
}

// row returns the operand row addressed by tuple t, each index clamped into its axis, and
// whether no index needed clamping.
func (r rowIndexing) row(t int) (row int, inRange bool) {
	p := len(r.dims)
	inRange = true
	for j, d := range r.dims {
		i := int(r.idx[t*p+j])
		if i < 0 || i >= d {
			inRange = false
			i = max(0, min(d-1, i))
		}
		row = row*d + i
	}
	return row, inRange
}

// float32AndIndices returns a float32 operand and int32 indices with their dimensions.
func float32AndIndices(b *simplego.Backend, x, idx *simplego.Buffer) (xs []float32, xDims []int, is []int32, iDims []int, ok bool) {
	xShape, err1 := b.BufferShape(x)
	iShape, err2 := b.BufferShape(idx)
	xAny, err3 := b.BufferData(x)
	iAny, err4 := b.BufferData(idx)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || xShape.DType != dtypes.Float32 || iShape.DType != dtypes.Int32 {
		return nil, nil, nil, nil, false
	}
	xs, ok1 := xAny.([]float32)
	is, ok2 := iAny.([]int32)
	if !ok1 || !ok2 || len(xs) != xShape.Size() || len(is) != iShape.Size() {
		return nil, nil, nil, nil, false
	}
	return xs, xShape.Dimensions, is, iShape.Dimensions, true
}

// execRowGather runs a Gather node of the row form: out[t] = operand[row(t)].
func execRowGather(b *simplego.Backend, node *simplego.Node, in []*simplego.Buffer, _ []bool) (*simplego.Buffer, bool) {
	if len(in) != 2 {
		return nil, false
	}
	x, xDims, idx, iDims, ok := float32AndIndices(b, in[0], in[1])
	if !ok {
		return nil, false
	}
	data, ok := nodeData(node)
	if !ok {
		return nil, false
	}
	axis, ok0 := nodeInt(data, "indexVectorAxis")
	offset, ok1 := nodeInts(data, "offsetOutputAxes")
	collapsed, ok2 := nodeInts(data, "collapsedSlicesAxes")
	axisMap, ok3 := nodeInts(data, "startIndexMap")
	sizes, ok4 := nodeInts(data, "sliceSizes")
	if !ok0 || !ok1 || !ok2 || !ok3 || !ok4 || len(sizes) != len(xDims) {
		return nil, false
	}
	r, ok := readRowIndexing(xDims, iDims, axis, offset, collapsed, axisMap, idx)
	if !ok {
		return nil, false
	}
	for j, s := range sizes { // whole rows: size 1 on the indexed axes, full on the others
		if j < len(r.dims) && s != 1 || j >= len(r.dims) && s != xDims[j] {
			return nil, false
		}
	}
	outShape, ok := readNodeShape(node)
	if !ok || outShape.DType != dtypes.Float32 || outShape.Size() != r.n*r.rowSize {
		return nil, false
	}
	out, dst, ok := newFloat32Buffer(b, outShape)
	if !ok {
		return nil, false
	}
	rs := r.rowSize
	for t := range r.n {
		row, _ := r.row(t)
		copy(dst[t*rs:(t+1)*rs], x[row*rs:(row+1)*rs])
	}
	return out, true
}

// execRowScatterSum runs a ScatterSum node of the row form: out = operand (the operand itself
// when owned), then out[row(t)] += updates[t] for t in order.
func execRowScatterSum(b *simplego.Backend, node *simplego.Node, in []*simplego.Buffer, owned []bool) (*simplego.Buffer, bool) {
	if len(in) != 3 {
		return nil, false
	}
	x, xDims, idx, iDims, ok := float32AndIndices(b, in[0], in[1])
	if !ok {
		return nil, false
	}
	uShape, err1 := b.BufferShape(in[2])
	uAny, err2 := b.BufferData(in[2])
	upd, ok1 := uAny.([]float32)
	if err1 != nil || err2 != nil || !ok1 || len(upd) != uShape.Size() {
		return nil, false
	}
	data, ok := nodeData(node)
	if !ok {
		return nil, false
	}
	axis, ok1 := nodeInt(data, "indexVectorAxis")
	window, ok2 := nodeInts(data, "updateWindowAxes")
	inserted, ok3 := nodeInts(data, "insertedWindowAxes")
	axisMap, ok4 := nodeInts(data, "scatterAxesToOperandAxes")
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return nil, false
	}
	r, ok := readRowIndexing(xDims, iDims, axis, window, inserted, axisMap, idx)
	if !ok || len(upd) != r.n*r.rowSize {
		return nil, false
	}
	rows := make([]int, r.n)
	for t := range rows {
		row, inRange := r.row(t)
		if !inRange {
			return nil, false
		}
		rows[t] = row
	}
	xShape, err := b.BufferShape(in[0])
	if err != nil {
		return nil, false
	}
	out, dst, ok := takeOrNewFloat32Buffer(b, in, owned, 0, xShape)
	if !ok {
		return nil, false
	}
	rs := r.rowSize
	copy(dst, x) // a no-op when the operand was taken over
	for t, row := range rows {
		addInPlace(dst[row*rs:(row+1)*rs], upd[t*rs:(t+1)*rs])
	}
	return out, true
}
