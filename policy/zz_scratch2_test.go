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

type dgCase struct {
	name         string
	lhs, rhs     []int
	lc, lb, rc, rb []int
	macs         float64
}

func TestScratchDot(t *testing.T) {
	N := 1024
	cases := []dgCase{
		{"dense x[N,64]W[64,256]", []int{N, 64}, []int{64, 256}, []int{1}, nil, []int{0}, nil, float64(N * 64 * 256)},
		{"dense x[N,64]W^T[256,64]", []int{N, 64}, []int{256, 64}, []int{1}, nil, []int{1}, nil, float64(N * 64 * 256)},
		{"dW x[N,64]^T dy[N,256]", []int{N, 64}, []int{N, 256}, []int{0}, nil, []int{0}, nil, float64(N * 64 * 256)},
		{"dW xT[64,N] dyT[256,N]", []int{64, N}, []int{256, N}, []int{1}, nil, []int{1}, nil, float64(N * 64 * 256)},
		{"dW x[N,64]^T dy[N,64]", []int{N, 64}, []int{N, 64}, []int{0}, nil, []int{0}, nil, float64(N * 64 * 64)},
		{"scores q[B,T,H,hd] k", []int{16, 64, 4, 16}, []int{16, 64, 4, 16}, []int{3}, []int{0, 2}, []int{3}, []int{0, 2}, float64(16 * 4 * 64 * 64 * 16)},
		{"scores q[BH,T,hd] k[BH,T,hd]", []int{64, 64, 16}, []int{64, 64, 16}, []int{2}, []int{0}, []int{2}, []int{0}, float64(16 * 4 * 64 * 64 * 16)},
		{"ctx p[BH,T,T] v[BH,T,hd]", []int{64, 64, 64}, []int{64, 64, 16}, []int{2}, []int{0}, []int{1}, []int{0}, float64(16 * 4 * 64 * 64 * 16)},
		{"ctx p[BH,T,T] vT[BH,hd,T]", []int{64, 64, 64}, []int{64, 16, 64}, []int{2}, []int{0}, []int{2}, []int{0}, float64(16 * 4 * 64 * 64 * 16)},
	}
	for _, lg := range []int{4, 5, 6} {
	simplego.DotGeneralTargetBlockLog2Dim[dtypes.Float32] = lg
	for _, cfg := range []string{"parallelism=0,dotgeneral_large"} {
		be, _ := simplego.New(cfg)
		for _, cs := range cases {
			e := MustNewExec(be, func(a, b *Node) *Node {
				return DotGeneral(a, cs.lc, cs.lb, b, cs.rc, cs.rb)
			})
			a := tensors.FromShape(shapes.Make(dtypes.Float32, cs.lhs...))
			b := tensors.FromShape(shapes.Make(dtypes.Float32, cs.rhs...))
			e.MustExec(a, b)[0].FinalizeAll()
			w, c := timeIt(15, func() { e.MustExec(a, b)[0].FinalizeAll() })
			fmt.Printf("blk%d %-34s %-30s wall %6.2f ms cpu %6.2f ms  %.2f GFLOP/s(cpu)\n", 1<<lg, cfg, cs.name, w, c, 2*cs.macs/c/1e6)
		}
	}
	}
}
