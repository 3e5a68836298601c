package host

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/graftrl/graftrl/internal/kernels"
)

// TestPanelsGroupedMatchPanels checks the Llama's matrix layout against kernels.MatmulPanels
// over all columns in 4-wide panels, bit for bit, for both epilogues: products of k = 37 rows
// (odd, so the kernels' step pairs leave one) by 72 columns (4 blocks of 16 on the groups
// kernel where the CPU has it, 2 panels left), 52 (3 blocks: a pair and one alone, 1 panel
// left), 48 (3 blocks, none left) and 8 (no block, 2 panels), from two inputs side by side
// (packT); for 1 to 8 rows of x (the kernels' blocks of four rows leaving 0, 1, 2 or 3), and
// with 2 000 rows, where the worker pool splits the blocks and the panels (an odd cut of the
// panels, which MatmulPanels takes two at a time, changed column 64's sum before the cuts were
// aligned to pairs). Row 0, column 41 (or the last) is
// also checked against its float64 dot product. The same with k = 777, summed at once and in
// parts of groupPart steps (the last one odd), as the 8-lane kernel's CPUs sum it.
func TestPanelsGroupedMatchPanels(t *testing.T) {
	for _, k := range []int{37, 777} {
		for _, part := range []int{0, groupPart} {
			if part == 0 || k > part {
				testPanelsGroupedMatchPanels(t, k, part)
			}
		}
	}
}

func testPanelsGroupedMatchPanels(t *testing.T, k, part int) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{72, 52, 48, 8} {
		a, b := make([]float32, (n/2+4)*k), make([]float32, (n/2-4)*k) // two inputs, n columns together
		if n == 8 {
			a, b = make([]float32, 4*k), make([]float32, 4*k)
		}
		for i := range a {
			a[i] = rng.Float32()*2 - 1
		}
		for i := range b {
			b[i] = rng.Float32()*2 - 1
		}
		na := len(a) / k
		m := packT(k, a, b)
		m.part = part
		wantNG := 0
		if kernels.HasGroups() {
			wantNG = n / 16
		}
		if m.np != n/4 || m.ng != wantNG || len(m.p) != (n/4-4*wantNG)*k || len(m.g) != wantNG*16*k {
			t.Fatalf("%d columns: np %d, ng %d, %d panel rows, %d block values (groups kernel %v)", n, m.np, m.ng, len(m.p), len(m.g), kernels.HasGroups())
		}
		// The reference: every column in 4-wide panels, from the transpose of a and b side by side.
		wt := make([]float32, k*n)
		for j := range n {
			for i := range k {
				if j < na {
					wt[i*n+j] = a[j*k+i]
				} else {
					wt[i*n+j] = b[(j-na)*k+i]
				}
			}
		}
		ref := make([][4]float32, k*n/4)
		kernels.PackPanels(ref, wt, k, n, 1)
		zeros := make([]float32, n)
		for _, rows := range []int{1, 2, 3, 4, 5, 6, 7, 8, 2000} {
			x := make([]float32, rows*k)
			for i := range x {
				x[i] = rng.Float32()*2 - 1
			}
			for _, epi := range []int{kernels.EpiStore, kernels.EpiAdd} {
				got, want := make([]float32, rows*n), make([]float32, rows*n)
				for i := range got {
					got[i] = float32(i%97) / 7
					want[i] = got[i]
				}
				m.mul(got, n, x, k, rows, zeros, epi)
				kernels.MatmulPanels(want, n, x, k, rows, k, ref, k, n/4, zeros, epi)
				if !slices.Equal(got, want) {
					for i := range got {
						if got[i] != want[i] {
							t.Logf("first difference at row %d column %d: %v vs %v", i/n, i%n, got[i], want[i])
							break
						}
					}
					t.Fatalf("k %d, parts of %d, %d columns, %d rows, epilogue %d: grouped layout differs from the panels", k, part, n, rows, epi)
				}
				c := min(41, n-1)
				var dot float64
				for i := range k {
					dot += float64(x[i]) * float64(wt[i*n+c])
				}
				base := float64(0)
				if epi == kernels.EpiAdd {
					base = float64(float32(c%97) / 7)
				}
				if d, tol := float64(got[c])-base-dot, max(1e-4, 1e-6*float64(k)); d > tol || d < -tol {
					t.Errorf("k %d, %d columns, %d rows, epilogue %d: out[0][%d] = %g, want %g", k, n, rows, epi, c, got[c], base+dot)
				}
			}
		}
	}
}

// TestSwiGLURowsSplit checks swiGLURows on 3 rows of 700 values (split across the worker pool
// in parts that cross rows where it has two or more workers) against the formula on math.Exp,
// value by value (exactly: the exponentials run on the Exp kernel), with the up halves left
// alone.
func TestSwiGLURowsSplit(t *testing.T) {
	const n, hidden = 3, 700
	rng := rand.New(rand.NewPCG(5, 6))
	gu := make([]float32, n*2*hidden)
	for i := range gu {
		gu[i] = rng.Float32()*8 - 4
	}
	// gates where e^−g overflows float32, saturates or is tiny: the Exp kernel's range limits
	for j, g := range []float32{-100, -89, -88.7, -87, 87, 88.7, 104, 110, 0, 1e-30} {
		gu[j*37] = g
	}
	orig := slices.Clone(gu)
	swiGLURows(gu, n, hidden)
	for r := range n {
		for j := range hidden {
			g, u := orig[r*2*hidden+j], orig[(r*2+1)*hidden+j]
			if want := g / (1 + float32(math.Exp(float64(-g)))) * u; gu[r*2*hidden+j] != want {
				t.Fatalf("row %d value %d: %g, want %g", r, j, gu[r*2*hidden+j], want)
			}
			if gu[(r*2+1)*hidden+j] != u {
				t.Fatalf("row %d: up value %d changed", r, j)
			}
		}
	}
}
