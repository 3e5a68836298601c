package gobackend

import (
	"fmt"
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
		{[]int{4100, 13}, []int{1}}, // eight rows at a time, and rows left over
		{[]int{3, 4, 64}, []int{2}},
		{[]int{9, 5}, []int{1}}, // one, two and three rows after the eight
		{[]int{10, 7}, []int{1}},
		{[]int{11, 3}, []int{1}},
		{[]int{1030, 37}, []int{0}},
		{[]int{30, 40, 50}, []int{0, 1}},
		// Leading sums on the AVX kernel: 32 columns at a time, then 8, then the last 0–7 row by
		// row (3 + 32 + 8 + 5 columns; 32 + 0, 1, 2, 3).
		{[]int{3, 45}, []int{0}},
		{[]int{3, 32}, []int{0}},
		{[]int{3, 33}, []int{0}},
		{[]int{3, 34}, []int{0}},
		{[]int{3, 35}, []int{0}},
		{[]int{500, 100}, []int{0}},
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

// TestMaxRowMatchesInOrder pins the interleaved maximum to the in-order one on the values where
// max is delicate: NaN (the result is NaN), +0 against −0, infinities, and every length mod 4.
func TestMaxRowMatchesInOrder(t *testing.T) {
	special := []float32{float32(math.NaN()), float32(math.Copysign(0, -1)), 0, float32(math.Inf(1)),
		float32(math.Inf(-1)), -1, 2.5, math.MaxFloat32, -math.MaxFloat32}
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 5000 {
		row := make([]float32, rng.IntN(13))
		for i := range row {
			row[i] = special[rng.IntN(len(special))]
		}
		if trial%2 == 0 { // NaN-free rows too
			for i := range row {
				if row[i] != row[i] {
					row[i] = float32(math.Copysign(0, -1))
				}
			}
		}
		init := float32(math.Inf(-1))
		want := init
		for _, v := range row {
			want = max(want, v)
		}
		got := maxRow(init, row)
		if want != want {
			if got == got {
				t.Fatalf("maxRow(%v) = %v, want NaN", row, got)
			}
			continue
		}
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("maxRow(%v) = %v, in order gives %v", row, got, want)
		}
	}
}

// BenchmarkReduceLeading times leading sums (the bias and LayerNorm gradients summed over a
// step's tokens: T128×B64 rows of d128 and of its MLP's 512) and smaller ones, both cores, in
// GB/s of input read.
func BenchmarkReduceLeading(b *testing.B) {
	for _, c := range []struct{ outer, inner int }{{8192, 128}, {8192, 512}, {1024, 64}, {1024, 256}} {
		x := make([]float32, c.outer*c.inner)
		for i := range x {
			x[i] = float32(i%13) * 0.5
		}
		out := make([]float32, c.inner)
		b.Run(fmt.Sprintf("%dx%d", c.outer, c.inner), func(b *testing.B) {
			for range b.N {
				reduceRows(out, x, c.outer, c.inner, false, false)
			}
			b.ReportMetric(float64(4*len(x))*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}
