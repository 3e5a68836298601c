package kernels

import "testing"

// FMALoop reports the FLOPs of its iterations: 384 each with AVX-512, 192 with AVX2 and FMA,
// none without (or for n ≤ 0).
func TestFMALoopFLOPs(t *testing.T) {
	want := 0.0
	switch {
	case HasAVX512():
		want = 384
	case HasFMA() && HasUnaryKernels():
		want = 192
	}
	if got := FMALoop(1000); got != 1000*want {
		t.Fatalf("FMALoop(1000) = %g FLOPs, want %g", got, 1000*want)
	}
	if got := FMALoop(0); got != 0 {
		t.Fatalf("FMALoop(0) = %g", got)
	}
}
