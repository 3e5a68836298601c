package host

import (
	"math"

	"github.com/graftrl/graftrl/internal/kernels"
	"github.com/graftrl/graftrl/policy/spec"
)

// useFMA reports whether the FMA kernels of internal/kernels run on this CPU.
var useFMA = kernels.HasFMA()

// attnScores computes the attention scores of one query q against blocks of four keys,
// s[4b+c] = Σ_i q[i]·k[b·len(q)+i][c], for as many whole blocks as s and k hold. With the FMA
// kernel it is kernels.MatmulPanels for one row (zeros is a zero bias of at least len(s) values); the Go
// loop is kernels.DotPanel per block, without MatmulPanels' bias and epilogue, whose per-panel
// overhead is a quarter of the cost when the panels are only head_dim long.
func attnScores(s, q []float32, k [][4]float32, zeros []float32) {
	hd := len(q)
	if useFMA {
		if nb := min(len(k)/hd, len(s)/4); nb > 0 {
			kernels.MatmulPanels(s, 0, q, 0, 1, hd, k, hd, nb, zeros, kernels.EpiStore)
		}
		return
	}
	for len(k) >= hd && len(s) >= 4 {
		*(*[4]float32)(s) = kernels.DotPanel([4]float32{}, q, k[:hd])
		k = k[hd:]
		s = s[4:]
	}
}

// layerNormRows normalises the first d values of n rows of x (row stride s) into out with the
// same stride: (x − μ)/√(σ² + ε)·g + b with the population variance, as layerNorm in policy/model.go.
// The statistics are accumulated in float64: it costs nothing at these widths and halves the
// host path's distance to an exact forward pass (measured), leaving GoMLX's own float32 rounding
// as the main part of the host–GoMLX difference.
func layerNormRows(out, x []float32, s, n, d int, g, b []float32) {
	g, b = g[:d], b[:d]
	for r := range n {
		xr := x[r*s : r*s+d]
		or := out[r*s : r*s+d]
		var sum float64
		for _, v := range xr {
			sum += float64(v)
		}
		mean := sum / float64(d)
		var sq float64
		for _, v := range xr {
			c := float64(v) - mean
			sq += c * c
		}
		m32 := float32(mean)
		rstd := float32(1 / math.Sqrt(sq/float64(d)+spec.LayerNormEps))
		for i, v := range xr {
			or[i] = (v-m32)*rstd*g[i] + b[i]
		}
	}
}

// expTable holds the float32 bits of 2^(j/32), j = 0..31, and the constants of expShifted, in the
// layout of the 16-lane kernels (kernels.ExpShiftedVec, kernels.GeluVec). It lives in the Model
// (see newExpTable) rather than in a package variable.
type expTable = kernels.ExpConsts

// The constants of expShifted and geluRows (see there).
const (
	expInvStep = 32 / math.Ln2
	expStepHi  = 0.693359375 / 32 // ln 2/32 split so that n·expStepHi is exact for |n| < 2^15
	expStepLo  = -2.12194440e-4 / 32
	expRound   = 12582912 // 1.5·2²³: adding it rounds a float32 to an integer
	expLowest  = -87.3
	geluC      = -2 * 0.7978845608028654 // −2·√(2/π)
	geluC3     = 0.044715
)

func newExpTable() *expTable {
	t := &expTable{
		InvStep: expInvStep, StepHi: expStepHi, StepLo: expStepLo, Round: expRound, Lowest: expLowest,
		Sixth: 1.0 / 6, Half: 0.5, One: 1, GeluC: geluC, GeluC3: geluC3, MaxArg: expMaxArg,
	}
	for j := range t.Table {
		t.Table[j] = math.Float32bits(float32(math.Exp2(float64(j) / 32)))
	}
	return t
}

// expMaxArg is the largest argument expShifted accepts: e^88 ≈ 1.65e38 still fits in float32.
const expMaxArg = 88

// expShifted replaces every s[i] (≤ expMaxArg + m) by e^(s[i] − m) and returns their sum, within
// ~2 ulp. With n = round(32·x/ln 2) and r = x − n·ln2/32 (Cody–Waite, |r| ≤ 0.011),
// e^x = 2^⌊n/32⌋ · 2^((n mod 32)/32) · e^r, the middle factor from the table and e^r from a cubic
// (truncation error r⁴/24 < 6e−10). That is about half the floating-point work of a plain
// degree-7 polynomial on |r| ≤ ln2/2. Arguments below −87.3 are raised to it, giving ~1e−38
// instead of a subnormal or 0, which no softmax or sigmoid here can tell apart.
//
// kernels.ExpShiftedVec does the whole 16-value blocks where it can, bit for bit as expScalar;
// the sum is always taken here, in order of i.
func expShifted(tab *expTable, s []float32, m float32) float32 {
	done := kernels.ExpShiftedVec(s, m, tab)
	expScalar(tab, s[done:], m)
	var sum float32
	for _, y := range s {
		sum += y
	}
	return sum
}

// expScalar is expShifted's loop without the sum, one value at a time. It is a loop over a slice
// rather than a function per value: the body is too large for the inliner, and as a loop the
// out-of-order core overlaps successive values.
func expScalar(tab *expTable, s []float32, m float32) {
	for i, v := range s {
		x := v - m
		if x < expLowest {
			x = expLowest
		}
		t := x*expInvStep + expRound
		n := t - expRound
		k := math.Float32bits(t) - math.Float32bits(expRound) // n as a two's-complement integer
		r := x - n*expStepHi - n*expStepLo
		p := r*r*(0.5+r*(1.0/6)) + r + 1
		scale := tab.Table[k&31] + uint32(int32(k)>>5)<<23
		s[i] = p * math.Float32frombits(scale)
	}
}

// geluRows applies the tanh-approximate GELU, 0.5·x·(1 + tanh(u)) with
// u = √(2/π)·(x + 0.044715·x³), to the first f values of n rows of x (row stride s), computed as
// x·σ(2u) = x / (1 + e^(−2u)), the same function with one exp. tmp holds ≥ f values.
// kernels.GeluVec does the whole 16-value blocks of a row where it can, bit for bit as the loops
// here.
func geluRows(tab *expTable, x []float32, s, n, f int, tmp []float32) {
	for r := range n {
		xr := x[r*s : r*s+f]
		done := kernels.GeluVec(xr, tab)
		geluScalar(tab, xr[done:], tmp)
	}
}

// geluScalar is geluRows' loops for the values of x, one at a time (tmp holds ≥ len(x) values).
func geluScalar(tab *expTable, x, tmp []float32) {
	t := tmp[:len(x)]
	for i, v := range x {
		u := geluC * (v + geluC3*v*v*v)
		if u > expMaxArg {
			u = expMaxArg
		}
		t[i] = u
	}
	expScalar(tab, t, 0)
	for i, v := range x {
		x[i] = v / (1 + t[i])
	}
}

// softmaxUnnorm replaces s by exp(s − max s) and returns 1/Σ, leaving the normalisation to the
// caller (who applies it to hd context values instead of t probabilities).
func softmaxUnnorm(tab *expTable, s []float32) float32 {
	m := s[0]
	for _, v := range s {
		if v > m {
			m = v
		}
	}
	return 1 / expShifted(tab, s, m)
}
