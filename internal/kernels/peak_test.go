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

// BenchmarkFMALoop reports one core's peak float32 rate (FMALoop's FLOPs per second), against
// which BenchmarkMatmulGroupsL1 reads.
func BenchmarkFMALoop(b *testing.B) {
	if FMALoop(1) == 0 {
		b.Skip("no FMA vectors on this CPU")
	}
	var flops float64
	for range b.N {
		flops += FMALoop(1 << 16)
	}
	b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkMatmulGroupsL1 times the 16-lane kernel on one core with every operand in L1 (four
// rows, two groups, 256 steps): its own ceiling, before any cache or memory traffic.
func BenchmarkMatmulGroupsL1(b *testing.B) {
	if !HasAVX512() {
		b.Skip("no AVX-512 kernel on this CPU")
	}
	const n, k, ng = 4, 256, 2
	x, w, out := make([]float32, n*k), make([]float32, k*16*ng), make([]float32, n*16*ng)
	for range b.N {
		MatmulGroups(out, 16*ng, x, k, 1, n, k, w, 16*ng, 16, ng, nil, EpiStore)
	}
	b.ReportMetric(float64(2*n*k*16*ng)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
