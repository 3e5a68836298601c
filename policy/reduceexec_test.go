package policy

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// TestReduceExecutors checks ReduceMax and ReduceSum on the Go backend against float32 loops
// that visit the input in row-major order from the backend's initial values, exactly (==): the
// executors of reduceexec.go for leading and trailing axes, the backend's own for the rest.
func TestReduceExecutors(t *testing.T) {
	b, err := testBackend()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		dims, axes []int
	}{
		{[]int{4, 7}, []int{1}},
		{[]int{2, 3, 5}, []int{2}},
		{[]int{2, 3, 5}, []int{1, 2}},
		{[]int{2, 3, 5}, []int{0, 1}},
		{[]int{6, 5}, []int{0}},
		{[]int{2, 3, 5}, []int{0, 1, 2}},
		{[]int{2, 3, 5}, []int{1}}, // middle axis: the backend's executor
		// Large enough to be split across the worker pool: rows for trailing reductions, column
		// ranges (a multiple of 16 and a tail) for leading ones.
		{[]int{40, 1000}, []int{1}},
		{[]int{1030, 37}, []int{0}},
		{[]int{30, 40, 50}, []int{0, 1}},
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tc := range cases {
		x := randomFloats(rng, tc.dims)
		for _, isMax := range []bool{false, true} {
			exec := MustNewExec(b, func(v *Node) *Node {
				if isMax {
					return ReduceMax(v, tc.axes...)
				}
				return ReduceSum(v, tc.axes...)
			})
			got := tensors.MustCopyFlatData[float32](exec.MustExec(tensors.FromFlatDataAndDimensions(x, tc.dims...))[0])
			// Reference: walk the input in order, accumulating into the output position.
			var outDims []int
			for a, d := range tc.dims {
				if !slices.Contains(tc.axes, a) {
					outDims = append(outDims, d)
				}
			}
			size := 1
			for _, d := range outDims {
				size *= d
			}
			want := make([]float32, size)
			if isMax {
				for i := range want {
					want[i] = float32(math.Inf(-1))
				}
			}
			pos := make([]int, len(tc.dims))
			for i, v := range x {
				rem := i
				for a := len(tc.dims) - 1; a >= 0; a-- {
					pos[a] = rem % tc.dims[a]
					rem /= tc.dims[a]
				}
				o := 0
				for a, d := range tc.dims {
					if !slices.Contains(tc.axes, a) {
						o = o*d + pos[a]
					}
				}
				if isMax {
					want[o] = max(want[o], v)
				} else {
					want[o] += v
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("dims %v axes %v max %v: got %v, want %v", tc.dims, tc.axes, isMax, got, want)
			}
		}
	}
}
