package kernels

// FMALoop runs n iterations of a loop of independent float32 fused multiply-adds on the widest
// vectors the CPU has (AVX-512 or AVX2 with FMA) and returns the FLOPs it did (0 where neither
// exists): timed on every core at once, it measures the machine's peak float32 rate, whatever
// the clock under load and however many FMA pipes, of whatever width, the cores have.
func FMALoop(n int) float64 {
	switch {
	case n <= 0:
		return 0
	case useAVX512:
		fmaLoopAVX512(n)
		return 384 * float64(n)
	case useFMA && haveUnaryKernels: // AVX2 and FMA3
		fmaLoopAVX2(n)
		return 192 * float64(n)
	}
	return 0
}
