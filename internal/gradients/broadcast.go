package gradients

import (
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/graftrl/graftrl/internal/gomlxfields"
)

// The gradient of BroadcastInDim is a sum over the broadcast axes. GoMLX builds it as ReduceSum;
// when those axes are trailing (LayerNorm statistics, softmax normalisers), sums over the last
// axis, one at a time, are ~4× cheaper on the Go backend (and the same sum on any other). Other
// broadcasts keep GoMLX's gradient.
func registerBroadcast() {
	upstream := VJPRegistration[NodeTypeBroadcastInDim]
	VJPRegistration[NodeTypeBroadcastInDim] = func(node *Node, vjps []*Node, out shapes.Shape) []*Node {
		x, v := node.Inputs()[0], vjps[0]
		axes, err := gomlxfields.Ints(node, "inputs", "broadcastAxes")
		if err != nil || !v.DType().IsFloat() || !broadcastsTrailing(x.Shape(), v.Shape(), axes) {
			return upstream(node, vjps, out)
		}
		g := v
		for g.Rank() > x.Rank() {
			g = ReduceSum(g, -1)
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
