package bench

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/graftrl/graftrl/internal/kernels"
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
	// NominalGFLOPs = Cores × MHz/1000 × FlopsPerCycle: the peak as /proc/cpuinfo suggests it,
	// at the nominal clock and with two FMA pipes of the full vector width (Zen 4 has two of half
	// the width, and boosts above the nominal clock: 332 against 234 measured on a 2-core one).
	NominalGFLOPs float64 `json:"nominal_gflops"`
	// MeasuredGFLOPs is the float32 rate of kernels.FMALoop running on every core at once (0 when
	// not measured, or on a CPU without FMA vectors).
	MeasuredGFLOPs float64 `json:"measured_gflops,omitempty"`
	// MemoryGBs is the memory bandwidth measured by copying 64 MB per core on every core at once:
	// bytes read plus bytes written per second, in GB/s (0 when not measured).
	MemoryGBs float64 `json:"memory_gbs,omitempty"`
	// PeakGFLOPs is the peak shares are taken of: the --peak-gflops override, else
	// MeasuredGFLOPs when measured, else NominalGFLOPs.
	PeakGFLOPs float64 `json:"peak_gflops"`
	// ScalarPeakGFLOPs is the peak without SIMD: Cores × GHz × 4 (two multiplies and two adds
	// per cycle), the ceiling of code the Go compiler emits, which does not vectorise.
	ScalarPeakGFLOPs float64 `json:"scalar_peak_gflops"`
	// PeakDerivation states how PeakGFLOPs was obtained.
	PeakDerivation string `json:"peak_derivation"`
}

// probeMachine reads /proc/cpuinfo (Linux; elsewhere the clock is unknown and the nominal peak
// 0) and, with measure, times the FMA loop and a memory copy on every core (half a second).
func probeMachine(peakOverride float64, measure bool) Machine {
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
	m.NominalGFLOPs = float64(m.Cores) * ghz * m.FlopsPerCycle
	nominal := strconv.Itoa(m.Cores) + " cores × " + strconv.FormatFloat(ghz, 'f', 2, 64) +
		" GHz (nominal, /proc/cpuinfo) × " + strconv.FormatFloat(m.FlopsPerCycle, 'f', 0, 64) +
		" float32 FLOP/cycle (2 FMA pipes × " + strconv.FormatFloat(m.FlopsPerCycle/4, 'f', 0, 64) +
		" lanes × 2, " + m.SIMD + ")"
	if measure {
		m.MeasuredGFLOPs = measureGFLOPs(m.GOMAXPROCS)
		m.MemoryGBs = measureMemoryGBs(m.GOMAXPROCS)
	}
	switch {
	case peakOverride > 0:
		m.PeakGFLOPs = peakOverride
		m.PeakDerivation = "given with --peak-gflops"
	case m.MeasuredGFLOPs > 0:
		m.PeakGFLOPs = m.MeasuredGFLOPs
		m.PeakDerivation = "measured: a loop of independent " + m.SIMD + " FMAs on " + strconv.Itoa(m.GOMAXPROCS) +
			" cores at once (nominal " + strconv.FormatFloat(m.NominalGFLOPs, 'f', 0, 64) + " = " + nominal + ")"
	default:
		m.PeakGFLOPs = m.NominalGFLOPs
		m.PeakDerivation = nominal
	}
	return m
}

// onEveryCore runs f(i) for i < cores on as many goroutines at once and returns the seconds
// from the start to the last one's end.
func onEveryCore(cores int, f func(i int)) float64 {
	var wg sync.WaitGroup
	start := time.Now()
	for i := range cores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(i)
		}()
	}
	wg.Wait()
	return time.Since(start).Seconds()
}

// measureGFLOPs is the best of seven runs of kernels.FMALoop on every core at once, after one
// that lets the clock rise (0 where the CPU has no FMA vectors): the best, so that a run shared
// with another process's burst does not lower the peak.
func measureGFLOPs(cores int) float64 {
	const iters = 1 << 23 // ~30 ms a run at ~12 cycles an iteration
	perIter := kernels.FMALoop(1)
	if perIter == 0 {
		return 0
	}
	best := 0.0
	for r := range 8 {
		secs := onEveryCore(cores, func(int) { kernels.FMALoop(iters) })
		if g := float64(cores) * perIter * iters / secs / 1e9; r > 0 && g > best {
			best = g
		}
	}
	return best
}

// measureMemoryGBs copies 64 MB on each core at once, four times, and returns the best of the
// last three copies' bytes read plus written per second in GB/s.
func measureMemoryGBs(cores int) float64 {
	const size = 64 << 20
	src, dst := make([][]byte, cores), make([][]byte, cores)
	for i := range cores {
		src[i], dst[i] = make([]byte, size), make([]byte, size)
		for j := 0; j < size; j += 4096 {
			src[i][j] = byte(j) // touch every page
		}
	}
	onEveryCore(cores, func(i int) { copy(dst[i], src[i]) })
	best := 0.0
	for range 3 {
		secs := onEveryCore(cores, func(i int) { copy(dst[i], src[i]) })
		best = max(best, 2*float64(cores)*size/secs/1e9)
	}
	return best
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

// ProbeMachine describes this machine's CPU as a benchmark would, without measuring it (the
// nominal peak, from /proc/cpuinfo).
func ProbeMachine() Machine { return probeMachine(0, false) }
