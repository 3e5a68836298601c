package host

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/graftrl/graftrl/internal/kernels"
)

// TestPanelsGroupedMatchPanels checks the Llama's matrix layout: a 37 × 72 product (18 panels:
// 4 blocks of 16 columns on the 16-lane kernel where the CPU has it, 2 panels left over) gives,
// for 5 rows (a block of four and one alone) and both epilogues, bit for bit the sums of
// kernels.MatmulPanels over all 18 panels, and packT puts column j of the packed matrix at
// row j of its inputs in order.
func TestPanelsGroupedMatchPanels(t *testing.T) {
	const k, n, rows = 37, 72, 5
	rng := rand.New(rand.NewPCG(1, 2))
	a, b := make([]float32, 40*k), make([]float32, 32*k) // two inputs: 40 and 32 output rows
	for i := range a {
		a[i] = rng.Float32()*2 - 1
	}
	for i := range b {
		b[i] = rng.Float32()*2 - 1
	}
	m := packT(k, a, b)
	if m.np != n/4 || (kernels.HasAVX512() && (m.ng != 4 || len(m.p) != 2*k)) {
		t.Fatalf("layout: np %d, ng %d, %d panel rows (AVX-512 %v)", m.np, m.ng, len(m.p), kernels.HasAVX512())
	}
	// The reference: every column in 4-wide panels, from the transpose of a and b side by side.
	wt := make([]float32, k*n)
	for j := range n {
		for i := range k {
			if j < 40 {
				wt[i*n+j] = a[j*k+i]
			} else {
				wt[i*n+j] = b[(j-40)*k+i]
			}
		}
	}
	ref := make([][4]float32, k*n/4)
	kernels.PackPanels(ref, wt, k, n, 1)
	x := make([]float32, rows*k)
	for i := range x {
		x[i] = rng.Float32()*2 - 1
	}
	zeros := make([]float32, n)
	for _, epi := range []int{kernels.EpiStore, kernels.EpiAdd} {
		got, want := make([]float32, rows*n), make([]float32, rows*n)
		for i := range got {
			got[i] = float32(i) / 7
			want[i] = got[i]
		}
		m.mul(got, n, x, k, rows, zeros, epi)
		kernels.MatmulPanels(want, n, x, k, rows, k, ref, k, n/4, zeros, epi)
		if !slices.Equal(got, want) {
			t.Errorf("epilogue %d: grouped layout differs from the panels", epi)
		}
		// And the sums are the products: row 0, column 41 is x₀ · b[1].
		var dot float64
		for i := range k {
			dot += float64(x[i]) * float64(b[k+i])
		}
		base := float64(0)
		if epi == kernels.EpiAdd {
			base = 41.0 / 7
		}
		if d := float64(got[41]) - base - dot; d > 1e-4 || d < -1e-4 {
			t.Errorf("epilogue %d: out[0][41] = %g, want %g", epi, got[41], base+dot)
		}
	}
}

// TestSwiGLURowsSplit checks swiGLURows on 3 rows of 700 values (split across the worker pool
// in parts that cross rows where it has two or more workers) against the formula, value by
// value, with the up halves left alone.
func TestSwiGLURowsSplit(t *testing.T) {
	const n, hidden = 3, 700
	rng := rand.New(rand.NewPCG(5, 6))
	gu := make([]float32, n*2*hidden)
	for i := range gu {
		gu[i] = rng.Float32()*8 - 4
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
