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

// expTable holds the float32 bits of 2^(j/32), j = 0..31, for expShifted. It lives in the
// Model (see newExpTable) rather than in a package variable.
type expTable [32]uint32

func newExpTable() *expTable {
	var t expTable
	for j := range t {
		t[j] = math.Float32bits(float32(math.Exp2(float64(j) / 32)))
	}
	return &t
}

// expMaxArg is the largest argument expShifted accepts: e^88 ≈ 1.65e38 still fits in float32.
const expMaxArg = 88

// expShifted replaces every s[i] (≤ expMaxArg + m) by e^(s[i] − m) and returns their sum, within
// ~2 ulp. With n = round(32·x/ln 2) and r = x − n·ln2/32 (Cody–Waite, |r| ≤ 0.011),
// e^x = 2^⌊n/32⌋ · 2^((n mod 32)/32) · e^r, the middle factor from the table and e^r from a cubic
// (truncation error r⁴/24 < 6e−10). That is about half the floating-point work of a plain
// degree-7 polynomial on |r| ≤ ln2/2. It is a loop over a slice rather than a function per value:
// the body is too large for the inliner, and as a loop the out-of-order core overlaps successive
// values. Arguments below −87.3 are raised to it, giving ~1e−38 instead of a subnormal or 0, which
// no softmax or sigmoid here can tell apart.
func expShifted(tab *expTable, s []float32, m float32) float32 {
	const (
		invStep = 32 / math.Ln2
		stepHi  = 0.693359375 / 32 // ln 2/32 split so that n·stepHi is exact for |n| < 2^15
		stepLo  = -2.12194440e-4 / 32
		round   = 12582912 // 1.5·2²³: adding it rounds a float32 to an integer
		lowest  = -87.3
	)
	var sum float32
	for i, v := range s {
		x := v - m
		if x < lowest {
			x = lowest
		}
		t := x*invStep + round
		n := t - round
		k := math.Float32bits(t) - math.Float32bits(round) // n as a two's-complement integer
		r := x - n*stepHi - n*stepLo
		p := r*r*(0.5+r*(1.0/6)) + r + 1
		scale := tab[k&31] + uint32(int32(k)>>5)<<23
		y := p * math.Float32frombits(scale)
		s[i] = y
		sum += y
	}
	return sum
}

// geluRows applies the tanh-approximate GELU, 0.5·x·(1 + tanh(u)) with
// u = √(2/π)·(x + 0.044715·x³), to the first f values of n rows of x (row stride s), computed as
// x·σ(2u) = x / (1 + e^(−2u)), the same function with one exp. tmp holds ≥ f values.
func geluRows(tab *expTable, x []float32, s, n, f int, tmp []float32) {
	const c = -2 * 0.7978845608028654 // −2·√(2/π)
	tmp = tmp[:f]
	for r := range n {
		xr := x[r*s : r*s+f]
		xr = xr[:len(tmp)]
		for i, v := range xr {
			t := c * (v + 0.044715*v*v*v)
			if t > expMaxArg {
				t = expMaxArg
			}
			tmp[i] = t
		}
		expShifted(tab, tmp, 0)
		for i, v := range xr {
			xr[i] = v / (1 + tmp[i])
		}
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
