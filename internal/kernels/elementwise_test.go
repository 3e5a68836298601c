package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// SumRowsF32AVX gives every column the Go loop's in-order sum from +0, bit for bit: blocks of 32
// columns and of 8 and both together, no rows to many, values that cancel, −0 (a column of −0s
// sums to +0), infinities and a NaN; the columns past n and the values between rows untouched.
func TestSumRowsF32AVX(t *testing.T) {
	if !HasAVX() {
		t.Skip("no AVX on this CPU")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{8, 16, 32, 40, 64, 72, 104} {
		for _, rows := range []int{0, 1, 2, 7, 300} {
			ld := n + 5
			src := make([]float32, max(1, rows*ld))
			for i := range src {
				src[i] = float32(rng.NormFloat64()) * float32(math.Pow(10, float64(rng.IntN(9)-4)))
			}
			if rows > 2 {
				src[ld+3] = float32(math.Inf(1))
				src[2*ld+3] = float32(math.Inf(-1)) // column 3: NaN from then on
				src[ld+n-1] = float32(math.NaN())
				for r := range rows {
					src[r*ld+1] = float32(math.Copysign(0, -1))
				}
			}
			want := make([]float32, n+8)
			got := make([]float32, n+8)
			for j := range want {
				want[j], got[j] = 7, 7
			}
			for j := range n {
				var acc float32
				for r := range rows {
					acc += src[r*ld+j]
				}
				want[j] = acc
			}
			SumRowsF32AVX(&got[0], &src[0], rows, ld, n)
			for j := range want {
				if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
					t.Fatalf("n %d rows %d: column %d = %g (%#x), want %g (%#x)", n, rows, j, got[j],
						math.Float32bits(got[j]), want[j], math.Float32bits(want[j]))
				}
			}
		}
	}
}

// TransposeF32AVX moves every value to its transposed place and writes nothing else: one and
// several blocks of 8 × 8 each way, strides wider than the blocks.
func TestTransposeF32AVX(t *testing.T) {
	if !HasAVX() {
		t.Skip("no AVX on this CPU")
	}
	for _, rows := range []int{0, 8, 16, 24} {
		for _, cols := range []int{8, 16, 40} {
			lds, ldd := rows+3, cols+5
			src := make([]float32, max(1, cols*lds))
			for i := range src {
				src[i] = float32(i) + 0.5
			}
			dst := make([]float32, max(1, rows*ldd))
			for i := range dst {
				dst[i] = -1
			}
			TransposeF32AVX(&dst[0], ldd, &src[0], lds, rows, cols)
			for i := range rows {
				for j := range ldd {
					want := float32(-1)
					if j < cols {
						want = src[j*lds+i]
					}
					if got := dst[i*ldd+j]; got != want {
						t.Fatalf("rows %d cols %d: dst[%d][%d] = %g, want %g", rows, cols, i, j, got, want)
					}
				}
			}
		}
	}
}
