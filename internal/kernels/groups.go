package kernels

import "fmt"

// MatmulGroups computes, for each of n rows r (row r's value at step i is x[r·rs + i·is]) and
// each of ng groups of 16 columns of w (column 16g+c's value at step i is w[g·gs + i·ws + c]),
// bias[16g+c] + Σ_i x·w (no bias when bias is nil) with the arithmetic of MatmulPanels on the same
// columns as two pairs of panels, and applies the epilogue (EpiStore or EpiAdd) to
// out[r·ldo + 16g + c], on the AVX-512 kernel of groups_amd64.s after the bounds checks (callers
// check HasAVX512).
func MatmulGroups(out []float32, ldo int, x []float32, rs, is, n, k int, w []float32, ws, gs, ng int, bias []float32, epi int) {
	if n <= 0 || ng <= 0 {
		return
	}
	if k <= 0 || rs < 0 || is < 0 || ldo < 0 || ws < 0 || gs < 0 || len(out) < (n-1)*ldo+16*ng ||
		len(x) <= (n-1)*rs+(k-1)*is || len(w) < (ng-1)*gs+(k-1)*ws+16 || (bias != nil && len(bias) < 16*ng) ||
		(epi != EpiStore && epi != EpiAdd) {
		panic(fmt.Sprintf("kernels: MatmulGroups out of bounds (n %d, k %d, ng %d, ldo %d, rs %d, is %d, ws %d, gs %d, epi %d; len out %d, x %d, w %d, bias %d)",
			n, k, ng, ldo, rs, is, ws, gs, epi, len(out), len(x), len(w), len(bias)))
	}
	var bp *float32
	if bias != nil {
		bp = &bias[0]
	}
	matmulGroupsAVX512(&out[0], ldo, &x[0], rs, is, n, k, &w[0], ws, gs, ng, bp, epi)
}
