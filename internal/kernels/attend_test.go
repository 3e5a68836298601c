package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAttendKernels checks AttendScores and AttendValues against float64 sums for head widths
// 32, 64 and 128 (the assembly kernel where the CPU has FMA) and 24 (always the Go loop, which
// must match the same sums), over t = 1, 7 and 130 positions in rows of a wider stride, and
// that neither writes outside its output.
func TestAttendKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, hd := range []int{24, 32, 64, 128} {
		for _, n := range []int{1, 7, 130} {
			stride := 3*hd + 8
			q := make([]float32, hd)
			for i := range q {
				q[i] = rng.Float32()*2 - 1
			}
			keys := make([]float32, (n-1)*stride+hd)
			for i := range keys {
				keys[i] = rng.Float32()*2 - 1
			}
			s := make([]float32, n+1) // one more, to catch a write past t
			s[n] = 42
			AttendScores(s[:n], q, keys, stride, 0.125)
			for j := range n {
				var want float64
				for i := range hd {
					want += float64(q[i]) * float64(keys[j*stride+i])
				}
				want *= 0.125
				if math.Abs(float64(s[j])-want) > 1e-5*(1+math.Abs(want)) {
					t.Fatalf("hd %d t %d: score %d = %g, want %g", hd, n, j, s[j], want)
				}
			}
			if s[n] != 42 {
				t.Fatalf("hd %d t %d: AttendScores wrote past its scores", hd, n)
			}
			p := make([]float32, n)
			for j := range p {
				p[j] = rng.Float32()
			}
			o := make([]float32, hd+1)
			for i := range o {
				o[i] = 9 // overwritten, not added to
			}
			AttendValues(o[:hd], p, keys, stride)
			for i := range hd {
				var want float64
				for j := range n {
					want += float64(p[j]) * float64(keys[j*stride+i])
				}
				if math.Abs(float64(o[i])-want) > 1e-5*(1+math.Abs(want)) {
					t.Fatalf("hd %d t %d: value %d = %g, want %g", hd, n, i, o[i], want)
				}
			}
			if o[hd] != 9 {
				t.Fatalf("hd %d t %d: AttendValues wrote past its output", hd, n)
			}
		}
	}
}

// TestAttendKernelsOrder pins the assembly kernel's reduction order where it runs: with
// q = (1, 1, …) and a key holding 1 in lanes 0 and 4 and 2^24 in lane 1, the lanes add as
// ((l0 + l4) + (l1 + l5)) + … = (1 + 1) + 2^24 = 2^24 + 2, which a loop in order of i does not
// give (2^24 + 1 rounds to 2^24, twice).
func TestAttendKernelsOrder(t *testing.T) {
	if !useFMA {
		t.Skip("no FMA kernel on this CPU")
	}
	q := make([]float32, 32)
	for i := range q {
		q[i] = 1
	}
	key := make([]float32, 32)
	key[0], key[4], key[1] = 1, 1, 1<<24
	s := make([]float32, 1)
	AttendScores(s, q, key, 32, 1)
	if s[0] != 1<<24+2 {
		t.Errorf("score %v, want 2^24 + 2 (lanes 0 and 4 added first)", s[0])
	}
}
