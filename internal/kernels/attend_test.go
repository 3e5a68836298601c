package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAttendKernels checks AttendScores and AttendValues against float64 sums for head widths
// 32, 96 (32-lane passes of the values), 64 and 128 (64-lane passes) on the assembly kernel
// where the CPU has FMA, and 24 (always the Go loop, which must match the same sums), over
// t = 1 … 8, 130 and 131 positions — the scores' last group of four keys left with 0, 1, 2 and
// 3 — in rows of a wider stride, and that neither writes outside its output.
func TestAttendKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, hd := range []int{24, 32, 64, 96, 128} {
		for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 130, 131} {
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
// q = (1, 1, …) and a key holding 2^24 in lane 0 and 1 in lanes 4 and 5, the lanes add as
// ((l0+l1)+(l2+l3)) + ((l4+l5)+(l6+l7)) = 2^24 + 2, which neither a loop in order of i nor the
// pairing (l0+l4)+(l1+l5) gives (2^24 + 1 rounds to 2^24). And a key's score is the same
// whether it is scored in a group of four or alone: seven random keys scored together equal
// each scored by itself, bit for bit.
func TestAttendKernelsOrder(t *testing.T) {
	if !useFMA {
		t.Skip("no FMA kernel on this CPU")
	}
	q := make([]float32, 32)
	for i := range q {
		q[i] = 1
	}
	key := make([]float32, 32)
	key[0], key[4], key[5] = 1<<24, 1, 1
	for _, n := range []int{1, 4} { // alone, and as each of a group of four equal keys
		keys := make([]float32, 0, 32*n)
		for range n {
			keys = append(keys, key...)
		}
		s := make([]float32, n)
		AttendScores(s, q, keys, 32, 1)
		for j, v := range s {
			if v != 1<<24+2 {
				t.Errorf("t %d: score %d = %v, want 2^24 + 2", n, j, v)
			}
		}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	const hd, stride, n = 64, 200, 7
	q = make([]float32, hd)
	for i := range q {
		q[i] = rng.Float32()*2 - 1
	}
	keys := make([]float32, (n-1)*stride+hd)
	for i := range keys {
		keys[i] = rng.Float32()*2 - 1
	}
	all := make([]float32, n)
	AttendScores(all, q, keys, stride, 0.3)
	for j := range n {
		one := make([]float32, 1)
		AttendScores(one, q, keys[j*stride:j*stride+hd], stride, 0.3)
		if one[0] != all[j] {
			t.Errorf("key %d: %v alone, %v among %d", j, one[0], all[j], n)
		}
	}
}
