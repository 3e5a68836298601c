package gobackend

import (
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/graftrl/graftrl/internal/gradients"
	"github.com/graftrl/graftrl/internal/kernels"
)

// naiveDot is DotGeneral by definition, in float64: out[batch…, lhsFree…, rhsFree…].
func naiveDot(lhs []float32, lhsDims, lhsC, lhsB []int, rhs []float32, rhsDims, rhsC, rhsB []int) []float64 {
	idx := func(dims, pos []int) int {
		o := 0
		for a, d := range dims {
			o = o*d + pos[a]
		}
		return o
	}
	lf, rf := gradients.FreeAxes(len(lhsDims), lhsC, lhsB), gradients.FreeAxes(len(rhsDims), rhsC, rhsB)
	var outDims []int
	for _, a := range lhsB {
		outDims = append(outDims, lhsDims[a])
	}
	for _, a := range lf {
		outDims = append(outDims, lhsDims[a])
	}
	for _, a := range rf {
		outDims = append(outDims, rhsDims[a])
	}
	var cDims []int
	for _, a := range lhsC {
		cDims = append(cDims, lhsDims[a])
	}
	size := 1
	for _, d := range outDims {
		size *= d
	}
	out := make([]float64, size)
	oPos := make([]int, len(outDims))
	for o := range out {
		rem := o
		for i := len(outDims) - 1; i >= 0; i-- {
			oPos[i] = rem % outDims[i]
			rem /= outDims[i]
		}
		lp, rp := make([]int, len(lhsDims)), make([]int, len(rhsDims))
		for i, a := range lhsB {
			lp[a], rp[rhsB[i]] = oPos[i], oPos[i]
		}
		for i, a := range lf {
			lp[a] = oPos[len(lhsB)+i]
		}
		for i, a := range rf {
			rp[a] = oPos[len(lhsB)+len(lf)+i]
		}
		cPos := make([]int, len(cDims))
		for {
			for i, a := range lhsC {
				lp[a], rp[rhsC[i]] = cPos[i], cPos[i]
			}
			out[o] += float64(lhs[idx(lhsDims, lp)]) * float64(rhs[idx(rhsDims, rp)])
			i := len(cDims) - 1
			for ; i >= 0; i-- {
				cPos[i]++
				if cPos[i] < cDims[i] {
					break
				}
				cPos[i] = 0
			}
			if i < 0 {
				break
			}
		}
	}
	return out
}

type execCase struct {
	name             string
	lhsDims, rhsDims []int
	lhsC, lhsB       []int
	rhsC, rhsB       []int
}

var execCases = []execCase{
	{"dense", []int{3, 5, 8}, []int{8, 6}, []int{2}, nil, []int{0}, nil},
	{"dense n%4=0", []int{2, 7, 16}, []int{16, 12}, []int{2}, nil, []int{0}, nil},
	{"weight gradient (contract rows)", []int{9, 5}, []int{9, 7}, []int{0}, nil, []int{0}, nil},
	{"attention scores", []int{2, 3, 6, 4}, []int{2, 3, 5, 4}, []int{3}, []int{0, 1}, []int{3}, []int{0, 1}},
	{"attention context", []int{2, 3, 6, 5}, []int{2, 3, 5, 4}, []int{3}, []int{0, 1}, []int{2}, []int{0, 1}},
	{"batch axes not leading", []int{4, 2, 3}, []int{3, 2, 5}, []int{2}, []int{1}, []int{0}, []int{1}},
	{"two contracting axes", []int{3, 4, 5}, []int{5, 4, 2}, []int{1, 2}, nil, []int{1, 0}, nil},
	{"vector", []int{6, 10}, []int{10}, []int{1}, nil, []int{0}, nil},
	{"outer product", []int{5}, []int{3}, nil, nil, nil, nil},
	{"large, split across workers", []int{2, 70, 33}, []int{2, 33, 9}, []int{2}, []int{0}, []int{1}, []int{0}},
	{"weight gradient over two leading axes", []int{3, 4, 9}, []int{3, 4, 6}, []int{0, 1}, nil, []int{0, 1}, nil},
	{"transposed lhs, odd k, m%4≠0", []int{7, 9}, []int{7, 10}, []int{0}, nil, []int{0}, nil},
	{"heads not leading", []int{2, 5, 3, 4}, []int{2, 6, 3, 4}, []int{3}, []int{0, 2}, []int{3}, []int{0, 2}},
	{"attention gradient", []int{2, 3, 5, 4}, []int{2, 3, 5, 6}, []int{2}, []int{0, 1}, []int{2}, []int{0, 1}},
	{"heads-and-dims contraction (copies)", []int{2, 3, 5, 4}, []int{3, 4, 6}, []int{1, 3}, nil, []int{0, 1}, nil},
	{"rhs free axes split (copies)", []int{2, 6}, []int{3, 6, 2}, []int{1}, nil, []int{1}, nil},
	// 16-column groups (AVX-512) and the panels after them.
	{"n 16, odd k", []int{9, 7}, []int{7, 16}, []int{1}, nil, []int{0}, nil},
	{"n 37: two groups and two panels", []int{6, 8}, []int{37, 8}, []int{1}, nil, []int{1}, nil},
	{"n 62: last group ends in a partial panel", []int{5, 1}, []int{1, 62}, []int{1}, nil, []int{0}, nil},
	{"n 20, transposed lhs", []int{11, 7}, []int{11, 20}, []int{0}, nil, []int{0}, nil},
	{"groups, strided batches", []int{2, 5, 3, 4}, []int{2, 33, 3, 4}, []int{3}, []int{0, 2}, []int{3}, []int{0, 2}},
	{"groups, rhs copied first", []int{4, 6}, []int{3, 6, 6}, []int{1}, nil, []int{1}, nil},
	{"n 48: a pair of groups, then one", []int{9, 5}, []int{5, 48}, []int{1}, nil, []int{0}, nil},
	{"n 80, transposed lhs, even k", []int{6, 10}, []int{6, 80}, []int{0}, nil, []int{0}, nil},
	{"[n, k] rhs, k 13: steps packed eight at a time, then five", []int{6, 13}, []int{20, 13}, []int{1}, nil, []int{1}, nil},
	{"[n, k] rhs, two groups, k 24", []int{5, 24}, []int{32, 24}, []int{1}, nil, []int{1}, nil},
	{"[n, k] rhs, k 9: one step after the eights", []int{7, 9}, []int{16, 9}, []int{1}, nil, []int{1}, nil},
	{"[n, k] rhs, k 10: two after", []int{7, 10}, []int{16, 10}, []int{1}, nil, []int{1}, nil},
	{"[n, k] rhs, k 11: three after", []int{7, 11}, []int{16, 11}, []int{1}, nil, []int{1}, nil},
}

// sizes are the case's batch, m, n and k as DotGeneral defines them.
func (tc execCase) sizes() (batch, m, n, k int) {
	batch, m, n, k = 1, 1, 1, 1
	for _, a := range tc.lhsB {
		batch *= tc.lhsDims[a]
	}
	for _, a := range tc.lhsC {
		k *= tc.lhsDims[a]
	}
	for _, a := range gradients.FreeAxes(len(tc.lhsDims), tc.lhsC, tc.lhsB) {
		m *= tc.lhsDims[a]
	}
	for _, a := range gradients.FreeAxes(len(tc.rhsDims), tc.rhsC, tc.rhsB) {
		n *= tc.rhsDims[a]
	}
	return batch, m, n, k
}

func randomFloats(rng *rand.Rand, dims []int) []float32 {
	n := 1
	for _, d := range dims {
		n *= d
	}
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// TestDotFloat32 pins the executor's kernel against DotGeneral's definition for every axis
// arrangement the model uses and a few it does not, with 1 and 3 workers.
func TestDotFloat32(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range execCases {
		lhs, rhs := randomFloats(rng, tc.lhsDims), randomFloats(rng, tc.rhsDims)
		want := naiveDot(lhs, tc.lhsDims, tc.lhsC, tc.lhsB, rhs, tc.rhsDims, tc.rhsC, tc.rhsB)
		batch, m, n, k := tc.sizes()
		for _, workers := range []int{1, 3} {
			got := make([]float32, len(want))
			dotFloat32(got, lhs, tc.lhsDims, tc.lhsB, tc.lhsC, rhs, tc.rhsDims, tc.rhsB, tc.rhsC, batch, m, n, k, workers)
			for i := range want {
				if math.Abs(float64(got[i])-want[i]) > 1e-5*(1+math.Abs(want[i])) {
					t.Fatalf("%s, %d workers: out[%d] = %v, want %v", tc.name, workers, i, got[i], want[i])
				}
			}
		}
	}
}

// dotCanonical is dotFloat32 as it was before operands were read in place: both operands copied
// to [batch, m, k] and [batch, k, n], then the panel kernel.
func dotCanonical(lhs []float32, lhsDims, lhsB, lhsC []int, rhs []float32, rhsDims, rhsB, rhsC []int, batch, m, n, k int) []float32 {
	a := *transposedScratch(lhs, lhsDims, normalOrder(len(lhsDims), lhsB, lhsC, true))
	r := *transposedScratch(rhs, rhsDims, normalOrder(len(rhsDims), rhsB, rhsC, false))
	np := (n + 3) / 4
	out, zeros := make([]float32, batch*m*n), make([]float32, 4*np)
	for e := range batch {
		panels := make([][4]float32, np*k)
		packPanelsKN(panels, r[e*k*n:], n, k, n)
		y := make([]float32, m*4*np)
		kernels.MatmulPanels(y, 4*np, a[e*m*k:], k, m, k, panels, k, np, zeros, kernels.EpiStore)
		for i := range m {
			copy(out[(e*m+i)*n:(e*m+i+1)*n], y[i*4*np:])
		}
	}
	return out
}

// TestDotFloat32ReadsInPlace checks that reading operands where they lie (strided lhs rows, the
// 16-lane kernel's strides, strided rhs packing) gives bit for bit what copying them first gives.
func TestDotFloat32ReadsInPlace(t *testing.T) {
	checkDotReadsInPlace(t)
}

// checkDotReadsInPlace runs dotFloat32 on every execCase against dotCanonical, bit for bit.
func checkDotReadsInPlace(t *testing.T) {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range execCases {
		checkDotBitExact(t, tc, randomFloats(rng, tc.lhsDims), randomFloats(rng, tc.rhsDims))
	}
}

// checkDotBitExact runs dotFloat32 on one case with 1 and 3 workers against dotCanonical (both
// operands copied, then the panel kernel), bit for bit.
func checkDotBitExact(t *testing.T, tc execCase, lhs, rhs []float32) {
	t.Helper()
	batch, m, n, k := tc.sizes()
	want := dotCanonical(lhs, tc.lhsDims, tc.lhsB, tc.lhsC, rhs, tc.rhsDims, tc.rhsB, tc.rhsC, batch, m, n, k)
	for _, workers := range []int{1, 3} {
		got := make([]float32, len(want))
		dotFloat32(got, lhs, tc.lhsDims, tc.lhsB, tc.lhsC, rhs, tc.rhsDims, tc.rhsB, tc.rhsC, batch, m, n, k, workers)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s, %d workers: out[%d] = %v, copying first gives %v", tc.name, workers, i, got[i], want[i])
			}
		}
	}
}

// TestOperandLayout pins layoutOf on the layouts the model's gradients produce.
func TestOperandLayout(t *testing.T) {
	cases := []struct {
		dims, batch, contr []int
		ok                 bool
		off                []int
		free, cstride      int
	}{
		{[]int{3, 4, 5}, nil, []int{2}, true, []int{0}, 5, 1},    // rows of a dense matrix
		{[]int{3, 4, 5}, nil, []int{0, 1}, true, []int{0}, 1, 5}, // contract the leading axes
		{[]int{2, 5, 3, 4}, []int{0, 2}, []int{3}, true, []int{0, 4, 8, 60, 64, 68}, 12, 1},
		{[]int{2, 3, 5, 4}, nil, []int{1, 3}, false, nil, 0, 0},       // free axes 0 and 2 interleave
		{[]int{3, 4, 5}, nil, []int{1, 0}, false, nil, 0, 0},          // contracting axes out of order
		{[]int{1, 4, 1, 5}, []int{0}, []int{3}, true, []int{0}, 5, 1}, // unit axes are skipped
	}
	for i, c := range cases {
		l, ok := layoutOf(c.dims, c.batch, c.contr)
		if ok != c.ok || ok && (!reflect.DeepEqual(l.off, c.off) || l.free != c.free || l.contr != c.cstride) {
			t.Errorf("case %d %v batch %v contracting %v: got %+v ok %v, want off %v free %d contr %d ok %v",
				i, c.dims, c.batch, c.contr, l, ok, c.off, c.free, c.cstride, c.ok)
		}
	}
}

// TestDotGeneralExecutorInstalled checks that the Go backend runs DotGeneral through this
// package's executor and that graphs get DotGeneral's definition from it.
func TestDotGeneralExecutorInstalled(t *testing.T) {
	b, err := testBackend()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range execCases {
		lhs, rhs := randomFloats(rng, tc.lhsDims), randomFloats(rng, tc.rhsDims)
		want := naiveDot(lhs, tc.lhsDims, tc.lhsC, tc.lhsB, rhs, tc.rhsDims, tc.rhsC, tc.rhsB)
		exec := MustNewExec(b, func(l, r *Node) *Node {
			return DotGeneral(l, tc.lhsC, tc.lhsB, r, tc.rhsC, tc.rhsB)
		})
		out := exec.MustExec(tensors.FromFlatDataAndDimensions(lhs, tc.lhsDims...),
			tensors.FromFlatDataAndDimensions(rhs, tc.rhsDims...))[0]
		got := tensors.MustCopyFlatData[float32](out)
		if len(got) != len(want) {
			t.Fatalf("%s: %d outputs, want %d", tc.name, len(got), len(want))
		}
		for i := range want {
			if math.Abs(float64(got[i])-want[i]) > 1e-5*(1+math.Abs(want[i])) {
				t.Fatalf("%s: out[%d] = %v, want %v", tc.name, i, got[i], want[i])
			}
		}
	}
	f := simplegoNodeExecutors[backends.OpTypeDotGeneral]
	if f == nil {
		t.Fatal("no DotGeneral executor registered")
	}
	name := runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
	if want := "github.com/graftrl/graftrl/internal/gobackend."; !strings.HasPrefix(name, want) {
		t.Fatalf("the Go backend's DotGeneral executor is %s, want this package's (%s…)", name, want)
	}
}

// TestDotFloat32BlockedBitExact runs products large enough for every cache block of
// matmulGroupsBlocked — several blocks of rows and of groups, sums in parts of dotPart steps with
// an odd last part, transposed lhs blocks copied before use — against dotCanonical bit for bit.
func TestDotFloat32BlockedBitExact(t *testing.T) {
	if !useGroups {
		t.Skip("no groups kernel on this CPU: the panels run without blocks")
	}
	checkDotBlockedBitExact(t)
}

// checkDotBlockedBitExact is TestDotFloat32BlockedBitExact on the kernels the package variables
// select.
func checkDotBlockedBitExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []execCase{
		{"rows and groups in blocks, sums in parts (FMA: rhs packed)", []int{300, 1101}, []int{1101, 288}, []int{1}, nil, []int{0}, nil},
		{"wide [k, n] rhs, FMA: packed, a tail", []int{130, 600}, []int{600, 440}, []int{1}, nil, []int{0}, nil},
		{"the same, one panel left, 131 rows", []int{131, 520}, []int{520, 516}, []int{1}, nil, []int{0}, nil},
		{"transposed lhs in parts", []int{1101, 300}, []int{1101, 288}, []int{0}, nil, []int{0}, nil},
		{"many group blocks", []int{40, 576}, []int{576, 1600}, []int{1}, nil, []int{0}, nil},
		{"transposed lhs, row blocks", []int{768, 200}, []int{768, 400}, []int{0}, nil, []int{0}, nil},
		{"transposed lhs a page apart a step, copied", []int{40, 4100}, []int{40, 48}, []int{0}, nil, []int{0}, nil},
		{"the same, sums in parts", []int{1030, 4096}, []int{1030, 16}, []int{0}, nil, []int{0}, nil},
		{"rhs packed, sums in parts", []int{20, 1030}, []int{48, 1030}, []int{1}, nil, []int{1}, nil},
		{"eight columns, transposed lhs: operands swapped", []int{1030, 40}, []int{1030, 8}, []int{0}, nil, []int{0}, nil},
		{"eight columns, batched, transposed lhs", []int{2, 70, 48}, []int{2, 70, 8}, []int{1}, []int{0}, []int{1}, []int{0}},
		{"[k, n] rhs with gaps, packed into groups", []int{2, 300, 70}, []int{70, 2, 48}, []int{2}, []int{0}, []int{0}, []int{1}},
		{"[k, n] rhs with gaps, 130 rows: packed", []int{2, 3, 130, 40}, []int{2, 40, 3, 32}, []int{3}, []int{0, 1}, []int{1}, []int{0, 2}},
		{"[k, n] rhs packed, strided batches, a tail", []int{2, 3, 260, 33}, []int{2, 33, 3, 37}, []int{3}, []int{0, 1}, []int{1}, []int{0, 2}},
		{"wide rhs 2 KB a step, transposed lhs: operands swapped", []int{1030, 32}, []int{1030, 528}, []int{0}, nil, []int{0}, nil},
		{"wide rhs, 40 rows: not swapped", []int{300, 40}, []int{300, 528}, []int{0}, nil, []int{0}, nil},
		{"wide rhs, 1 KB a step: not swapped", []int{300, 32}, []int{300, 256}, []int{0}, nil, []int{0}, nil},
		{"transposed lhs 2 KB a step, copied", []int{300, 520}, []int{300, 48}, []int{0}, nil, []int{0}, nil},
		{"eight columns, 36 rows: not swapped", []int{2, 70, 36}, []int{2, 70, 8}, []int{1}, []int{0}, []int{1}, []int{0}},
	} {
		checkDotBitExact(t, tc, randomFloats(rng, tc.lhsDims), randomFloats(rng, tc.rhsDims))
	}
}

// TestSwapOperands pins which weight gradients swapOperands swaps (TestDotFloat32BlockedBitExact
// checks that swapped products keep their values bit for bit).
func TestSwapOperands(t *testing.T) {
	if !useGroups {
		t.Skip("no groups kernel on this CPU: nothing is swapped")
	}
	for _, c := range []struct {
		tc   execCase
		want bool
	}{
		{execCase{"rank-8 adapter", []int{1030, 48}, []int{1030, 8}, []int{0}, nil, []int{0}, nil}, true},
		{execCase{"d128 up-projection", []int{8192, 128}, []int{8192, 512}, []int{0}, nil, []int{0}, nil}, true},
		{execCase{"d128 down-projection", []int{8192, 512}, []int{8192, 128}, []int{0}, nil, []int{0}, nil}, false},
		{execCase{"d64 up-projection, 1 KB a step", []int{4096, 64}, []int{4096, 256}, []int{0}, nil, []int{0}, nil}, false},
		{execCase{"40 rows", []int{300, 40}, []int{300, 528}, []int{0}, nil, []int{0}, nil}, false},
		{execCase{"528 columns not in groups", []int{300, 32}, []int{300, 520}, []int{0}, nil, []int{0}, nil}, false},
		{execCase{"lhs rows contiguous", []int{32, 300}, []int{300, 528}, []int{1}, nil, []int{0}, nil}, false},
		{execCase{"rhs [n, k]", []int{300, 32}, []int{528, 300}, []int{0}, nil, []int{1}, nil}, false},
	} {
		_, m, n, _ := c.tc.sizes()
		got := swapOperands(c.tc.lhsDims, c.tc.lhsB, c.tc.lhsC, c.tc.rhsDims, c.tc.rhsB, c.tc.rhsC, m, n)
		if got != c.want {
			t.Errorf("%s (m %d, n %d): swapped %v, want %v", c.tc.name, m, n, got, c.want)
		}
	}
}

// TestPackKNGroups pins which [k, n] rhs packRHS copies into contiguous groups on each groups
// kernel (TestDotFloat32BlockedBitExact checks that packed products keep their values bit for
// bit).
func TestPackKNGroups(t *testing.T) {
	for _, c := range []struct {
		name        string
		ws, n, m, k int
		wide, fma   bool
	}{
		{"d128 attention context, 512 bytes a step", 128, 32, 128, 128, true, true},
		{"the same, 32 rows", 128, 32, 32, 128, false, false},
		{"SmolLM2 down-projection input gradient", 1536, 1536, 2048, 576, false, true},
		{"SmolLM2 gate input gradient", 576, 576, 2048, 1536, false, true},
		{"SmolLM2 FFN weight gradient, 100 rows", 576, 576, 100, 2048, false, false},
		{"d64 down-projection weight gradient", 64, 64, 256, 1024, false, false},
		{"one group a step, contiguous", 16, 16, 4096, 1 << 15, false, false},
	} {
		for _, wide := range []bool{true, false} {
			want := c.fma
			if wide {
				want = c.wide
			}
			if got := packKNGroups(c.ws, c.n, c.m, c.k, wide); got != want {
				t.Errorf("%s (ws %d, n %d, m %d, k %d, AVX-512 %v): packed %v, want %v", c.name, c.ws, c.n, c.m, c.k, wide, got, want)
			}
		}
	}
}
