package bench

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// Machine describes the CPU the benchmark ran on and the peak it is measured against.
type Machine struct {
	CPU        string  `json:"cpu"`
	Cores      int     `json:"cores"`
	GOMAXPROCS int     `json:"gomaxprocs"`
	MHz        float64 `json:"mhz"`
	// SIMD is the widest vector extension with FMA the CPU reports: avx512f, avx2 or none.
	SIMD string `json:"simd"`
	// FlopsPerCycle is the float32 FLOPs one core can start per cycle: 2 FMA pipes × SIMD lanes
	// × 2 (an FMA is two FLOPs). 64 with AVX-512, 32 with AVX2+FMA, 8 for SSE (4 lanes × one
	// multiply and one add pipe).
	FlopsPerCycle float64 `json:"flops_per_cycle"`
	// PeakGFLOPs = Cores × MHz/1000 × FlopsPerCycle, or the --peak-gflops override.
	PeakGFLOPs float64 `json:"peak_gflops"`
	// ScalarPeakGFLOPs is the peak without SIMD: Cores × GHz × 4 (two multiplies and two adds
	// per cycle), the ceiling of code the Go compiler emits, which does not vectorise.
	ScalarPeakGFLOPs float64 `json:"scalar_peak_gflops"`
	// PeakDerivation states how PeakGFLOPs was obtained.
	PeakDerivation string `json:"peak_derivation"`
}

// probeMachine reads /proc/cpuinfo (Linux); elsewhere the clock is unknown and the peak is 0
// unless overridden.
func probeMachine(peakOverride float64) Machine {
	m := Machine{Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), SIMD: "none", FlopsPerCycle: 8}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		for sc.Scan() {
			key, val, ok := strings.Cut(sc.Text(), ":")
			if !ok {
				continue
			}
			key, val = strings.TrimSpace(key), strings.TrimSpace(val)
			switch {
			case key == "model name" && m.CPU == "":
				m.CPU = val
			case key == "cpu MHz" && m.MHz == 0:
				m.MHz, _ = strconv.ParseFloat(val, 64)
			case key == "flags" && m.SIMD == "none":
				flags := " " + val + " "
				switch {
				case strings.Contains(flags, " avx512f "):
					m.SIMD, m.FlopsPerCycle = "avx512f", 64
				case strings.Contains(flags, " avx2 ") && strings.Contains(flags, " fma "):
					m.SIMD, m.FlopsPerCycle = "avx2", 32
				}
			}
		}
		f.Close()
	}
	ghz := m.MHz / 1000
	m.ScalarPeakGFLOPs = float64(m.Cores) * ghz * 4
	if peakOverride > 0 {
		m.PeakGFLOPs = peakOverride
		m.PeakDerivation = "given with --peak-gflops"
		return m
	}
	m.PeakGFLOPs = float64(m.Cores) * ghz * m.FlopsPerCycle
	m.PeakDerivation = strconv.Itoa(m.Cores) + " cores × " + strconv.FormatFloat(ghz, 'f', 2, 64) +
		" GHz (nominal, /proc/cpuinfo) × " + strconv.FormatFloat(m.FlopsPerCycle, 'f', 0, 64) +
		" float32 FLOP/cycle (2 FMA pipes × " + strconv.FormatFloat(m.FlopsPerCycle/4, 'f', 0, 64) +
		" lanes × 2, " + m.SIMD + ")"
	return m
}

// loadAverage returns the 1-minute load average (Linux), or −1.
func loadAverage() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return -1
	}
	return v
}

// resetPeakRSS returns freed memory to the OS and restarts the kernel's peak-RSS counter (Linux:
// VmHWM), so that peakRSS reports the peak of the phase that follows (what it allocates plus what
// earlier phases still hold, such as compiled graphs). Elsewhere peakRSS is the process peak.
func resetPeakRSS() {
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// peakRSS returns the peak resident set size in bytes since the last resetPeakRSS (Linux), or of
// the whole process (getrusage elsewhere on Unix); 0 where the system does not tell it.
func peakRSS() int64 {
	if f, err := os.Open("/proc/self/status"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
				kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				if err == nil {
					return kb << 10
				}
			}
		}
	}
	return processPeakRSS()
}

// ProbeMachine describes this machine's CPU as a benchmark would (peak derived from
// /proc/cpuinfo).
func ProbeMachine() Machine { return probeMachine(0) }
