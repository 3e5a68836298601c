package gobackend

import (
	"math/rand/v2"
	"slices"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// TestRowGatherScatterExecutors runs Gather and ScatterSum graphs of the forms the model uses on
// the Go backend against their definitions: gathered rows with indices clamped into range, and
// update rows added in index order (repeated indices included).
func TestRowGatherScatterExecutors(t *testing.T) {
	b, err := testBackend()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(41, 42))
	cases := []struct {
		opDims, idxDims []int
		outOfRange      bool // gather only: some indices outside their axis
	}{
		{[]int{10, 4}, []int{6, 1}, false},      // embedding rows
		{[]int{3, 5, 4}, []int{2, 7, 2}, false}, // hidden states at (row, position) pairs
		{[]int{40, 1}, []int{3, 5, 1}, false},   // single values
		{[]int{6, 3}, []int{9, 1}, true},        // clamped
		{[]int{4, 2, 3}, []int{5, 1}, false},    // rows of a rank-3 operand
	}
	for _, tc := range cases {
		x := randomFloats(rng, tc.opDims)
		n := 1
		for _, d := range tc.idxDims[:len(tc.idxDims)-1] {
			n *= d
		}
		p := tc.idxDims[len(tc.idxDims)-1]
		rowSize := 1
		for _, d := range tc.opDims[p:] {
			rowSize *= d
		}
		idx := make([]int32, n*p)
		for i := range idx {
			d := tc.opDims[i%p]
			idx[i] = int32(rng.IntN(d)) // repeats are likely: scatter must add them in order
			if tc.outOfRange && i%3 == 0 {
				idx[i] = int32(d + 2 - 5*(i%2))
			}
		}
		rowOf := func(t int) int {
			row := 0
			for j := range p {
				i := max(0, min(tc.opDims[j]-1, int(idx[t*p+j])))
				row = row*tc.opDims[j] + i
			}
			return row
		}
		outDims := append(slices.Clone(tc.idxDims[:len(tc.idxDims)-1]), tc.opDims[p:]...)
		want := make([]float32, n*rowSize)
		for t := range n {
			copy(want[t*rowSize:], x[rowOf(t)*rowSize:(rowOf(t)+1)*rowSize])
		}
		xt, it := tensors.FromFlatDataAndDimensions(x, tc.opDims...), tensors.FromFlatDataAndDimensions(idx, tc.idxDims...)
		got := tensors.MustCopyFlatData[float32](MustNewExec(b, func(x, i *Node) *Node { return Gather(x, i) }).MustExec(xt, it)[0])
		if !slices.Equal(got, want) {
			t.Fatalf("gather %v by %v: got %v, want %v", tc.opDims, tc.idxDims, got, want)
		}
		if tc.outOfRange {
			continue
		}
		upd := randomFloats(rng, outDims)
		wantS := slices.Clone(x)
		for t := range n {
			r := rowOf(t)
			for i := range rowSize {
				wantS[r*rowSize+i] += upd[t*rowSize+i]
			}
		}
		ut := tensors.FromFlatDataAndDimensions(upd, outDims...)
		gotS := tensors.MustCopyFlatData[float32](MustNewExec(b, func(x, i, u *Node) *Node { return ScatterSum(x, i, u, false, false) }).MustExec(xt, it, ut)[0])
		if !slices.Equal(gotS, wantS) {
			t.Fatalf("scatter-sum into %v by %v: got %v, want %v", tc.opDims, tc.idxDims, gotS, wantS)
		}
	}
}
