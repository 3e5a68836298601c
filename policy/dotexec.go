package policy

import (
	"fmt"
	"reflect"
	"runtime"
	"sync"
	_ "unsafe" // for go:linkname

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// The Go backend spends three quarters of a training step in DotGeneral (measured with pprof at
// the quickstart shape): it normalises both operands, copies them into 32×32 blocks and
// multiplies those with a generic Go loop, ~9 GFLOP/s on the two build-machine cores. The
// executor registered below computes float32 DotGenerals with the host path's FMA panel kernel
// (hostkernels.go) instead: the lhs is brought to [batch, m, k] (no copy when it already is), the
// rhs is packed into 4-wide column panels, and rows are split between the cores. Each output is
// computed by the same instructions whatever the split, so results do not depend on scheduling.
// Other dtypes, and any node whose parameters cannot be read, go to the backend's own executor.
//
// Like the gradient re-registration in dotgrad.go, it reaches into gomlx v0.26.0 internals: the
// backend's executor table (by linkname) and the fields of its DotGeneral parameters (by
// reflection, checked on every call; a mismatch falls back rather than guessing).

// simplegoExecutor is the signature of the Go backend's single-output node executors.
type simplegoExecutor = func(*simplego.Backend, *simplego.Node, []*simplego.Buffer, []bool) (*simplego.Buffer, error)

//go:linkname simplegoNodeExecutors github.com/gomlx/gomlx/backends/simplego.nodeExecutors
var simplegoNodeExecutors [backends.OpTypeLast]simplegoExecutor

func init() {
	overrideExecutor(backends.OpTypeDotGeneral, execDotGeneralFloat32)
}

// fastExecutor runs a node of the Go backend; ok is false when it does not handle the node, which
// then goes to the backend's own executor.
type fastExecutor func(b *simplego.Backend, node *simplego.Node, in []*simplego.Buffer) (out *simplego.Buffer, ok bool, err error)

// overrideExecutor makes the Go backend run op through fast, falling back to the executor it had.
// Without one (not the executor table this was written for) the backend is left alone.
func overrideExecutor(op backends.OpType, fast fastExecutor) {
	generic := simplegoNodeExecutors[op]
	if generic == nil {
		return
	}
	simplegoNodeExecutors[op] = func(b *simplego.Backend, node *simplego.Node, in []*simplego.Buffer, owned []bool) (*simplego.Buffer, error) {
		if out, ok, err := fast(b, node, in); ok {
			return out, err
		}
		return generic(b, node, in, owned)
	}
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
	data := reflect.ValueOf(node).Elem().FieldByName("data")
	if !data.IsValid() || data.Kind() != reflect.Interface || data.IsNil() {
		return p, false
	}
	v := data.Elem()
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return p, false
	}
	v = v.Elem()
	ints := func(name string) ([]int, bool) {
		f := v.FieldByName(name)
		if !f.IsValid() || f.Kind() != reflect.Slice || f.Type().Elem().Kind() != reflect.Int {
			return nil, false
		}
		out := make([]int, f.Len())
		for i := range out {
			out[i] = int(f.Index(i).Int())
		}
		return out, true
	}
	size := func(name string) (int, bool) {
		f := v.FieldByName(name)
		if !f.IsValid() || f.Kind() != reflect.Int {
			return 0, false
		}
		return int(f.Int()), true
	}
	var oks [8]bool
	p.lhsContracting, oks[0] = ints("lhsContractingAxes")
	p.lhsBatch, oks[1] = ints("lhsBatchAxes")
	p.rhsContracting, oks[2] = ints("rhsContractingAxes")
	p.rhsBatch, oks[3] = ints("rhsBatchAxes")
	p.batch, oks[4] = size("batchSize")
	p.m, oks[5] = size("lhsCrossSize")
	p.n, oks[6] = size("rhsCrossSize")
	p.k, oks[7] = size("contractingSize")
	for _, o := range oks {
		if !o {
			return p, false
		}
	}
	return p, true
}

// execDotGeneralFloat32 runs a float32 DotGeneral node; ok is false when it is not one (or its
// operands do not match its parameters), for the backend's own executor to handle.
func execDotGeneralFloat32(b *simplego.Backend, node *simplego.Node, in []*simplego.Buffer) (*simplego.Buffer, bool, error) {
	if len(in) != 2 {
		return nil, false, nil
	}
	p, ok := readDotParams(node)
	if !ok {
		return nil, false, nil
	}
	lhsShape, err1 := b.BufferShape(in[0])
	rhsShape, err2 := b.BufferShape(in[1])
	lhsAny, err3 := b.BufferData(in[0])
	rhsAny, err4 := b.BufferData(in[1])
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return nil, false, nil
	}
	lhs, ok1 := lhsAny.([]float32)
	rhs, ok2 := rhsAny.([]float32)
	if !ok1 || !ok2 || lhsShape.DType != dtypes.Float32 || rhsShape.DType != dtypes.Float32 ||
		!dotOperandMatches(lhsShape.Dimensions, p.lhsBatch, p.lhsContracting, p.batch, p.m, p.k) ||
		!dotOperandMatches(rhsShape.Dimensions, p.rhsBatch, p.rhsContracting, p.batch, p.n, p.k) {
		return nil, false, nil
	}
	out := b.NewBuffer(shapes.Make(dtypes.Float32, p.batch, p.m, p.n))
	if out == nil {
		return nil, true, fmt.Errorf("policy: DotGeneral: the Go backend is finalized")
	}
	outAny, err := b.BufferData(out)
	if err != nil {
		return nil, true, err
	}
	dotFloat32(outAny.([]float32), lhs, lhsShape.Dimensions, p.lhsBatch, p.lhsContracting,
		rhs, rhsShape.Dimensions, p.rhsBatch, p.rhsContracting, p.batch, p.m, p.n, p.k, runtime.GOMAXPROCS(0))
	return out, true, nil
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
// order) into out, [batch, m, n] row-major, using up to workers goroutines.
func dotFloat32(out, lhs []float32, lhsDims, lhsBatch, lhsContracting []int,
	rhs []float32, rhsDims, rhsBatch, rhsContracting []int, batch, m, n, k, workers int) {
	// lhs as [batch, m, k]: rows of the panel kernel.
	a := transposeTo(lhs, lhsDims, normalOrder(len(lhsDims), lhsBatch, lhsContracting, true))
	// rhs packed into 4-wide column panels per example, read from [batch, n, k] or [batch, k, n],
	// whichever is its memory order (a transposed copy only when neither is).
	np := (n + 3) / 4
	panels := make([][4]float32, batch*np*k)
	if freeFirst := normalOrder(len(rhsDims), rhsBatch, rhsContracting, true); keepsOrder(rhsDims, freeFirst) {
		for e := range batch {
			packPanelsNK(panels[e*np*k:(e+1)*np*k], rhs[e*n*k:(e+1)*n*k], k, n)
		}
	} else {
		r := transposeTo(rhs, rhsDims, normalOrder(len(rhsDims), rhsBatch, rhsContracting, false))
		for e := range batch {
			packPanelsKN(panels[e*np*k:(e+1)*np*k], r[e*k*n:(e+1)*k*n], k, n)
		}
	}
	zeros := make([]float32, 4*np)
	ldo := n
	if n%4 != 0 {
		ldo = 4 * np // the kernel writes whole panels: pad each row, copy back below
	}

	// Work units: (example, row range). Split rows so that there are at least `workers` units
	// when the problem is large enough to be worth a goroutine.
	const minMACs = 1 << 15
	chunks := 1
	if workers > 1 && batch*m*n*k >= 2*minMACs {
		chunks = min(workers, max(1, (m+3)/4))
		if batch >= workers {
			chunks = 1
		}
	}
	run := func(e, r0, r1 int, buf []float32) {
		x, w := a[(e*m+r0)*k:], panels[e*np*k:]
		if ldo == n {
			matmulPanels(out[(e*m+r0)*n:], n, x, k, r1-r0, k, w, k, np, zeros, epiStore)
			return
		}
		matmulPanels(buf, ldo, x, k, r1-r0, k, w, k, np, zeros, epiStore)
		for i := r0; i < r1; i++ {
			copy(out[(e*m+i)*n:(e*m+i+1)*n], buf[(i-r0)*ldo:])
		}
	}
	units := batch * chunks
	nw := min(workers, units)
	if batch*m*n*k < 2*minMACs {
		nw = 1
	}
	var wg sync.WaitGroup
	for w := range nw {
		wg.Add(1)
		work := func() {
			defer wg.Done()
			var buf []float32
			if ldo != n {
				buf = make([]float32, ((m+chunks-1)/chunks)*ldo)
			}
			for u := w; u < units; u += nw {
				e, c := u/chunks, u%chunks
				r0, r1 := c*m/chunks, (c+1)*m/chunks
				if r0 < r1 {
					run(e, r0, r1, buf)
				}
			}
		}
		if w == nw-1 {
			work()
		} else {
			go work()
		}
	}
	wg.Wait()
}

// normalOrder is the axis permutation that brings an operand to [batch, free, contracting]
// (contractingLast) or [batch, contracting, free].
func normalOrder(rank int, batch, contracting []int, contractingLast bool) []int {
	free := freeAxes(rank, contracting, batch)
	perm := append([]int(nil), batch...)
	if contractingLast {
		perm = append(append(perm, free...), contracting...)
	} else {
		perm = append(append(perm, contracting...), free...)
	}
	return perm
}

// transposeTo returns x (row-major with dims) with its axes permuted by perm (output axis i is
// input axis perm[i]); x itself when perm keeps the memory order.
func transposeTo(x []float32, dims, perm []int) []float32 {
	if keepsOrder(dims, perm) {
		return x
	}
	rank := len(dims)
	strides := make([]int, rank)
	s := 1
	for a := rank - 1; a >= 0; a-- {
		strides[a] = s
		s *= dims[a]
	}
	outDims := make([]int, rank)
	inStride := make([]int, rank) // input stride of each output axis
	for i, a := range perm {
		outDims[i] = dims[a]
		inStride[i] = strides[a]
	}
	out := make([]float32, len(x))
	if rank == 0 || len(x) == 0 {
		copy(out, x)
		return out
	}
	// Iterate the output in order; the innermost axis is a strided copy.
	idx := make([]int, rank)
	last := rank - 1
	inner, innerStride := outDims[last], inStride[last]
	for o := 0; o < len(out); o += inner {
		base := 0
		for i := range last {
			base += idx[i] * inStride[i]
		}
		dst := out[o : o+inner]
		for j := range dst {
			dst[j] = x[base+j*innerStride]
		}
		for i := last - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < outDims[i] {
				break
			}
			idx[i] = 0
		}
	}
	return out
}

// keepsOrder reports whether permuting axes by perm leaves the row-major memory order unchanged:
// true when the axes of size > 1 stay in increasing order.
func keepsOrder(dims, perm []int) bool {
	prev := -1
	for _, a := range perm {
		if dims[a] == 1 {
			continue
		}
		if a < prev {
			return false
		}
		prev = a
	}
	return true
}

// packPanelsKN is packPanels (scale 1) with whole-panel copies: w is row-major [k, n].
func packPanelsKN(dst [][4]float32, w []float32, k, n int) {
	np, full := (n+3)/4, n/4
	for i := range k {
		row := w[i*n : i*n+n]
		for p := range full {
			dst[p*k+i] = [4]float32(row[4*p : 4*p+4])
		}
		if full < np {
			var q [4]float32
			copy(q[:], row[4*full:])
			dst[full*k+i] = q
		}
	}
}

// packPanelsNK packs the transpose of a row-major [n, k] matrix r: panel p holds
// dst[p·k+i][c] = r[(4p+c)·k + i], zero past n.
func packPanelsNK(dst [][4]float32, r []float32, k, n int) {
	for p := range (n + 3) / 4 {
		panel := dst[p*k : p*k+k]
		if 4*p+4 <= n {
			r0, r1, r2, r3 := r[(4*p)*k:(4*p+1)*k], r[(4*p+1)*k:(4*p+2)*k], r[(4*p+2)*k:(4*p+3)*k], r[(4*p+3)*k:(4*p+4)*k]
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
					q[c] = r[j*k+i]
				}
			}
			panel[i] = q
		}
	}
}
