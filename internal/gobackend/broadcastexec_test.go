package gobackend

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// TestBroadcastInDimExecutor runs broadcasting graphs on the Go backend (through this
// package's executor) and checks every output element against the definition
// out[idx] = x[idx at the operand's axes], which is exact.
func TestBroadcastInDimExecutor(t *testing.T) {
	b, err := testBackend()
	if err != nil {
		t.Fatal(err)
	}
	if simplegoNodeExecutors[backends.OpTypeBroadcastInDim] == nil {
		t.Fatal("no BroadcastInDim executor registered")
	}
	cases := []struct {
		name    string
		opDims  []int
		outDims []int
		axes    []int
	}{
		{"bias over tokens", []int{5}, []int{2, 3, 5}, []int{2}},
		{"row statistic over a row", []int{2, 3}, []int{2, 3, 7}, []int{0, 1}},
		{"middle axis", []int{4, 6}, []int{4, 3, 6}, []int{0, 2}},
		{"size-1 operand axis", []int{1, 6}, []int{4, 6}, []int{0, 1}},
		{"scalar", []int{}, []int{3, 2}, []int{}},
		{"leading only", []int{3, 4}, []int{2, 3, 4}, []int{1, 2}},
		{"identity", []int{3, 4}, []int{3, 4}, []int{0, 1}},
		// Large enough for the worker pool; rows of 37 values filled 16 at a time plus a tail.
		{"row statistic, split across workers", []int{30, 40}, []int{30, 40, 37}, []int{0, 1}},
		{"bias over many rows", []int{37}, []int{1200, 37}, []int{1}},
		{"scalar to a column", []int{}, []int{3000, 1}, []int{}},
		{"row statistic with unit axes", []int{5, 1, 3}, []int{5, 1, 3, 1, 4}, []int{0, 1, 2}},
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range cases {
		x := randomFloats(rng, tc.opDims)
		exec := MustNewExec(b, func(v *Node) *Node {
			if len(tc.opDims) == len(tc.outDims) {
				return BroadcastToDims(v, tc.outDims...)
			}
			var expanded []int
			for a := range tc.outDims {
				if !slices.Contains(tc.axes, a) {
					expanded = append(expanded, a)
				}
			}
			return ExpandAndBroadcast(v, tc.outDims, expanded)
		})
		var in *tensors.Tensor
		if len(tc.opDims) == 0 {
			in = tensors.FromScalar(x[0])
		} else {
			in = tensors.FromFlatDataAndDimensions(x, tc.opDims...)
		}
		got := tensors.MustCopyFlatData[float32](exec.MustExec(in)[0])
		size := 1
		for _, d := range tc.outDims {
			size *= d
		}
		if len(got) != size {
			t.Fatalf("%s: %d outputs, want %d", tc.name, len(got), size)
		}
		pos := make([]int, len(tc.outDims))
		for o := range got {
			rem := o
			for a := len(tc.outDims) - 1; a >= 0; a-- {
				pos[a] = rem % tc.outDims[a]
				rem /= tc.outDims[a]
			}
			src := 0
			for i, a := range tc.axes {
				p := pos[a]
				if tc.opDims[i] == 1 {
					p = 0
				}
				src = src*tc.opDims[i] + p
			}
			if got[o] != x[src] {
				t.Fatalf("%s: out[%d] = %v, want x[%d] = %v", tc.name, o, got[o], src, x[src])
			}
		}
	}
}

// TestExecutorParamsReadable checks that the node parameters the executors read by reflection
// are where this package expects them in the pinned gomlx: were they not, the executors would
// silently fall back to the backend's own.
func TestExecutorParamsReadable(t *testing.T) {
	b, err := testBackend()
	if err != nil {
		t.Fatal(err)
	}
	bld := b.Builder("params")
	x, err := bld.Parameter("x", shapes.Make(dtypes.Float32, 2, 3), nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := bld.Parameter("w", shapes.Make(dtypes.Float32, 3, 5), nil)
	if err != nil {
		t.Fatal(err)
	}
	bc, err := bld.BroadcastInDim(x, shapes.Make(dtypes.Float32, 2, 4, 3), []int{0, 2})
	if err != nil {
		t.Fatal(err)
	}
	out, axes, ok := readShapeAndAxes(bc.(*simplego.Node))
	if !ok || !slices.Equal(out.Dimensions, []int{2, 4, 3}) || !slices.Equal(axes, []int{0, 2}) {
		t.Fatalf("BroadcastInDim params: ok %v, shape %v, axes %v", ok, out, axes)
	}
	dg, err := bld.DotGeneral(x, []int{1}, nil, w, []int{0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The Go backend wraps the DotGeneral node in a Reshape back to the output's axes.
	node := dg.(*simplego.Node)
	p, ok := readDotParams(node)
	if !ok {
		f, found := fieldsOf(node)
		if !found || len(*f.inputs) != 1 {
			t.Fatalf("DotGeneral params unreadable and no single input to look through")
		}
		p, ok = readDotParams((*f.inputs)[0])
	}
	if !ok || p.batch != 1 || p.m != 2 || p.n != 5 || p.k != 3 {
		t.Fatalf("DotGeneral params: ok %v, %+v, want batch 1, m 2, n 5, k 3", ok, p)
	}
}

func TestMergeAxes(t *testing.T) {
	cases := []struct{ dims, strides, wantDims, wantStrides []int }{
		{[]int{300, 1}, []int{0, 0}, []int{300}, []int{0}},                           // a fill
		{[]int{2, 3, 4}, []int{12, 4, 1}, []int{24}, []int{1}},                       // a copy
		{[]int{2, 3, 4}, []int{3, 1, 0}, []int{6, 4}, []int{1, 0}},                   // rows of fills
		{[]int{4, 16, 64}, []int{1024, 1, 16}, []int{4, 16, 64}, []int{1024, 1, 16}}, // a transpose
		{[]int{1, 1}, []int{0, 5}, nil, nil},
	}
	for _, c := range cases {
		d, s := mergeAxes(c.dims, c.strides)
		if !slices.Equal(d, c.wantDims) || !slices.Equal(s, c.wantStrides) {
			t.Errorf("mergeAxes(%v, %v) = %v, %v; want %v, %v", c.dims, c.strides, d, s, c.wantDims, c.wantStrides)
		}
	}
}
