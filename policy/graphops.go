package policy

import (
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// The pure-Go backend runs a graph node by node, and its per-element cost differs a lot between
// ops that compute the same thing. Measured on the build machine with the backend's own executors
// (ns per element, float32): same-shape binary op 0.6, op with a scalar 0.35, binary op with
// implicit broadcasting 4.6–5, GoMLX's Softmax ~30. The helpers below are the cheap forms, which
// graftrl's executors (*exec.go) run fastest: explicit broadcasts and reductions over the last
// axis instead of implicit broadcasting and Softmax. They compute the same function: only the
// order of float32 additions differs.

// smallDotCross is the largest per-example lhs×rhs cross size the Go backend multiplies with its
// unblocked "small" DotGeneral; above it, operands are copied into padded 32×32 blocks, which
// would multiply a vector contraction's work by 32.
const smallDotCross = 16 * 32 * 32

// sumLast sums x over its last axis.
func sumLast(x *Node) *Node {
	return ReduceSum(x, -1)
}

// broadcastLast repeats v (shape dims[:r−1]) along a new last axis of size dims[r−1].
func broadcastLast(v *Node, dims []int) *Node {
	return ExpandAndBroadcast(v, dims, []int{len(dims) - 1})
}

// broadcastLeading repeats v (shape dims[len(dims)−v.Rank():]) over the leading axes of dims.
func broadcastLeading(v *Node, dims []int) *Node {
	lead := make([]int, len(dims)-v.Rank())
	for i := range lead {
		lead[i] = i
	}
	return ExpandAndBroadcast(v, dims, lead)
}

// addBias adds a bias over the last axis of y with an explicit broadcast: cheaper on the Go backend
// than an implicitly broadcast Add, and its gradient is the same reduction.
func addBias(y, b *Node) *Node {
	return Add(y, broadcastLeading(b, y.Shape().Dimensions))
}

// The gradient of BroadcastInDim is a sum over the broadcast axes. GoMLX builds it as ReduceSum;
// when those axes are trailing (LayerNorm statistics, softmax normalisers), sumLast is ~4× cheaper
// on the Go backend. Other broadcasts keep GoMLX's gradient.
func init() {
	upstream := VJPRegistration[NodeTypeBroadcastInDim]
	VJPRegistration[NodeTypeBroadcastInDim] = func(node *Node, vjps []*Node, out shapes.Shape) []*Node {
		x, v := node.Inputs()[0], vjps[0]
		if !v.DType().IsFloat() || !broadcastsTrailing(x.Shape(), v.Shape(), nodeInputsInts(node, "broadcastAxes")) {
			return upstream(node, vjps, out)
		}
		g := v
		for g.Rank() > x.Rank() {
			g = sumLast(g)
		}
		return []*Node{g}
	}
}

// broadcastsTrailing reports whether a BroadcastInDim from x to out with the given axis mapping
// keeps x as out's leading axes, unchanged, and only repeats it along new trailing axes.
func broadcastsTrailing(x, out shapes.Shape, axes []int) bool {
	if len(axes) != x.Rank() || x.Rank() == 0 || x.Rank() >= out.Rank() {
		return false
	}
	for i, a := range axes {
		if a != i || x.Dimensions[i] != out.Dimensions[i] {
			return false
		}
	}
	return true
}
