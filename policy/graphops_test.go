package policy

import (
	"testing"

	"github.com/gomlx/gomlx/pkg/core/graph"

	"github.com/graftrl/graftrl/internal/gradcheck"
)

// The cheap graph forms of graphops.go and their re-registered gradients (a sum over trailing axes
// as a vector product, its outer-product gradient, the trailing-broadcast gradient) must agree
// with finite differences.
func TestGraphOpsGradients(t *testing.T) {
	gradcheck.Check(t, backendT(t), "sumLast", []int{3, 4, 5}, func(x *graph.Node) *graph.Node { return gradcheck.Weighted(sumLast(x)) })
	gradcheck.Check(t, backendT(t), "broadcastLast", []int{3, 4}, func(x *graph.Node) *graph.Node {
		return gradcheck.Weighted(graph.Mul(broadcastLast(x, []int{3, 4, 6}), broadcastLast(x, []int{3, 4, 6})))
	})
	gradcheck.Check(t, backendT(t), "broadcastLeading", []int{5}, func(x *graph.Node) *graph.Node {
		return gradcheck.Weighted(graph.Square(broadcastLeading(x, []int{2, 3, 5})))
	})
	gradcheck.Check(t, backendT(t), "normalize", []int{2, 3, 6}, func(x *graph.Node) *graph.Node { return gradcheck.Weighted(normalize(x)) })
	gradcheck.Check(t, backendT(t), "softmaxContext", []int{2, 2, 3, 4}, func(x *graph.Node) *graph.Node {
		v := graph.Reshape(graph.Sin(graph.Iota(x.Graph(), x.Shape(), 3)), 2, 4, 2, 3) // [B,Tk,H,hd] from [B,H,Tq,Tk]
		return gradcheck.Weighted(softmaxContext(x, graph.Mul(v, graph.OnePlus(graph.Reshape(x, 2, 4, 2, 3)))))
	})
}
