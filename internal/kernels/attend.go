package kernels

import "fmt"

// AttendScores sets s[j] = scale · Σ_i q[i]·keys[j·stride + i] for j < len(s) and i < len(q):
// one attention head's scores of query q over len(s) cached keys, each a row of stride values
// whose first len(q) are this head's. Where the CPU has FMA and len(q) is a multiple of 32 the
// assembly kernel computes each dot product with fused multiply-adds in two interleaved chains
// of eight lanes, four keys at a time, each key's arithmetic the same whatever t (so its sums
// differ from the Go loop's in rounding only); otherwise the Go loop.
func AttendScores(s, q, keys []float32, stride int, scale float32) {
	t, hd := len(s), len(q)
	if t == 0 {
		return
	}
	if stride < hd || len(keys) < (t-1)*stride+hd {
		panic(fmt.Sprintf("kernels: AttendScores out of bounds (t %d, hd %d, stride %d; len keys %d)", t, hd, stride, len(keys)))
	}
	if useFMA && hd > 0 && hd%32 == 0 {
		attendScoresFMA(&s[0], &q[0], &keys[0], stride, hd, t, scale)
		return
	}
	for j := range s {
		k := keys[j*stride : j*stride+hd]
		var dot float32
		for i, qi := range q {
			dot += qi * k[i]
		}
		s[j] = dot * scale
	}
}

// AttendValues sets o[i] = Σ_j p[j]·vals[j·stride + i] for i < len(o) and j < len(p), summed in
// order of j: one attention head's output from its weights p over len(p) cached values, each a
// row of stride values whose first len(o) are this head's. Where the CPU has FMA and len(o) is
// a multiple of 32 the assembly kernel does it with fused multiply-adds; otherwise the Go loop.
func AttendValues(o, p, vals []float32, stride int) {
	t, hd := len(p), len(o)
	if t > 0 && (stride < hd || len(vals) < (t-1)*stride+hd) {
		panic(fmt.Sprintf("kernels: AttendValues out of bounds (t %d, hd %d, stride %d; len vals %d)", t, hd, stride, len(vals)))
	}
	if useFMA && t > 0 && hd > 0 && hd%32 == 0 {
		attendValuesFMA(&o[0], &p[0], &vals[0], stride, hd, t)
		return
	}
	clear(o)
	for j, pj := range p {
		v := vals[j*stride : j*stride+hd]
		for i, vi := range v {
			o[i] += pj * vi
		}
	}
}
