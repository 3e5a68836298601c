package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// MatmulGroups with a bias and either epilogue must give MatmulPanels' results bit for bit on the
// same columns (the host decoder uses whichever the CPU has, and its samples must not depend on
// it): row counts leaving 0, 1, 2 and 3 rows after the blocks of four (AVX-512) and, on the FMA
// kernel, one or two blocks of six followed by a block of three or none and 0, 1 or 2 single rows
// (8 = 6 + 2, 10 = 6 + 3 + 1, 17 = 6 + 6 + 3 + 2), odd and even k (odd: the pass of the even steps
// one step longer than the odd steps'; k 1: no odd steps), one to three groups (odd group counts
// take the one-group path; on the FMA kernel k 128 cuts three groups into blocks of two and one, k
// 300 into one each), row strides wider than k, and no bias.
func TestMatmulGroupsMatchesPanels(t *testing.T) {
	for _, wide := range groupKernels(t) {
		testMatmulGroupsMatchesPanels(t, wide)
	}
}

// groupKernels lists the groups kernels this CPU runs (wide: AVX-512), skipping t where none.
func groupKernels(t *testing.T) []bool {
	var kinds []bool
	if HasGroups() {
		kinds = append(kinds, false)
	}
	if HasAVX512() {
		kinds = append(kinds, true)
	}
	if len(kinds) == 0 {
		t.Skip("no groups kernel on this CPU")
	}
	return kinds
}

func testMatmulGroupsMatchesPanels(t *testing.T, wide bool) {
	randoms := normals(rand.New(rand.NewPCG(8, 9)))
	for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 17} {
		for _, k := range []int{1, 2, 3, 4, 5, 7, 16, 33, 64, 128, 300} {
			for _, ng := range []int{1, 2, 3} {
				m := 16 * ng
				ldx := k + 3
				x, w, b := randoms(n*ldx), randoms(k*m), randoms(m)
				panels := make([][4]float32, k*m/4)
				PackPanels(panels, w, k, m, 1)
				for _, withBias := range []bool{true, false} {
					bias := b
					if !withBias {
						bias = nil
					}
					for _, epi := range []int{EpiStore, EpiAdd} {
						start := randoms(n * m)
						want := append([]float32(nil), start...)
						pb := bias
						if pb == nil {
							pb = make([]float32, m)
						}
						MatmulPanels(want, m, x, ldx, n, k, panels, k, m/4, pb, epi)
						got := append([]float32(nil), start...)
						matmulGroupsOn(wide, got, m, x, ldx, 1, n, k, w, m, 16, ng, bias, epi)
						for i := range got {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("AVX-512 %v, n %d k %d groups %d bias %v epi %d: out[%d] = %g, panels %g",
									wide, n, k, ng, withBias, epi, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}

// A sum computed in parts by MatmulGroupsPart (even parts of various lengths, the last one odd
// or even) must be bit for bit the sum MatmulGroups computes at once, with and without a bias,
// on every path of the kernel (blocks of four rows and single rows; on the FMA kernel blocks of
// six, of three and single rows; pairs of groups and a lone group).
func TestMatmulGroupsPartsMatchWhole(t *testing.T) {
	for _, wide := range groupKernels(t) {
		testMatmulGroupsPartsMatchWhole(t, wide)
	}
}

func testMatmulGroupsPartsMatchWhole(t *testing.T, wide bool) {
	randoms := normals(rand.New(rand.NewPCG(10, 11)))
	for _, n := range []int{1, 2, 3, 4, 6, 7, 9, 10, 12} {
		for _, parts := range [][]int{{2, 1}, {4, 4}, {6, 2, 9}, {2, 2, 2, 2, 2, 3}, {32, 32, 32}} {
			k := 0
			for _, p := range parts {
				k += p
			}
			for _, ng := range []int{1, 2, 3} {
				m := 16 * ng
				ldo := m + 5
				x, w, b := randoms(n*k), randoms(k*m), randoms(m)
				for _, bias := range [][]float32{b, nil} {
					start := randoms(n * ldo)
					want := append([]float32(nil), start...)
					matmulGroupsOn(wide, want, ldo, x, k, 1, n, k, w, m, 16, ng, bias, EpiStore)
					got := append([]float32(nil), start...)
					odd := make([]float32, n*ldo)
					k0 := 0
					for i, p := range parts {
						part := GroupsPart{Resume: i > 0, Split: i < len(parts)-1}
						matmulGroupsPartOn(wide, got, odd, ldo, x[k0:], k, 1, n, p, w[k0*m:], m, 16, ng, bias, EpiStore, part)
						k0 += p
					}
					for r := range n {
						for c := range m {
							if i := r*ldo + c; math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("AVX-512 %v, n %d parts %v groups %d bias %v: out[%d][%d] = %g, at once %g",
									wide, n, parts, ng, bias != nil, r, c, got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}

// normals returns a function drawing n standard normal float32 values from rng.
func normals(rng *rand.Rand) func(n int) []float32 {
	return func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
}
