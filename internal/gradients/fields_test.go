package gradients

import (
	"slices"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/graph"

	"github.com/graftrl/graftrl/internal/gomlxfields"
)

// TestReadAxes reads the axes of a DotGeneral and a BroadcastInDim built by GoMLX: if a GoMLX
// upgrade moves them, the registrations fall back to GoMLX's own gradients (right, but slower),
// and this test is what says so.
func TestReadAxes(t *testing.T) {
	g := graph.NewGraph(backendT(t), "axes")
	x := graph.Parameter(g, "x", shapeOf([]int{2, 3, 4}))
	y := graph.Parameter(g, "y", shapeOf([]int{2, 4, 5}))
	dot := graph.DotGeneral(x, []int{2}, []int{0}, y, []int{1}, []int{0})
	ax, err := readDotAxes(dot)
	if err != nil {
		t.Fatal(err)
	}
	want := dotAxes{lhsContracting: []int{2}, lhsBatch: []int{0}, rhsContracting: []int{1}, rhsBatch: []int{0}}
	for _, c := range [][2][]int{{ax.lhsContracting, want.lhsContracting}, {ax.lhsBatch, want.lhsBatch},
		{ax.rhsContracting, want.rhsContracting}, {ax.rhsBatch, want.rhsBatch}} {
		if !slices.Equal(c[0], c[1]) {
			t.Fatalf("DotGeneral axes %+v, want %+v", ax, want)
		}
	}
	v := graph.Parameter(g, "v", shapeOf([]int{3}))
	for n := graph.ExpandAndBroadcast(v, []int{3, 5}, []int{1}); n != nil; n = n.Inputs()[0] {
		if n.Type() == graph.NodeTypeBroadcastInDim {
			axes, err := gomlxfields.Ints(n, "inputs", "broadcastAxes")
			if err != nil || !slices.Equal(axes, []int{0}) {
				t.Fatalf("BroadcastInDim axes %v (%v), want [0]", axes, err)
			}
			return
		}
		if len(n.Inputs()) == 0 {
			break
		}
	}
	t.Fatal("no BroadcastInDim node built")
}
