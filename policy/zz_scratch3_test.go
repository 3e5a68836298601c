//go:build perfscratch

package policy

import (
	"fmt"
	"testing"

	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

func TestScratchElem(t *testing.T) {
	N, F := 1024, 256
	be, _ := simplego.New("parallelism=0")
	type cs struct {
		name string
		fn   func(y, b, m *Node) *Node
	}
	cases := []cs{
		{"copy-ish Add(y,y)", func(y, b, m *Node) *Node { return Add(y, y) }},
		{"Add(y, b[1,F]) implicit", func(y, b, m *Node) *Node { return Add(y, Reshape(b, 1, F)) }},
		{"Add(y, Broadcast(b))", func(y, b, m *Node) *Node { return Add(y, BroadcastToDims(Reshape(b, 1, F), N, F)) }},
		{"Broadcast(b) only", func(y, b, m *Node) *Node { return BroadcastToDims(Reshape(b, 1, F), N, F) }},
		{"concat-doubling", func(y, b, m *Node) *Node {
			r := Reshape(b, 1, F)
			for r.Shape().Dimensions[0] < N {
				r = Concatenate([]*Node{r, r}, 0)
			}
			return Add(y, r)
		}},
		{"Sub(y, m[N,1]) implicit", func(y, b, m *Node) *Node { return Sub(y, m) }},
		{"Sub(y, Broadcast(m))", func(y, b, m *Node) *Node { return Sub(y, BroadcastToDims(m, N, F)) }},
		{"ReduceSum last", func(y, b, m *Node) *Node { return ReduceSum(y, -1) }},
		{"ReduceSum first", func(y, b, m *Node) *Node { return ReduceSum(y, 0) }},
		{"Dot ones last", func(y, b, m *Node) *Node { return DotGeneral(y, []int{1}, nil, OnesLike(b), []int{0}, nil) }},
		{"Dot ones first", func(y, b, m *Node) *Node { return DotGeneral(y, []int{0}, nil, OnesLike(Reshape(m, N)), []int{0}, nil) }},
		{"Exp", func(y, b, m *Node) *Node { return Exp(y) }},
		{"Tanh", func(y, b, m *Node) *Node { return Tanh(y) }},
		{"Logistic", func(y, b, m *Node) *Node { return Logistic(y) }},
		{"Mul", func(y, b, m *Node) *Node { return Mul(y, y) }},
		{"MulScalar", func(y, b, m *Node) *Node { return MulScalar(y, 3) }},
		{"Div", func(y, b, m *Node) *Node { return Div(y, y) }},
		{"Transpose", func(y, b, m *Node) *Node { return Transpose(y, 0, 1) }},
		{"Where", func(y, b, m *Node) *Node { return Where(GreaterThan(y, ZerosLike(y)), y, ZerosLike(y)) }},
		{"Softmax last", func(y, b, m *Node) *Node { return Softmax(y, -1) }},
	}
	y := tensors.FromShape(shapes.Make(dtypes.Float32, N, F))
	bb := tensors.FromShape(shapes.Make(dtypes.Float32, F))
	mm := tensors.FromShape(shapes.Make(dtypes.Float32, N, 1))
	for _, c := range cases {
		e := MustNewExec(be, c.fn)
		e.MustExec(y, bb, mm)[0].FinalizeAll()
		_, cpu := timeIt(21, func() { e.MustExec(y, bb, mm)[0].FinalizeAll() })
		fmt.Printf("%-28s %7.3f ms  %.2f ns/elem\n", c.name, cpu, cpu*1e6/float64(N*F))
	}
}
