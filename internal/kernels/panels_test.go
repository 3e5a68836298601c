package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// MatmulPanels (the FMA kernel where the CPU has one) and the Go loop against float64 sums, for
// row counts on either side of the kernel's blocks of four and both epilogues.
func TestMatmulPanels(t *testing.T) {
	for name, kernel := range map[string]func([]float32, int, []float32, int, int, int, [][4]float32, int, int, []float32, int){
		"MatmulPanels": MatmulPanels, "matmulPanelsGo": matmulPanelsGo} {
		t.Run(name, func(t *testing.T) { testMatmulKernel(t, kernel) })
	}
}

func testMatmulKernel(t *testing.T, kernel func([]float32, int, []float32, int, int, int, [][4]float32, int, int, []float32, int)) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, sz := range [][3]int{{1, 1, 1}, {3, 5, 7}, {2, 16, 4}, {5, 9, 13}, {4, 3, 8}, {8, 0, 4}, {17, 64, 36}} {
		n, k, m := sz[0], sz[1], sz[2]
		mp := (m + 3) &^ 3
		x := make([]float32, n*(k+2)) // row stride k+2: only the first k values count
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		w := make([]float32, k*m)
		for i := range w {
			w[i] = float32(rng.NormFloat64())
		}
		b := make([]float32, m)
		for i := range b {
			b[i] = float32(rng.NormFloat64())
		}
		panels := make([][4]float32, k*mp/4)
		PackPanels(panels, w, k, m, 1)
		bias := make([]float32, mp)
		PackBias(bias, b, 1)
		for _, epi := range []int{EpiStore, EpiAdd} {
			out := make([]float32, n*mp)
			for i := range out {
				out[i] = 1
			}
			kernel(out, mp, x, k+2, n, k, panels, k, mp/4, bias, epi)
			for r := range n {
				for j := range mp {
					want := 0.0
					if j < m {
						want = float64(b[j])
						for i := range k {
							want += float64(x[r*(k+2)+i]) * float64(w[i*m+j])
						}
					}
					switch epi {
					case EpiAdd:
						want++
					}
					if got := float64(out[r*mp+j]); math.Abs(got-want) > 1e-4*(1+math.Abs(want)) {
						t.Fatalf("n%d k%d m%d epi %d: out[%d][%d] = %g, want %g", n, k, m, epi, r, j, got, want)
					}
				}
			}
		}
	}
}

// A row's result must not depend on the rows computed with it (the FMA kernel takes rows in
// blocks of four): a decoder's output must not depend on how rows are split across workers.
func TestMatmulRowsIndependent(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, k := range []int{1, 2, 7, 16, 33} {
		for _, np := range []int{1, 2, 3, 5} {
			const n = 9
			x := make([]float32, n*k)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			w := make([][4]float32, np*k)
			for i := range w {
				for c := range 4 {
					w[i][c] = float32(rng.NormFloat64())
				}
			}
			bias := make([]float32, 4*np)
			for i := range bias {
				bias[i] = float32(rng.NormFloat64())
			}
			all := make([]float32, n*4*np)
			MatmulPanels(all, 4*np, x, k, n, k, w, k, np, bias, EpiStore)
			for r := range n {
				one := make([]float32, 4*np)
				MatmulPanels(one, 0, x[r*k:], k, 1, k, w, k, np, bias, EpiStore)
				for j, v := range one {
					if v != all[r*4*np+j] {
						t.Fatalf("k %d, np %d, row %d: alone %g, in a block %g", k, np, r, v, all[r*4*np+j])
					}
				}
			}
		}
	}
}
