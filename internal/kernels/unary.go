package kernels

// Unary sets dst[i] = float32(scalar(float64(src[i]))) for every value of src, with kernel (one of
// ExpF32FMA, TanhF32FMA, LogisticF32FMA, each computing scalar's values) from the start; where the
// kernel stops (at a group of four it leaves to scalar, or at the last < 4 values) those values are
// computed with scalar and the kernel resumes after them. dst may be src.
func Unary(dst, src []float32, kernel func(dst, src *float32, n int) int, scalar func(float64) float64) {
	n := len(src)
	dst = dst[:n]
	for i := 0; i < n; {
		if n-i >= 4 && haveUnaryKernels {
			i += kernel(&dst[i], &src[i], n-i)
		}
		for end := min(i+4, n); i < end; i++ {
			dst[i] = float32(scalar(float64(src[i])))
		}
	}
}
