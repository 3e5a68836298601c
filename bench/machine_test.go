package bench

import (
	"strings"
	"testing"

	"github.com/graftrl/graftrl/internal/kernels"
)

// TestProbeMachinePeak checks which peak the shares are taken of: the override, else the measured
// rate where the CPU has FMA vectors, else the nominal one; and that a probe without measuring
// measures nothing.
func TestProbeMachinePeak(t *testing.T) {
	m := probeMachine(0, true)
	hasFMA := kernels.FMALoop(1) > 0
	switch {
	case hasFMA && !(m.MeasuredGFLOPs > 0 && m.PeakGFLOPs == m.MeasuredGFLOPs && strings.HasPrefix(m.PeakDerivation, "measured")):
		t.Fatalf("with FMA vectors: peak %g (%s), measured %g", m.PeakGFLOPs, m.PeakDerivation, m.MeasuredGFLOPs)
	case !hasFMA && (m.MeasuredGFLOPs != 0 || m.PeakGFLOPs != m.NominalGFLOPs):
		t.Fatalf("without FMA vectors: peak %g, measured %g, nominal %g", m.PeakGFLOPs, m.MeasuredGFLOPs, m.NominalGFLOPs)
	}
	if !(m.MemoryGBs > 0) {
		t.Fatalf("memory bandwidth %g GB/s", m.MemoryGBs)
	}
	if o := probeMachine(123, true); o.PeakGFLOPs != 123 || o.PeakDerivation != "given with --peak-gflops" {
		t.Fatalf("override: peak %g (%s)", o.PeakGFLOPs, o.PeakDerivation)
	}
	if p := ProbeMachine(); p.MeasuredGFLOPs != 0 || p.MemoryGBs != 0 || p.PeakGFLOPs != p.NominalGFLOPs {
		t.Fatalf("ProbeMachine measured: %+v", p)
	}
}
