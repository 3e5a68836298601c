package kernels

// ExpConsts holds what the 16-lane shifted-exponential kernels (softexp_amd64.s) read: the
// float32 bits of 2^(j/32) for j = 0..31 and the float32 constants of the scalar algorithm they
// reproduce (expShifted and geluRows in policy/host). The scalar code's owner fills it from the
// very constants its loop uses, so that both compute the same operations on the same values. The
// kernels read it by offset: the field order is part of their contract.
type ExpConsts struct {
	Table   [32]uint32 // bits of 2^(j/32)
	InvStep float32    // 32/ln 2
	StepHi  float32    // upper part of ln 2/32 (n·StepHi exact for |n| < 2^15)
	StepLo  float32    // lower part of ln 2/32
	Round   float32    // 1.5·2^23: adding it rounds to an integer
	Lowest  float32    // arguments below are raised to it
	Sixth   float32    // 1/6, the cubic's coefficient
	Half    float32    // 1/2
	One     float32    // 1
	GeluC   float32    // −2·√(2/π)
	GeluC3  float32    // 0.044715
	MaxArg  float32    // the largest exponent GeluVec passes on
}

// ExpShiftedVec replaces s[i] by e^(s[i] − m) for the whole 16-value blocks at the front of s,
// computed as expShifted in policy/host does for each value — x = max(s[i] − m, Lowest); t =
// x·InvStep + Round; n = t − Round; k = bits(t) − bits(Round); r = (x − n·StepHi) − n·StepLo;
// p = ((r·r)·(Half + r·Sixth) + r) + One; e = p · bits⁻¹(Table[k mod 32] + (k >> 5) << 23) — each
// operation rounded to float32 on its own (no fused multiply-adds), so every lane is bit for bit
// the scalar result. It returns how many values it replaced (a multiple of 16; 0 where the
// AVX-512 kernel cannot run, see HasExpVec): the caller does the rest and any sum over them.
func ExpShiftedVec(s []float32, m float32, c *ExpConsts) int {
	n := len(s) &^ 15
	if !useAVX512 || n == 0 {
		return 0
	}
	expShiftedAVX512(&s[0], n, m, c)
	return n
}

// GeluVec applies the tanh-approximate GELU in place to the whole 16-value blocks at the front of
// x, as geluRows in policy/host does for each value v: t = min(GeluC·(v + ((GeluC3·v)·v)·v),
// MaxArg), e = the shifted exponential of t (m = 0, as ExpShiftedVec), v/(One + e). Bit for bit
// the scalar result; it returns how many values it replaced (a multiple of 16, 0 where the
// kernel cannot run).
func GeluVec(x []float32, c *ExpConsts) int {
	n := len(x) &^ 15
	if !useAVX512 || n == 0 {
		return 0
	}
	geluAVX512(&x[0], n, c)
	return n
}

// HasExpVec reports whether ExpShiftedVec and GeluVec run their AVX-512 kernels here.
func HasExpVec() bool { return useAVX512 }
