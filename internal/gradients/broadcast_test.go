package gradients

import (
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/graph"

	"github.com/graftrl/graftrl/internal/gradcheck"
)

// The BroadcastInDim gradient must agree with central finite differences for broadcasts along
// new trailing axes (the rewritten case: one or two axes) and for a new leading axis (GoMLX's
// gradient, kept).
func TestBroadcastGradient(t *testing.T) { checkBroadcasts(t, backendT(t)) }

// TestXLACPUBroadcastGradient runs the same checks on xla:cpu.
func TestXLACPUBroadcastGradient(t *testing.T) { checkBroadcasts(t, xlaT(t)) }

func checkBroadcasts(t *testing.T, b backends.Backend) {
	gradcheck.Check(t, b, "one trailing axis", []int{3, 4}, func(x *graph.Node) *graph.Node {
		return gradcheck.Weighted(graph.Sin(graph.ExpandAndBroadcast(x, []int{3, 4, 5}, []int{2})))
	})
	gradcheck.Check(t, b, "two trailing axes", []int{3}, func(x *graph.Node) *graph.Node {
		return gradcheck.Weighted(graph.Sin(graph.ExpandAndBroadcast(x, []int{3, 2, 5}, []int{1, 2})))
	})
	gradcheck.Check(t, b, "leading axis", []int{4}, func(x *graph.Node) *graph.Node {
		return gradcheck.Weighted(graph.Sin(graph.ExpandAndBroadcast(x, []int{3, 4}, []int{0})))
	})
}

// broadcastsTrailing recognises only a broadcast that keeps x as the leading axes.
func TestBroadcastsTrailing(t *testing.T) {
	for _, c := range []struct {
		x, out []int
		axes   []int
		want   bool
	}{
		{[]int{3, 4}, []int{3, 4, 5}, []int{0, 1}, true},
		{[]int{3}, []int{3, 2, 5}, []int{0}, true},
		{[]int{4}, []int{3, 4}, []int{1}, false},
		{[]int{3, 4}, []int{3, 4}, []int{0, 1}, false},
		{[]int{1, 4}, []int{3, 4, 5}, []int{0, 1}, false},
	} {
		if got := broadcastsTrailing(shapeOf(c.x), shapeOf(c.out), c.axes); got != c.want {
			t.Errorf("broadcastsTrailing(%v → %v, %v) = %v, want %v", c.x, c.out, c.axes, got, c.want)
		}
	}
}
