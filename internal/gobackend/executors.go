package gobackend

import (
	"errors"
	"sync"
	_ "unsafe" // for go:linkname

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/graftrl/graftrl/internal/gomlxfields"
)

// GoMLX's Go backend interprets a graph node by node, each op through an executor from a table.
// The *exec.go files of this package install faster executors for the ops that dominate a
// training step (DotGeneral, element-wise arithmetic, Exp and Tanh, broadcasts, reductions,
// transposes, row gathers and scatters), each for the float32 forms the model produces and each
// falling back to the backend's own executor for anything else. Every one is bit-identical to the
// executor it replaces, so they change how fast a run is, never what it computes.
//
// Like the gradient re-registration in internal/gradients, they reach into gomlx v0.26.0 internals: the
// backend's executor table (by linkname) and the fields of its nodes (internal/gomlxfields: found by
// name and type, a mismatch falls back to the backend's executor rather than guessing). gomlx is pinned, and tests fail if
// those fields move.

// simplegoExecutor is the signature of the Go backend's single-output node executors.
type simplegoExecutor = func(*simplego.Backend, *simplego.Node, []*simplego.Buffer, []bool) (*simplego.Buffer, error)

//go:linkname simplegoNodeExecutors github.com/gomlx/gomlx/backends/simplego.nodeExecutors
var simplegoNodeExecutors [backends.OpTypeLast]simplegoExecutor

// fastExecutor runs a node of the Go backend; ok is false when it does not handle the node, which
// then goes to the backend's own executor. owned[i] reports whether the executor may take over
// input i's buffer (see takeOrNewFloat32Buffer); it must not have when it returns ok = false.
type fastExecutor func(b *simplego.Backend, node *simplego.Node, in []*simplego.Buffer, owned []bool) (out *simplego.Buffer, ok bool)

// overrideExecutor makes the Go backend run op through fast, falling back to the executor it had.
// Without one (not the executor table this was written for) the backend is left alone.
func overrideExecutor(op backends.OpType, fast fastExecutor) {
	generic := simplegoNodeExecutors[op]
	if generic == nil {
		return
	}
	simplegoNodeExecutors[op] = func(b *simplego.Backend, node *simplego.Node, in []*simplego.Buffer, owned []bool) (*simplego.Buffer, error) {
		if out, ok := fast(b, node, in, owned); ok {
			return out, nil
		}
		return generic(b, node, in, owned)
	}
}

// takeOrNewFloat32Buffer returns the buffer an element-wise executor writes its float32 output
// of shape s into: input i itself when the executor owns it and it has shape s (the backend's own
// executors do the same, and in[i] is set to nil to tell the backend it was taken over), else a
// new buffer. Writing in place is safe for kernels that read each value before writing it.
func takeOrNewFloat32Buffer(b *simplego.Backend, in []*simplego.Buffer, owned []bool, i int, s shapes.Shape) (*simplego.Buffer, []float32, bool) {
	if i >= 0 && i < len(in) && i < len(owned) && owned[i] && in[i] != nil {
		is, err1 := b.BufferShape(in[i])
		data, err2 := b.BufferData(in[i])
		values, isF32 := data.([]float32)
		if err1 == nil && err2 == nil && isF32 && is.Equal(s) && len(values) == s.Size() {
			out := in[i]
			in[i] = nil
			return out, values, true
		}
	}
	return newFloat32Buffer(b, s)
}

// newFloat32Buffer returns a new buffer of the Go backend with the given float32 shape and its
// values (not zeroed: pooled buffers hold old values); ok is false once the backend is finalized.
func newFloat32Buffer(b *simplego.Backend, s shapes.Shape) (*simplego.Buffer, []float32, bool) {
	out := b.NewBuffer(s.Clone())
	if out == nil {
		return nil, nil, false
	}
	data, err := b.BufferData(out)
	values, isF32 := data.([]float32)
	if err != nil || !isF32 {
		return nil, nil, false
	}
	return out, values, true
}

// nodeFields gives settable access to the fields of a Go-backend node that the executors read
// and fusing rewrites (gomlx v0.26.0 names, found by internal/gomlxfields).
type nodeFields struct {
	inputs *[]*simplego.Node
	opType *backends.OpType
	shape  *shapes.Shape
	data   *any
	multi  *[]shapes.Shape
}

// nodeOffsets finds the byte offsets of the nodeFields in a node once, by name and type: the
// executors read them for every node they run. The error names the first field missing.
var nodeOffsets = sync.OnceValues(func() (off [5]uintptr, err error) {
	var errs [5]error
	off[0], errs[0] = gomlxfields.Offset[simplego.Node, []*simplego.Node]("inputs")
	off[1], errs[1] = gomlxfields.Offset[simplego.Node, backends.OpType]("opType")
	off[2], errs[2] = gomlxfields.Offset[simplego.Node, shapes.Shape]("shape")
	off[3], errs[3] = gomlxfields.Offset[simplego.Node, any]("data")
	off[4], errs[4] = gomlxfields.Offset[simplego.Node, []shapes.Shape]("multiOutputsShapes")
	return off, errors.Join(errs[:]...)
})

// fieldsOf returns n's fields; ok is false if they are not where gomlx v0.26.0 has them.
func fieldsOf(n *simplego.Node) (nodeFields, bool) {
	off, err := nodeOffsets()
	if err != nil {
		return nodeFields{}, false
	}
	return nodeFields{
		inputs: gomlxfields.At[[]*simplego.Node](n, off[0]),
		opType: gomlxfields.At[backends.OpType](n, off[1]),
		shape:  gomlxfields.At[shapes.Shape](n, off[2]),
		data:   gomlxfields.At[any](n, off[3]),
		multi:  gomlxfields.At[[]shapes.Shape](n, off[4]),
	}, true
}

// readShapeAndAxes reads a node's output shape and the axes the Go backend stores as its data
// (gomlx v0.26.0): for BroadcastInDim the output axis of each operand axis, for reductions the
// reduced axes, for Transpose the permutation. ok is false if they are not there.
func readShapeAndAxes(node *simplego.Node) (out shapes.Shape, axes []int, ok bool) {
	f, ok := fieldsOf(node)
	if !ok {
		return out, nil, false
	}
	axes, err := gomlxfields.Ints(*f.data)
	return *f.shape, axes, err == nil
}

// readNodeShape reads a node's output shape.
func readNodeShape(node *simplego.Node) (shapes.Shape, bool) {
	f, ok := fieldsOf(node)
	if !ok {
		return shapes.Shape{}, false
	}
	return *f.shape, true
}

// nodeData returns what a node's data field holds (a pointer to its op's parameter struct);
// ok is false when it is empty or the node fields are not found.
func nodeData(node *simplego.Node) (any, bool) {
	f, ok := fieldsOf(node)
	if !ok || *f.data == nil {
		return nil, false
	}
	return *f.data, true
}

// nodeInts reads the []int field name of a node's data struct (gomlx v0.26.0 field names).
func nodeInts(data any, name string) ([]int, bool) {
	v, err := gomlxfields.Ints(data, name)
	return v, err == nil
}

// nodeInt reads the int field name of a node's data struct (gomlx v0.26.0 field names).
func nodeInt(data any, name string) (int, bool) {
	v, err := gomlxfields.Int(data, name)
	return v, err == nil
}
