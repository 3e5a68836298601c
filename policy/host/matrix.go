package host

import "github.com/graftrl/graftrl/internal/kernels"

// matrix is one of the decoder's weight matrices, k rows by 4·np columns (padded to a multiple
// of four), in 4-wide column panels for kernels.MatmulPanels and, where the CPU runs the groups
// kernel (kernels.HasGroups), its first 16·ng columns (ng = ⌊np/4⌋) also row-major for
// kernels.MatmulGroups. The two kernels give the same results bit for bit (the rest of the
// columns stay on the panels), so which one runs changes the speed of a step, never its output.
type matrix struct {
	panels [][4]float32 // [np][k][4]
	groups []float32    // [k][16·ng], nil without the groups kernel
	k, np  int
	ng     int
}

// newMatrix allocates a k × cols matrix (cols a multiple of 4).
func newMatrix(k, cols int) matrix {
	m := matrix{panels: make([][4]float32, k*cols/4), k: k, np: cols / 4}
	if kernels.HasGroups() {
		m.ng = m.np / 4
		m.groups = make([]float32, k*16*m.ng)
	}
	return m
}

// regroup copies the panels' first 16·ng columns into the row-major copy; call it after
// writing the panels.
func (m *matrix) regroup() {
	w := 16 * m.ng
	for p := range 4 * m.ng {
		panel := m.panels[p*m.k : (p+1)*m.k]
		for i, q := range panel {
			copy(m.groups[i*w+4*p:][:4], q[:])
		}
	}
}

// mul is kernels.MatmulPanels(out, ldo, x, ldx, n, k, panels, k, np, bias, epi): for each of n
// rows of x, bias + x·W through the epilogue into out.
func (m *matrix) mul(out []float32, ldo int, x []float32, ldx, n int, bias []float32, epi int) {
	g := 0
	if m.ng > 0 {
		g = 16 * m.ng
		// Two groups (32 columns) at a time across all n rows: their k × 32 weights stay in L1
		// while the kernel's blocks of four rows pass, where one call over all groups would
		// fetch every weight again for each block of rows.
		for c := 0; c < m.ng; c += 2 {
			w := min(2, m.ng-c)
			kernels.MatmulGroups(out[16*c:], ldo, x, ldx, 1, n, m.k, m.groups[16*c:], g, 16, w, bias[16*c:16*(c+w)], epi)
		}
		if m.np == 4*m.ng {
			return
		}
	}
	kernels.MatmulPanels(out[g:], ldo, x, ldx, n, m.k, m.panels[g/4*m.k:], m.k, m.np-g/4, bias[g:], epi)
}
