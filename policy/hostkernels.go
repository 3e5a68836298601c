package policy

import (
	"fmt"
	"math"
)

// The kernels below are plain Go written for the gc compiler, which neither vectorises nor
// schedules for register pressure. What was measured on the Zen 5 build machine (GOAMD64=v1):
//   - one row × four columns with k unrolled by two reaches ~1.75 multiply-adds per cycle, close to
//     the scalar limit of two (two FP multiply and two FP add pipes);
//   - tiles with eight or more accumulators are slower: the scheduler places every add that feeds
//     a loop phi at the end of the body, so the pending products and accumulators exceed the 15
//     usable X registers and the spilled accumulators turn into store-to-load chains;
//   - [][4]float32 panels plus a re-slice of x to the panel's length remove every bounds check
//     from the inner loop.

// Epilogues of matmulPanels: what happens to bias + x·W before it reaches out.
const (
	epiStore = iota // out = y
	epiAdd          // out += y (residual connections)
)

// packPanels repacks a row-major [k,n] matrix into 4-wide column panels: panel p occupies
// dst[p·k : (p+1)·k] and dst[p·k+i] = w[i][4p : 4p+4]. Columns past n (when 4 ∤ n) are zero, so
// padded outputs are exactly the (zero) padded bias. scale multiplies every weight.
func packPanels(dst [][4]float32, w []float32, k, n int, scale float32) {
	for p := range (n + 3) / 4 {
		panel := dst[p*k : p*k+k]
		for i := range panel {
			row := w[i*n : i*n+n]
			var q [4]float32
			for c := range 4 {
				if j := 4*p + c; j < n {
					q[c] = row[j] * scale
				}
			}
			panel[i] = q
		}
	}
}

// packBias copies a bias of length n into a zero-padded buffer of length 4·⌈n/4⌉, scaled.
func packBias(dst, b []float32, scale float32) {
	clear(dst)
	for i, v := range b {
		dst[i] = v * scale
	}
}

// matmulPanels computes, for each of n rows of x (row r at x[r·ldx:], its first k values) and each
// of np panels of w (panel p at w[p·ps : p·ps+k]), the four values
//
//	y[c] = bias[4p+c] + Σ_i x[r·ldx+i] · w[p·ps+i][c]
//
// and applies the epilogue to out[r·ldo+4p+c]. Where the CPU has FMA (useFMA) the assembly kernel
// does the work, after the bounds checks the Go loop would make; otherwise matmulPanelsGo.
func matmulPanels(out []float32, ldo int, x []float32, ldx, n, k int, w [][4]float32, ps, np int, bias []float32, epi int) {
	if !useFMA || n <= 0 || np <= 0 {
		matmulPanelsGo(out, ldo, x, ldx, n, k, w, ps, np, bias, epi)
		return
	}
	if k < 0 || len(out) < (n-1)*ldo+4*np || len(x) < (n-1)*ldx+k || len(w) < (np-1)*ps+k || len(bias) < 4*np ||
		ldo < 0 || ldx < 0 || ps < 0 {
		panic(fmt.Sprintf("policy: matmulPanels out of bounds (n %d, k %d, np %d, ldo %d, ldx %d, ps %d; len out %d, x %d, w %d, bias %d)",
			n, k, np, ldo, ldx, ps, len(out), len(x), len(w), len(bias)))
	}
	var xp *float32
	if len(x) > 0 {
		xp = &x[0]
	}
	var wp *[4]float32
	if len(w) > 0 {
		wp = &w[0]
	}
	matmulPanelsFMA(&out[0], ldo, xp, ldx, n, k, wp, ps, np, &bias[0], epi)
}

// matmulPanelsGo is matmulPanels in plain Go. Panels are the outer loop so that one panel (k·16
// bytes) stays in L1 while the rows stream past it.
func matmulPanelsGo(out []float32, ldo int, x []float32, ldx, n, k int, w [][4]float32, ps, np int, bias []float32, epi int) {
	for p := range np {
		pw := w[p*ps : p*ps+k]
		b := (*[4]float32)(bias[4*p:])
		for r := range n {
			xr := x[r*ldx : r*ldx+k]
			xr = xr[:len(pw)]
			a0, a1, a2, a3 := b[0], b[1], b[2], b[3]
			i := 1
			for ; i < len(pw); i += 2 {
				w0 := &pw[i-1]
				x0 := xr[i-1]
				a0 += x0 * w0[0]
				a1 += x0 * w0[1]
				a2 += x0 * w0[2]
				a3 += x0 * w0[3]
				w1 := &pw[i]
				x1 := xr[i]
				a0 += x1 * w1[0]
				a1 += x1 * w1[1]
				a2 += x1 * w1[2]
				a3 += x1 * w1[3]
			}
			if i == len(pw) { // odd k: one step left
				w0 := &pw[i-1]
				x0 := xr[i-1]
				a0 += x0 * w0[0]
				a1 += x0 * w0[1]
				a2 += x0 * w0[2]
				a3 += x0 * w0[3]
			}
			o := (*[4]float32)(out[r*ldo+4*p:])
			switch epi {
			case epiStore:
				o[0], o[1], o[2], o[3] = a0, a1, a2, a3
			case epiAdd:
				o[0] += a0
				o[1] += a1
				o[2] += a2
				o[3] += a3
			}
		}
	}
}

// attnScores computes the attention scores of one query q against blocks of four keys,
// s[4b+c] = Σ_i q[i]·k[b·len(q)+i][c], for as many whole blocks as s and k hold. With the FMA
// kernel it is matmulPanels for one row (zeros is a zero bias of at least len(s) values); the Go
// loop is matmulPanels without the bias and epilogue, whose per-panel overhead is a quarter of the
// cost when the panels are only head_dim long.
func attnScores(s, q []float32, k [][4]float32, zeros []float32) {
	hd := len(q)
	if useFMA {
		if nb := min(len(k)/hd, len(s)/4); nb > 0 {
			matmulPanels(s, 0, q, 0, 1, hd, k, hd, nb, zeros, epiStore)
		}
		return
	}
	for len(k) >= hd && len(s) >= 4 {
		kb := k[:hd]
		q := q[:len(kb)]
		var a0, a1, a2, a3 float32
		i := 1
		for ; i < len(kb); i += 2 {
			w0 := &kb[i-1]
			x0 := q[i-1]
			a0 += x0 * w0[0]
			a1 += x0 * w0[1]
			a2 += x0 * w0[2]
			a3 += x0 * w0[3]
			w1 := &kb[i]
			x1 := q[i]
			a0 += x1 * w1[0]
			a1 += x1 * w1[1]
			a2 += x1 * w1[2]
			a3 += x1 * w1[3]
		}
		if i == len(kb) {
			w0 := &kb[i-1]
			x0 := q[i-1]
			a0 += x0 * w0[0]
			a1 += x0 * w0[1]
			a2 += x0 * w0[2]
			a3 += x0 * w0[3]
		}
		o := (*[4]float32)(s)
		o[0], o[1], o[2], o[3] = a0, a1, a2, a3
		k = k[hd:]
		s = s[4:]
	}
}

// layerNormRows normalises the first d values of n rows of x (row stride s) into out with the
// same stride: (x − μ)/√(σ² + ε)·g + b with the population variance, as layerNorm in model.go.
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
		rstd := float32(1 / math.Sqrt(sq/float64(d)+layerNormEps))
		for i, v := range xr {
			or[i] = (v-m32)*rstd*g[i] + b[i]
		}
	}
}

// expTable holds the float32 bits of 2^(j/32), j = 0..31, for expShifted. It lives in the
// HostModel (see newExpTable) rather than in a package variable.
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
