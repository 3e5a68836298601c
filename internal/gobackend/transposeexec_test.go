package gobackend

import (
	"math/rand/v2"
	"slices"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// TestTransposeExecutor runs Transpose graphs on the Go backend against the definition
// out[i₀…] = x[i_{perm⁻¹}…], computed here index by index.
func TestTransposeExecutor(t *testing.T) {
	b, err := testBackend()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(31, 32))
	cases := []struct{ dims, perm []int }{
		{[]int{3, 5}, []int{1, 0}},
		{[]int{2, 3, 4, 5}, []int{0, 2, 1, 3}}, // heads ↔ tokens
		{[]int{2, 3, 4, 5}, []int{3, 1, 0, 2}},
		{[]int{1, 4, 1, 3}, []int{2, 0, 3, 1}}, // unit axes: a plain copy
		{[]int{7}, []int{0}},
		// Strided rows of 16 and more (16-lane gathers plus a tail), as the attention gradients'
		// transposes [B,H,hd,T] → [B,T,H,hd] have, large enough to be split across the pool.
		{[]int{2, 20, 37}, []int{0, 2, 1}},
		{[]int{16, 4, 16, 64}, []int{0, 3, 1, 2}},
		// Without AVX-512: bands of eight rows in blocks of 8 × 8 (kernels.TransposeF32AVX), a last
		// band of fewer and columns past the blocks; planes over two axes, swapped.
		{[]int{2, 3, 12, 10}, []int{1, 0, 3, 2}},
		{[]int{2, 8, 16}, []int{0, 2, 1}},  // whole bands and blocks only
		{[]int{2, 9, 17}, []int{0, 2, 1}},  // a last band of 1 row, 1 column past the blocks
		{[]int{2, 10, 18}, []int{0, 2, 1}}, // 2 and 2
		{[]int{2, 11, 19}, []int{0, 2, 1}}, // 3 and 3
	}
	for _, tc := range cases {
		x := randomFloats(rng, tc.dims)
		outDims := make([]int, len(tc.dims))
		for i, a := range tc.perm {
			outDims[i] = tc.dims[a]
		}
		want := make([]float32, len(x))
		in := make([]int, len(tc.dims))
		for o := range want {
			rem := o
			for i := len(outDims) - 1; i >= 0; i-- {
				in[tc.perm[i]] = rem % outDims[i]
				rem /= outDims[i]
			}
			flat := 0
			for a, d := range tc.dims {
				flat = flat*d + in[a]
			}
			want[o] = x[flat]
		}
		exec := MustNewExec(b, func(n *Node) *Node { return TransposeAllDims(n, tc.perm...) })
		out := exec.MustExec(tensors.FromFlatDataAndDimensions(x, tc.dims...))[0]
		if got := tensors.MustCopyFlatData[float32](out); !slices.Equal(got, want) || !slices.Equal(out.Shape().Dimensions, outDims) {
			t.Fatalf("dims %v perm %v: got %v %v, want %v %v", tc.dims, tc.perm, out.Shape().Dimensions, got, outDims, want)
		}
	}
}
