package kernels

import (
	"fmt"
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

// Epilogues of MatmulPanels: what happens to bias + x·W before it reaches out.
const (
	EpiStore = iota // out = y
	EpiAdd          // out += y (residual connections)
)

// PackPanels repacks a row-major [k,n] matrix into 4-wide column panels: panel p occupies
// dst[p·k : (p+1)·k] and dst[p·k+i] = w[i][4p : 4p+4]. Columns past n (when 4 ∤ n) are zero, so
// padded outputs are exactly the (zero) padded bias. scale multiplies every weight.
func PackPanels(dst [][4]float32, w []float32, k, n int, scale float32) {
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

// PackBias copies a bias of length n into a zero-padded buffer of length 4·⌈n/4⌉, scaled.
func PackBias(dst, b []float32, scale float32) {
	clear(dst)
	for i, v := range b {
		dst[i] = v * scale
	}
}

// MatmulPanels computes, for each of n rows of x (row r at x[r·ldx:], its first k values) and each
// of np panels of w (panel p at w[p·ps : p·ps+k]), the four values
//
//	y[c] = bias[4p+c] + Σ_i x[r·ldx+i] · w[p·ps+i][c]
//
// and applies the epilogue to out[r·ldo+4p+c]. Where the CPU has FMA (useFMA) the assembly kernel
// does the work, after the bounds checks the Go loop would make; otherwise matmulPanelsGo.
func MatmulPanels(out []float32, ldo int, x []float32, ldx, n, k int, w [][4]float32, ps, np int, bias []float32, epi int) {
	if !useFMA || n <= 0 || np <= 0 {
		matmulPanelsGo(out, ldo, x, ldx, n, k, w, ps, np, bias, epi)
		return
	}
	if k < 0 || len(out) < (n-1)*ldo+4*np || len(x) < (n-1)*ldx+k || len(w) < (np-1)*ps+k || len(bias) < 4*np ||
		ldo < 0 || ldx < 0 || ps < 0 {
		panic(fmt.Sprintf("kernels: MatmulPanels out of bounds (n %d, k %d, np %d, ldo %d, ldx %d, ps %d; len out %d, x %d, w %d, bias %d)",
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

// matmulPanelsGo is MatmulPanels in plain Go. Panels are the outer loop so that one panel (k·16
// bytes) stays in L1 while the rows stream past it.
// DotPanel returns acc + Σ_i x[i]·pw[i] (four columns at once) for i < len(pw), accumulated in
// the order of i. x must hold len(pw) values.
func DotPanel(acc [4]float32, x []float32, pw [][4]float32) [4]float32 {
	x = x[:len(pw)]
	a0, a1, a2, a3 := acc[0], acc[1], acc[2], acc[3]
	for i := range pw {
		w, xi := &pw[i], x[i]
		a0 += xi * w[0]
		a1 += xi * w[1]
		a2 += xi * w[2]
		a3 += xi * w[3]
	}
	return [4]float32{a0, a1, a2, a3}
}

func matmulPanelsGo(out []float32, ldo int, x []float32, ldx, n, k int, w [][4]float32, ps, np int, bias []float32, epi int) {
	for p := range np {
		pw := w[p*ps : p*ps+k]
		b := (*[4]float32)(bias[4*p:])
		for r := range n {
			a := DotPanel(*b, x[r*ldx:r*ldx+k], pw)
			a0, a1, a2, a3 := a[0], a[1], a[2], a[3]
			o := (*[4]float32)(out[r*ldo+4*p:])
			switch epi {
			case EpiStore:
				o[0], o[1], o[2], o[3] = a0, a1, a2, a3
			case EpiAdd:
				o[0] += a0
				o[1] += a1
				o[2] += a2
				o[3] += a3
			}
		}
	}
}
