package kernels

import (
	"fmt"
	"unsafe"
)

// MatmulGroups computes, for each of n rows r (row r's value at step i is x[r·rs + i·is]) and
// each of ng groups of 16 columns of w (column 16g+c's value at step i is w[g·gs + i·ws + c]),
// bias[16g+c] + Σ_i x·w (no bias when bias is nil) with the arithmetic of MatmulPanels on the same
// columns as two pairs of panels, and applies the epilogue (EpiStore or EpiAdd) to
// out[r·ldo + 16g + c], after the bounds checks, on the AVX-512 kernel of groups_amd64.s or, on
// a CPU without AVX-512, the 8-lane FMA kernel of groups_fma_amd64.s, which gives the same bits
// (callers check HasGroups).
func MatmulGroups(out []float32, ldo int, x []float32, rs, is, n, k int, w []float32, ws, gs, ng int, bias []float32, epi int) {
	matmulGroupsOn(useAVX512, out, ldo, x, rs, is, n, k, w, ws, gs, ng, bias, epi)
}

// matmulGroupsOn is MatmulGroups on the AVX-512 kernel (wide) or the FMA kernel.
func matmulGroupsOn(wide bool, out []float32, ldo int, x []float32, rs, is, n, k int, w []float32, ws, gs, ng int, bias []float32, epi int) {
	if n <= 0 || ng <= 0 {
		return
	}
	checkGroups(out, ldo, x, rs, is, n, k, w, ws, gs, ng, bias, epi)
	var bp *float32
	if bias != nil {
		bp = &bias[0]
	}
	matmulGroups(wide, &out[0], ldo, &x[0], rs, is, n, k, &w[0], ws, gs, ng, bp, epi, nil, 0, 0)
}

// GroupsPart says which part of a long sum a call of MatmulGroupsPart computes.
type GroupsPart struct {
	// Resume starts the sums from the parts stored by the previous call (else from the bias).
	Resume bool
	// Split stores the even- and odd-step sums apart, for the next call (else their sum).
	Split bool
}

// MatmulGroupsPart is MatmulGroups over k steps of a longer sum, for sums too long to keep a
// block of w in cache: x and w start at the part's first step, and the kernel's two chains per
// output (even and odd steps) are carried from one part to the next in out and odd (of out's
// layout), so that the parts give bit for bit what one call over all the steps gives. Every part
// but the last stores its sums apart (Split) and must have an even number of steps; every part
// but the first resumes them. The bias enters in the first part. Parts keep their sums in out, so
// the epilogue of a sum in several parts is EpiStore.
func MatmulGroupsPart(out, odd []float32, ldo int, x []float32, rs, is, n, k int, w []float32, ws, gs, ng int, bias []float32, epi int, part GroupsPart) {
	matmulGroupsPartOn(useAVX512, out, odd, ldo, x, rs, is, n, k, w, ws, gs, ng, bias, epi, part)
}

// matmulGroupsPartOn is MatmulGroupsPart on the AVX-512 kernel (wide) or the FMA kernel.
func matmulGroupsPartOn(wide bool, out, odd []float32, ldo int, x []float32, rs, is, n, k int, w []float32, ws, gs, ng int, bias []float32, epi int, part GroupsPart) {
	if n <= 0 || ng <= 0 {
		return
	}
	checkGroups(out, ldo, x, rs, is, n, k, w, ws, gs, ng, bias, epi)
	if (part.Resume || part.Split) && (len(odd) < (n-1)*ldo+16*ng || epi != EpiStore) || part.Split && k%2 != 0 {
		panic(fmt.Sprintf("kernels: MatmulGroupsPart: odd holds %d values (want %d), epilogue %d (want EpiStore), k %d (a split part needs an even k)",
			len(odd), (n-1)*ldo+16*ng, epi, k))
	}
	var bp, op *float32
	if bias != nil {
		bp = &bias[0]
	}
	if len(odd) > 0 {
		op = &odd[0]
	}
	var resume, split int
	if part.Resume {
		resume = 1
	}
	if part.Split {
		split = 1
	}
	matmulGroups(wide, &out[0], ldo, &x[0], rs, is, n, k, &w[0], ws, gs, ng, bp, epi, op, resume, split)
}

// matmulGroups runs the AVX-512 kernel (wide) or the FMA kernel.
func matmulGroups(wide bool, out *float32, ldo int, x *float32, rs, is, n, k int, w *float32, ws, gs, ng int, bias *float32, add int, odd *float32, resume, split int) {
	if wide {
		matmulGroupsAVX512(out, ldo, x, rs, is, n, k, w, ws, gs, ng, bias, add, odd, resume, split)
		return
	}
	// Blocks of groups whose k steps of w fit in L1 (fmaGroupBytes) over all the rows: the block
	// stays in L1 while the blocks of six and three rows pass (one call over all the groups would
	// fetch every group's w again, from L2, for each block of rows).
	gb := max(1, fmaGroupBytes/(64*k))
	for g := 0; g < ng; g += gb {
		o := unsafe.Add(unsafe.Pointer(out), 64*g)
		var b, od unsafe.Pointer
		if bias != nil {
			b = unsafe.Add(unsafe.Pointer(bias), 64*g)
		}
		if odd != nil {
			od = unsafe.Add(unsafe.Pointer(odd), 64*g)
		}
		wg := (*float32)(unsafe.Add(unsafe.Pointer(w), 4*g*gs))
		matmulGroupsFMA((*float32)(o), ldo, x, rs, is, n, k, wg, ws, gs, min(gb, ng-g), (*float32)(b), add, (*float32)(od), resume, split)
	}
}

// fmaGroupBytes is the most bytes of w a call of the FMA kernel is given (half of a 32 KB L1).
const fmaGroupBytes = 16 << 10

// checkGroups panics unless MatmulGroups' operands hold every value its arguments reach.
func checkGroups(out []float32, ldo int, x []float32, rs, is, n, k int, w []float32, ws, gs, ng int, bias []float32, epi int) {
	if k <= 0 || rs < 0 || is < 0 || ldo < 0 || ws < 0 || gs < 0 || len(out) < (n-1)*ldo+16*ng ||
		len(x) <= (n-1)*rs+(k-1)*is || len(w) < (ng-1)*gs+(k-1)*ws+16 || (bias != nil && len(bias) < 16*ng) ||
		(epi != EpiStore && epi != EpiAdd) {
		panic(fmt.Sprintf("kernels: MatmulGroups out of bounds (n %d, k %d, ng %d, ldo %d, rs %d, is %d, ws %d, gs %d, epi %d; len out %d, x %d, w %d, bias %d)",
			n, k, ng, ldo, rs, is, ws, gs, epi, len(out), len(x), len(w), len(bias)))
	}
}
