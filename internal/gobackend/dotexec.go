package gobackend

import (
	"math"
	"unsafe"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/graftrl/graftrl/internal/gradients"
	"github.com/graftrl/graftrl/internal/kernels"
	"github.com/graftrl/graftrl/internal/workers"
)

// The Go backend spent three quarters of a training step in DotGeneral (pprof at the quickstart
// shape): it normalises both operands, copies them into 32×32 blocks and multiplies those with a
// generic Go loop, ~9 GFLOP/s on the two build-machine cores. The executor registered below
// computes float32 DotGenerals with graftrl's FMA kernels instead: sixteen output columns at a
// time by a kernel that reads operands of any strides (kernels.MatmulGroups: AVX-512, or two
// 8-lane halves on AVX2), the remaining columns by the 4-wide panel kernel of the host path
// (internal/kernels/panels.go). Operands are read where they lie whenever their free axes and their
// contracting axes each collapse to one stride (operandLayout) that the kernel reading them
// takes, and are copied to a canonical order otherwise. Both kernels compute each output with the
// same sequence of fused multiply-adds, so results do not depend on the CPU's vector width, on
// the layout or on how rows are split between the cores. Other dtypes, and any
// node whose parameters cannot be read, go to the backend's own executor.

func installDot() {
	overrideExecutor(backends.OpTypeDotGeneral, execDotGeneralFloat32)
}

// dotParams are the axes and sizes of one DotGeneral node: output [batch, m, n] with
// out[b,i,j] = Σ_c lhs[b,i,c]·rhs[b,j,c] once each operand's axes are ordered batch, free,
// contracting.
type dotParams struct {
	lhsContracting, lhsBatch, rhsContracting, rhsBatch []int
	batch, m, n, k                                     int
}

// readDotParams reads the parameters the Go backend stored on a DotGeneral node (field names of
// gomlx v0.26.0); ok is false if they are not there.
func readDotParams(node *simplego.Node) (p dotParams, ok bool) {
	v, ok := nodeData(node)
	if !ok {
		return p, false
	}
	var oks [8]bool
	p.lhsContracting, oks[0] = nodeInts(v, "lhsContractingAxes")
	p.lhsBatch, oks[1] = nodeInts(v, "lhsBatchAxes")
	p.rhsContracting, oks[2] = nodeInts(v, "rhsContractingAxes")
	p.rhsBatch, oks[3] = nodeInts(v, "rhsBatchAxes")
	p.batch, oks[4] = nodeInt(v, "batchSize")
	p.m, oks[5] = nodeInt(v, "lhsCrossSize")
	p.n, oks[6] = nodeInt(v, "rhsCrossSize")
	p.k, oks[7] = nodeInt(v, "contractingSize")
	for _, o := range oks {
		if !o {
			return p, false
		}
	}
	return p, true
}

// execDotGeneralFloat32 runs a float32 DotGeneral node; ok is false when it is not one (or its
// operands do not match its parameters), for the backend's own executor to handle.
func execDotGeneralFloat32(b *simplego.Backend, node *simplego.Node, in []*simplego.Buffer, _ []bool) (*simplego.Buffer, bool) {
	if len(in) != 2 {
		return nil, false
	}
	p, ok := readDotParams(node)
	if !ok {
		return nil, false
	}
	lhsShape, err1 := b.BufferShape(in[0])
	rhsShape, err2 := b.BufferShape(in[1])
	lhsAny, err3 := b.BufferData(in[0])
	rhsAny, err4 := b.BufferData(in[1])
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return nil, false
	}
	lhs, ok1 := lhsAny.([]float32)
	rhs, ok2 := rhsAny.([]float32)
	if !ok1 || !ok2 || lhsShape.DType != dtypes.Float32 || rhsShape.DType != dtypes.Float32 ||
		!dotOperandMatches(lhsShape.Dimensions, p.lhsBatch, p.lhsContracting, p.batch, p.m, p.k) ||
		!dotOperandMatches(rhsShape.Dimensions, p.rhsBatch, p.rhsContracting, p.batch, p.n, p.k) {
		return nil, false
	}
	out, values, ok := newFloat32Buffer(b, shapes.Make(dtypes.Float32, p.batch, p.m, p.n))
	if !ok {
		return nil, false
	}
	dotFloat32(values, lhs, lhsShape.Dimensions, p.lhsBatch, p.lhsContracting,
		rhs, rhsShape.Dimensions, p.rhsBatch, p.rhsContracting, p.batch, p.m, p.n, p.k, workers.Shared().Size())
	return out, true
}

// dotOperandMatches checks an operand's dimensions against the node's sizes.
func dotOperandMatches(dims, batchAxes, contractingAxes []int, batch, cross, k int) bool {
	b, c, x := 1, 1, 1
	kind := make([]int, len(dims))
	for _, a := range batchAxes {
		if a < 0 || a >= len(dims) || kind[a] != 0 {
			return false
		}
		kind[a] = 1
		b *= dims[a]
	}
	for _, a := range contractingAxes {
		if a < 0 || a >= len(dims) || kind[a] != 0 {
			return false
		}
		kind[a] = 2
		x *= dims[a]
	}
	for a, d := range dims {
		if kind[a] == 0 {
			c *= d
		}
	}
	return b == batch && c == cross && x == k
}

// dotFloat32 computes out[b,i,j] = Σ_c lhs[b,i,c]·rhs[b,j,c] (operands in normalised axis
// order) into out, [batch, m, n] row-major, splitting the work for up to nw goroutines of
// the worker pool (1: all on the caller). Operands are read
// where they lie whenever their free axes and their contracting axes each collapse to one
// stride (see operandLayout) and the kernel that reads them takes that layout; otherwise they are
// first copied to [batch, m, k] and [batch, k, n].
func dotFloat32(out, lhs []float32, lhsDims, lhsBatch, lhsContracting []int,
	rhs []float32, rhsDims, rhsBatch, rhsContracting []int, batch, m, n, k, nw int) {
	if swapOperands(lhsDims, lhsBatch, lhsContracting, rhsDims, rhsBatch, rhsContracting, m, n) {
		t := workers.GetScratch(batch * n * m)
		defer workers.PutScratch(t)
		dotFloat32(*t, rhs, rhsDims, rhsBatch, rhsContracting, lhs, lhsDims, lhsBatch, lhsContracting, batch, n, m, k, nw)
		transposeInto(out, *t, []int{batch, n, m}, []int{0, 2, 1})
		return
	}
	r := packRHS(rhs, rhsDims, rhsBatch, rhsContracting, batch, m, n, k)
	defer r.release()
	ng, ws, gs, gw, panels, pe, restAt, rest := r.ng, r.ws, r.gs, r.gw, r.panels, r.pe, r.restAt, r.rest
	np := (n + 3) / 4
	// The lhs: the 16-lane kernel reads any strides, the panel kernel rows of k contiguous values.
	lo, ok := layoutOf(lhsDims, lhsBatch, lhsContracting)
	if !ok || !(lo.contr == 1 || k <= 1 || rest == 0) {
		t := transposedScratch(lhs, lhsDims, normalOrder(len(lhsDims), lhsBatch, lhsContracting, true))
		defer workers.PutScratch(t)
		lhs = *t
		lo = stridedLayout(batch, m*k, k, 1)
	}
	zeros := make([]float32, 4*np)
	ldo := n
	if n%4 != 0 {
		ldo = 4 * np // the kernel writes whole panels: pad each row, copy back below
	}

	// Work units: (example, row range). Rows are split when there are fewer examples than
	// nw and the product is large enough to be worth sharing.
	const minMACs = 1 << 15
	chunks := 1
	if batch < nw && batch*m*n*k >= 2*minMACs {
		chunks = min(4*nw, max(1, (m+15)/16)) // several per worker: a late one leaves less to wait for
	}
	unit := func(u int) {
		e, c := u/chunks, u%chunks
		r0, r1 := c*m/chunks, (c+1)*m/chunks
		if r0 >= r1 {
			return
		}
		w := panels[e*pe:]
		dst, ld := out[(e*m+r0)*n:], n
		if ldo != n {
			dst, ld = make([]float32, (r1-r0)*ldo), ldo
		}
		x := lhs[lo.off[e]+r0*lo.free:]
		if ng > 0 {
			matmulGroupsBlocked(dst, ld, x, lo.free, lo.contr, r1-r0, k, gw[e], ws, gs, ng)
		}
		if rest > 0 {
			kernels.MatmulPanels(dst[16*ng:], ld, x, lo.free, r1-r0, k, w[restAt:], k, rest, zeros, kernels.EpiStore)
		}
		if ldo != n {
			for i := r0; i < r1; i++ {
				copy(out[(e*m+i)*n:(e*m+i+1)*n], dst[(i-r0)*ldo:])
			}
		}
	}
	workers.ForEach(batch*chunks, nw > 1 && batch*m*n*k >= 2*minMACs, unit)
}

// Cache blocking of the 16-lane kernel, which takes rows four at a time and, for each block of
// four, every group it is given over every step: given all of a large product's columns it
// reads the whole rhs again for every four rows, from memory once the rhs outgrows the cache
// (SmolLM2's output layer: 113 MB per four rows). matmulGroupsBlocked hands it blocks of rows
// (at most dotRowBytes of lhs), within them parts of the steps (sums of more than dotPartMax
// steps in parts of dotPart, by kernels.MatmulGroupsPart, which keeps each output's arithmetic
// exactly that of one pass), and within those blocks of groups (at most dotBlockBytes of rhs):
// the rhs block stays in L2 while the block's rows pass, and the block's rows stay in L2 while
// every group block passes.
const (
	dotBlockBytes = 256 << 10
	dotRowBytes   = 256 << 10
	dotPartMax    = 1024
	dotPart       = 256
	// fmaPartMax is dotPartMax for the FMA kernel (no AVX-512) reading w in place.
	fmaPartMax = 384
	// dotUnblocked is the most rhs values a product runs unblocked with: an rhs that fits in L2
	// stays there without blocks, and the d64 policy's weight gradients measured slower cut up.
	dotUnblocked = 1 << 18
	// copyStride is the smallest step stride (in values) of a transposed lhs that
	// matmulGroupsBlocked copies before use.
	copyStride = 512
)

// matmulGroupsBlocked is kernels.MatmulGroups (no bias, EpiStore) in cache blocks: blocks of rows,
// parts of long sums, blocks of groups.
func matmulGroupsBlocked(out []float32, ldo int, x []float32, rs, is, n, k int, w []float32, ws, gs, ng int) {
	// A transposed lhs (a weight gradient's activations) is read a step at a time across rows
	// that lie a whole row of the activations apart: at the output layer's 196,608 bytes every
	// step of a block falls in the same cache set and evicts the last, and at 2 KB a step the
	// steps fold into two sets of the L1 cache. Blocks with steps at least copyStride values
	// apart are copied first, step-major, rows contiguous (d256's MLP gradients measured 150
	// GFLOP/s read in place, 175-195 copied; the d64 policy's small weight gradients, 1 KB a
	// step and less, measured slower copied).
	copyLHS := rs < is && is >= copyStride && n > 4
	partMax := dotPartMax
	if !useAVX512 && n > 3 && ws > 16 {
		// The FMA kernel takes rows in blocks of six (three, then one, for the rest), each
		// step's 16 columns of w for twelve multiply-adds. Read in place a row of a wider matrix
		// apart, a group's steps fold into a few sets of the L1 cache and come from L2 for every
		// block of rows: long sums go in parts (d64's MLP weight gradients, 1,024 steps 1 KB
		// apart, with blocks of three: medians 54 → 71 GFLOP/s; products of packed groups
		// measured slower in parts).
		partMax = fmaPartMax
	}
	if k <= partMax && 16*ng*k <= dotUnblocked && !copyLHS {
		kernels.MatmulGroups(out, ldo, x, rs, is, n, k, w, ws, gs, ng, nil, kernels.EpiStore)
		return
	}
	kb := k
	var odd []float32
	if k > partMax {
		kb = dotPart
		t := workers.GetScratch((n-1)*ldo + 16*ng)
		defer workers.PutScratch(t)
		odd = *t
	}
	gb := max(2, dotBlockBytes/(64*kb)) &^ 1
	rb := max(4, dotRowBytes/(4*kb)) &^ 3
	var packed []float32
	if copyLHS {
		t := workers.GetScratch(min(rb, n) * kb)
		defer workers.PutScratch(t)
		packed = *t
	}
	for r0 := 0; r0 < n; r0 += rb {
		rows := min(rb, n-r0)
		for k0 := 0; k0 < k; k0 += kb {
			kk := min(kb, k-k0)
			xb, rsb, isb := x[r0*rs+k0*is:], rs, is
			if packed != nil {
				for i := range kk {
					src, dst := xb[i*is:], packed[i*rows:(i+1)*rows]
					if rs == 1 {
						copy(dst, src)
						continue
					}
					for r := range dst {
						dst[r] = src[r*rs]
					}
				}
				xb, rsb, isb = packed, 1, rows
			}
			part := kernels.GroupsPart{Resume: k0 > 0, Split: k0+kk < k}
			for g0 := 0; g0 < ng; g0 += gb {
				var o []float32
				if odd != nil {
					o = odd[r0*ldo+16*g0:]
				}
				kernels.MatmulGroupsPart(out[r0*ldo+16*g0:], o, ldo, xb, rsb, isb, rows, kk, w[g0*gs+k0*ws:], ws, gs,
					min(gb, ng-g0), nil, kernels.EpiStore, part)
			}
		}
	}
}

// swapOperands reports whether a product is faster computed with its operands swapped and the
// result transposed. Both cases are weight gradients, whose lhs is transposed (free stride 1):
//   - eight columns (a rank-8 adapter's gradient, out [m, 8] = dYᵀ·(A·x)) are one pair of 4-wide
//     panels, which read the lhs in rows of contiguous steps, so the lhs would first be copied
//     whole; swapped, it is the rhs of m/16 groups of the 16-lane kernel, read in place;
//   - a wide [k, n] rhs whose steps lie at least swapStride values apart and more columns than
//     the lhs has rows (an MLP's up-projection gradient, out [d, 4d] = xᵀ·dH): the kernel reads
//     each group's steps a row of the rhs apart, at a multiple of 2 KB that folds them into a
//     few sets of the L1 cache, once per four output rows; swapped, the wide operand is the lhs,
//     read four values at a time, and the narrow one the rhs (d128's up-projection gradient
//     measured 95-130 GFLOP/s read so, 160-180 swapped, as fast as the down-projection's).
//
// The sums are the same: a pair of panels and a group keep the same two chains per output, and a
// fused multiply-add does not depend on its factors' order (m, and in the second case n, a
// multiple of 16, so that no column of the swapped product falls in a lone panel, which keeps
// one chain).
func swapOperands(lhsDims, lhsBatch, lhsContracting, rhsDims, rhsBatch, rhsContracting []int, m, n int) bool {
	if !useGroups || m%16 != 0 || m == 0 {
		return false
	}
	lo, ok := layoutOf(lhsDims, lhsBatch, lhsContracting)
	if !ok || lo.free != 1 || lo.contr == 1 {
		return false
	}
	if n == 8 {
		return true
	}
	ro, ok := layoutOf(rhsDims, rhsBatch, rhsContracting)
	return ok && n%16 == 0 && m < n && ro.free == 1 && ro.contr >= swapStride
}

// swapStride is the smallest step stride of a wide rhs that swapOperands swaps: the d64 policy's
// up-projection gradient (1 KB a step) measured as fast read in place as swapped.
const swapStride = 512

// rhsPanels is the rhs of a DotGeneral as the kernels read it (packRHS), per example e. With
// the groups kernel (kernels.HasGroups) its first ng groups of 16 columns (panels 4g..4g+3) go
// to it: read in place (gw[e], step stride ws, group stride gs) when the rhs is [k, n] with
// contiguous rows, unless packKNGroups says a copy pays, else packed into panels (packGroupsNK,
// or a copy of each step's 16 values for a [k, n] rhs): read in place, a step's values may lie
// a whole wider row apart, often at a multiple of 256 bytes, so that a group's steps fall in a
// quarter of the L1 cache's sets (SmolLM2's attention context ran at two thirds of its packed
// speed so). The remaining columns are packed into rest 4-wide panels: example e's pe panels
// start at panels[e·pe:], its rest at restAt within them, panel p at p·k.
type rhsPanels struct {
	ng, ws, gs       int
	gw               [][]float32
	panels           [][4]float32
	pe, restAt, rest int
	// scratch holds panels, and transposed the rhs copied to [batch, k, n] when its layout
	// is one the kernels do not read (nil when read in place): release gives both back.
	scratch, transposed *[]float32
}

// release gives the scratch buffers of r back to the pool.
func (r *rhsPanels) release() {
	workers.PutScratch(r.scratch)
	if r.transposed != nil {
		workers.PutScratch(r.transposed)
	}
}

// A [k, n] rhs is packed into groups rather than read in place when its steps lie further apart
// than a row of n values (a slice of a wider tensor, such as one head's values), the product has
// at least packRows rows (the copy is one pass over the rhs, which the kernel reads once per four
// rows: at 32 rows the d64 policy's train step measured 8 % slower; d128's attention context, 128
// rows of 32 columns whose steps lie 512 bytes apart, 65-69 GFLOP/s in place and 82-97 packed)
// and the rhs at most packMaxRHS values an example (larger ones are read from L2 in cache blocks
// anyway, and measured no faster packed by the AVX-512 kernel).
const (
	packRows   = 128
	packMaxRHS = 1 << 18
)

// packKNGroups reports whether packRHS copies the groups of a [k, n] rhs whose steps lie ws
// values apart into contiguous groups (16 values a step) for a product of m rows, rather than
// have the kernel read them in place: the case above, and on the FMA kernel (wide false) every
// rhs larger than packMaxRHS with steps more than a group apart. The FMA kernel takes rows in
// blocks of six (measured with blocks of three) and must find a block of steps of its group in
// L1 for each: read in place, the steps
// lie a wide row apart (SmolLM2's FFN rows: 2,304 or 6,144 bytes), fold into a few of the L1
// cache's sets and come from L2 for every block of rows. Packed, a block of steps is 16 KB in a
// row (T256×B8 products on a Zen 3 machine, medians of four alternating runs: the FFN's
// down-projection input gradient 60 → 86 GFLOP/s, its weight gradients 63 → 80 and 66 → 74, the
// output layer's weight gradient 64 → 76; the d128 and d256 policies' MLP weight gradients 55-58
// → 66-74; the d64 policy's and the attention's smaller rhs measured slower packed).
func packKNGroups(ws, n, m, k int, wide bool) bool {
	if m < packRows {
		return false
	}
	if ws > n && k*n <= packMaxRHS {
		return true
	}
	return !wide && ws > 16 && k*n > packMaxRHS
}

// packRHS lays out the rhs of dotFloat32 for its kernels (rhsPanels): read in place where its
// layout allows, else copied to [batch, k, n] first, and the columns the 16-lane kernel does not
// read in place packed into panels, one example per worker.
func packRHS(rhs []float32, rhsDims, rhsBatch, rhsContracting []int, batch, m, n, k int) rhsPanels {
	var r rhsPanels
	np := (n + 3) / 4
	ro, ok := layoutOf(rhsDims, rhsBatch, rhsContracting)
	nk := ok && (ro.contr == 1 || k <= 1)       // rows of k contiguous values: [n, k]
	kn := ok && !nk && (ro.free == 1 || n == 1) // rows of n contiguous values: [k, n]
	if !nk && !kn {
		t := transposedScratch(rhs, rhsDims, normalOrder(len(rhsDims), rhsBatch, rhsContracting, false))
		r.transposed = t
		rhs = *t
		ro, kn = stridedLayout(batch, k*n, 1, n), true
	}
	ng, ws, gs := 0, 16, 16*k
	gw := make([][]float32, batch)
	if useGroups && k > 0 {
		if kn {
			ng = n / 16
		} else {
			ng = np / 4
		}
	}
	packKN := kn && packKNGroups(ro.contr, n, m, k, useAVX512)
	inPlace := kn && !packKN // groups read where they lie
	if inPlace {
		ws, gs = ro.contr, 16
	}
	rest := np - 4*ng       // 4-wide panels after the groups
	tail := max(0, n-16*ng) // and their columns
	// Per example, the panels the kernels read: all np when the groups are packed too (group g is
	// panels 4g..4g+3), only the rest when the groups are read in place.
	pe, restAt := np*k, 4*ng*k
	if inPlace {
		pe, restAt = rest*k, 0
	}
	scratch := workers.GetScratch(4 * batch * pe)
	r.scratch = scratch
	var panels [][4]float32 // (*scratch as panels of four; every entry read is written below)
	if pe > 0 {
		panels = unsafe.Slice((*[4]float32)(unsafe.Pointer(&(*scratch)[0])), batch*pe)
	}
	pack := func(e int) {
		dst, x := panels[e*pe:(e+1)*pe], rhs[ro.off[e]:]
		switch {
		case kn:
			gw[e] = x
			if packKN && ng > 0 {
				gw[e] = unsafe.Slice(&dst[0][0], 4*len(dst))
			}
			if tail > 0 {
				packPanelsKN(dst[restAt:], x[16*ng:], ro.contr, k, tail)
			}
		default:
			if ng > 0 {
				packGroupsNK(dst, x, ro.free, k, n, ng)
				gw[e] = unsafe.Slice(&dst[0][0], 4*len(dst))
			}
			if tail > 0 {
				packPanelsNK(dst[restAt:], x[16*ng*ro.free:], ro.free, k, tail)
			}
		}
	}
	workers.ForEach(batch, len(panels) >= 2*elementGrain/4, pack)
	if packKN && ng > 0 {
		// Step i of example e's rows to its groups: group g's 16 values at 16(g·k + i).
		workers.ParallelRange(batch*k, elementGrain/(16*ng)+1, 1, func(lo, hi int) {
			for j := lo; j < hi; j++ {
				e, i := j/k, j%k
				x := rhs[ro.off[e]+i*ro.contr:]
				dst := gw[e]
				for g := range ng {
					v := [16]float32(x[16*g:]) // 64 bytes in registers, no call
					*(*[16]float32)(dst[16*(g*k+i):]) = v
				}
			}
		})
	}
	r.ng, r.ws, r.gs, r.gw, r.panels, r.pe, r.restAt, r.rest = ng, ws, gs, gw, panels, pe, restAt, rest
	return r
}

// transposedScratch returns a scratch buffer (give it back with putScratch) holding x, row-major
// with dims, with its axes permuted by perm.
func transposedScratch(x []float32, dims, perm []int) *[]float32 {
	t := workers.GetScratch(len(x))
	transposeInto(*t, x, dims, perm)
	return t
}

// operandLayout places a DotGeneral operand's values: example e's value at free index j and
// contracting index c (each the flattened index over its axes, in the order the node lists
// contracting and batch axes, free axes ascending) is at off[e] + j·free + c·contr.
type operandLayout struct {
	off         []int
	free, contr int
}

// layoutOf is the layout of a row-major operand with dims; ok is false when its free axes or its
// contracting axes do not collapse to a single stride.
func layoutOf(dims, batchAxes, contractingAxes []int) (l operandLayout, ok bool) {
	strides := make([]int, len(dims))
	s := 1
	for a := len(dims) - 1; a >= 0; a-- {
		strides[a] = s
		s *= dims[a]
	}
	var okF, okC bool
	l.free, okF = collapsedStride(dims, strides, gradients.FreeAxes(len(dims), contractingAxes, batchAxes))
	l.contr, okC = collapsedStride(dims, strides, contractingAxes)
	if !okF || !okC {
		return l, false
	}
	l.off = []int{0}
	for _, a := range batchAxes {
		next := make([]int, 0, len(l.off)*dims[a])
		for _, o := range l.off {
			for i := range dims[a] {
				next = append(next, o+i*strides[a])
			}
		}
		l.off = next
	}
	return l, true
}

// collapsedStride returns the stride that steps the flattened index over axes (in the given
// order) by one — the stride of the last axis longer than 1 — and whether one stride does: each
// such axis must step exactly over the whole of the next. It is 1 when no axis is longer than 1.
func collapsedStride(dims, strides, axes []int) (int, bool) {
	last := -1
	for _, a := range axes {
		if dims[a] == 1 {
			continue
		}
		if last >= 0 && strides[last] != strides[a]*dims[a] {
			return 0, false
		}
		last = a
	}
	if last < 0 {
		return 1, true
	}
	return strides[last], true
}

// stridedLayout is the layout of an operand whose examples are size values apart, each with the
// given free and contracting strides.
func stridedLayout(batch, size, free, contr int) operandLayout {
	off := make([]int, batch)
	for e := range off {
		off[e] = e * size
	}
	return operandLayout{off: off, free: free, contr: contr}
}

// normalOrder is the axis permutation that brings an operand to [batch, free, contracting]
// (contractingLast) or [batch, contracting, free].
func normalOrder(rank int, batch, contracting []int, contractingLast bool) []int {
	free := gradients.FreeAxes(rank, contracting, batch)
	perm := append([]int(nil), batch...)
	if contractingLast {
		perm = append(append(perm, free...), contracting...)
	} else {
		perm = append(append(perm, contracting...), free...)
	}
	return perm
}

// packGroupsNK packs the first 16·ng columns of the transpose of an [n, k] matrix whose row j
// starts at r[j·ldr] into groups of 16 columns for kernels.MatmulGroups: group g occupies
// dst[4gk : 4(g+1)k], its step i holding r[(16g+c)·ldr + i] for c = 0..15 (zero past n) in
// the four entries dst[4gk+4i : 4gk+4i+4].
func packGroupsNK(dst [][4]float32, r []float32, ldr, k, n, ng int) {
	var idx [16]int32
	gather := useAVX512 && k > 0 && 15*ldr+k <= math.MaxInt32
	for c := range idx {
		idx[c] = int32(c * ldr)
	}
	for g := range ng {
		grp := unsafe.Slice(&dst[4*g*k][0], 16*k) // dst[4gk : 4(g+1)k] as floats
		if gather && 16*g+16 <= n {
			// Step i gathers value i of the 16 rows (4 bytes on per step); the last value read:
			_ = r[(16*g+15)*ldr+k-1]
			kernels.GatherF32AVX512(&grp[0], &r[16*g*ldr], &idx[0], k, 4)
			continue
		}
		i0 := 0
		if k8 := k &^ 7; useAVX && k8 > 0 && 16*g+16 <= n {
			// Without a gather: blocks of 8 steps × 8 rows transposed in registers.
			_ = r[(16*g+15)*ldr+k8-1] // the last value read
			kernels.TransposeF32AVX(&grp[0], 16, &r[16*g*ldr], ldr, k8, 16)
			i0 = k8
		}
		for c := range 16 {
			j := 16*g + c
			if j >= n {
				for i := range k {
					grp[16*i+c] = 0
				}
				continue
			}
			// Row j's values go 16 floats apart: stores through a pointer, bounds checked once.
			row := r[j*ldr+i0 : j*ldr+k]
			_ = grp[16*(k-1)+c]
			p := unsafe.Add(unsafe.Pointer(&grp[c]), 64*i0)
			for i, v := range row {
				*(*float32)(unsafe.Add(p, 64*i)) = v
			}
		}
	}
}

// packPanelsKN packs a [k, n] matrix whose row i starts at w[i·ldw] into 4-wide column panels:
// panel p holds dst[p·k+i] = w[i·ldw + 4p : i·ldw + 4p+4], zero past n. Rows go in blocks of 16
// so that the reads (16 rows) stay in L1 while each panel receives 16 contiguous entries.
func packPanelsKN(dst [][4]float32, w []float32, ldw, k, n int) {
	np, full := (n+3)/4, n/4
	const block = 16
	for i0 := 0; i0 < k; i0 += block {
		i1 := min(i0+block, k)
		for p := range full {
			d := dst[p*k+i0 : p*k+i1]
			for i := range d {
				o := (i0+i)*ldw + 4*p
				d[i] = [4]float32(w[o : o+4])
			}
		}
		if full < np {
			for i := i0; i < i1; i++ {
				var q [4]float32
				copy(q[:], w[i*ldw+4*full:i*ldw+n])
				dst[full*k+i] = q
			}
		}
	}
}

// packPanelsNK packs the transpose of an [n, k] matrix whose row j starts at r[j·ldr]: panel p
// holds dst[p·k+i][c] = r[(4p+c)·ldr + i], zero past n.
func packPanelsNK(dst [][4]float32, r []float32, ldr, k, n int) {
	for p := range (n + 3) / 4 {
		panel := dst[p*k : p*k+k]
		if 4*p+4 <= n {
			j := 4 * p * ldr
			r0, r1, r2, r3 := r[j:j+k], r[j+ldr:j+ldr+k], r[j+2*ldr:j+2*ldr+k], r[j+3*ldr:j+3*ldr+k]
			r0, r1, r2, r3 = r0[:len(panel)], r1[:len(panel)], r2[:len(panel)], r3[:len(panel)]
			for i := range panel {
				panel[i] = [4]float32{r0[i], r1[i], r2[i], r3[i]}
			}
			continue
		}
		for i := range panel {
			var q [4]float32
			for c := range 4 {
				if j := 4*p + c; j < n {
					q[c] = r[j*ldr+i]
				}
			}
			panel[i] = q
		}
	}
}
