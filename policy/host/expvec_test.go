package host

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graftrl/graftrl/internal/kernels"
)

// expVecInputs returns n test values: normal draws at several scales (softmax scores, GELU
// pre-activations, far-out arguments) mixed with the edge cases of the algorithm.
func expVecInputs(rng *rand.Rand, n int) []float32 {
	special := []float32{0, float32(math.Copysign(0, -1)), expLowest, expLowest - 1e-5, expLowest + 1e-5,
		expMaxArg, expMaxArg + 1, -1000, 1000, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
		1e-30, -1e-30, math.MaxFloat32, -math.MaxFloat32, 0.5 * math.Ln2 / 32, -0.5 * math.Ln2 / 32}
	out := make([]float32, n)
	for i := range out {
		switch rng.IntN(4) {
		case 0:
			out[i] = special[rng.IntN(len(special))]
		case 1:
			out[i] = float32(rng.NormFloat64() * 3)
		case 2:
			out[i] = float32(rng.NormFloat64() * 40)
		default:
			out[i] = float32(rng.Float64()*200 - 150)
		}
	}
	return out
}

// sameBits reports whether a and b are the same float32, any NaN matching any NaN (the NaN
// payloads of the scalar and vector instructions may differ).
func sameBits(a, b float32) bool {
	if a != a || b != b {
		return a != a && b != b
	}
	return math.Float32bits(a) == math.Float32bits(b)
}

// TestExpVecBitIdentical checks the 16-lane kernel against expShifted's scalar loop value by
// value, at lengths that leave every possible tail, with shifts m of both signs.
func TestExpVecBitIdentical(t *testing.T) {
	if !kernels.HasExpVec() {
		t.Skip("no AVX-512 kernel on this CPU")
	}
	tab := newExpTable()
	rng := rand.New(rand.NewPCG(3, 4))
	checked := 0
	for trial := range 400 {
		n := trial%70 + 1
		in := expVecInputs(rng, n)
		m := []float32{0, 3.5, -2.25, float32(rng.NormFloat64() * 10)}[trial%4]
		want := append([]float32(nil), in...)
		expScalar(tab, want, m)
		got := append([]float32(nil), in...)
		done := kernels.ExpShiftedVec(got, m, tab)
		if done != n&^15 {
			t.Fatalf("n %d: ExpShiftedVec did %d values, want %d", n, done, n&^15)
		}
		for i := range done {
			if !sameBits(got[i], want[i]) {
				t.Fatalf("n %d, m %g: e^(%g − m) = %g (bits %#x) from the kernel, %g (bits %#x) from the scalar loop",
					n, m, in[i], got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
			}
		}
		checked += done
		// expShifted as a whole: the kernel's blocks, the scalar tail, the sum in order.
		whole := append([]float32(nil), in...)
		var wantSum float32
		for _, y := range want {
			wantSum += y
		}
		if sum := expShifted(tab, whole, m); !sameBits(sum, wantSum) {
			t.Fatalf("n %d: expShifted sum %g, scalar %g", n, sum, wantSum)
		}
	}
	if checked < 5000 {
		t.Fatalf("only %d values went through the kernel", checked)
	}
}

// TestGeluVecBitIdentical checks the 16-lane GELU against geluRows' scalar loops (geluScalar).
func TestGeluVecBitIdentical(t *testing.T) {
	if !kernels.HasExpVec() {
		t.Skip("no AVX-512 kernel on this CPU")
	}
	tab := newExpTable()
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 300 {
		n := trial%70 + 1
		in := expVecInputs(rng, n)
		want := append([]float32(nil), in...)
		geluScalar(tab, want, make([]float32, n))
		got := append([]float32(nil), in...)
		geluRows(tab, got, n, 1, n, make([]float32, n))
		for i := range got {
			if !sameBits(got[i], want[i]) {
				t.Fatalf("n %d: gelu(%g) = %g (bits %#x), scalar %g (bits %#x)", n, in[i], got[i],
					math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
			}
		}
	}
}

// The decoder's logits are bit for bit the same whether its products run on the groups kernel
// (matrix.groups: 16 lanes with AVX-512, two halves of 8 with AVX2) or on the panels alone, at a
// width whose matrices also leave columns to the panels (d_ff 72: 18 panels, 4 groups and 2
// panels) and a vocabulary that is not a multiple of 16.
func TestHostGroupsBitIdentical(t *testing.T) {
	if !kernels.HasGroups() {
		t.Skip("no groups kernel on this CPU")
	}
	c := smallConfig()
	c.DFF, c.Vocab = 72, 38
	w := initialWeights(t, c, 11)
	wide, err := New(c, w)
	if err != nil {
		t.Fatal(err)
	}
	narrow, err := New(c, w)
	if err != nil {
		t.Fatal(err)
	}
	for l := range narrow.layers {
		L := &narrow.layers[l]
		for _, m := range []*matrix{&L.qkv, &L.wo, &L.w1, &L.w2} {
			m.groups, m.ng = nil, 0
		}
	}
	narrow.head.groups, narrow.head.ng = nil, 0
	if wide.layers[0].w1.ng == 0 {
		t.Fatal("the groups path is not in use")
	}
	const rows, length = 5, 12
	tokens := hostRandomTokens(rand.New(rand.NewPCG(1, 2)), rows*length, c.Vocab)
	a, err := wide.Forward(rows, length, tokens)
	if err != nil {
		t.Fatal(err)
	}
	b, err := narrow.Forward(rows, length, tokens)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			t.Fatalf("logit %d: %g with the groups kernel, %g on panels", i, a[i], b[i])
		}
	}
}
