package workers

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graftrl/graftrl/internal/kernels"
)

// checkOnce fails unless every counter is exactly 1.
func checkOnce(t *testing.T, what string, counts []atomic.Int32) {
	t.Helper()
	for i := range counts {
		if c := counts[i].Load(); c != 1 {
			t.Fatalf("%s: iteration %d ran %d times, want once", what, i, c)
		}
	}
}

func TestWorkerPoolRunsEachIterationOnce(t *testing.T) {
	p := newWorkerPool(3)
	for _, n := range []int{0, 1, 2, 7, 1000} {
		counts := make([]atomic.Int32, n)
		p.Run(n, func(i int) { counts[i].Add(1) })
		checkOnce(t, fmt.Sprintf("n=%d", n), counts)
	}
}

// A loop started from inside an iteration, or while another goroutine's loop runs, runs on its
// caller: every iteration still runs once, and nothing deadlocks.
func TestWorkerPoolNestedAndConcurrent(t *testing.T) {
	p := newWorkerPool(2)
	outer := make([]atomic.Int32, 8)
	inner := make([]atomic.Int32, 8*50)
	p.Run(8, func(i int) {
		outer[i].Add(1)
		p.Run(50, func(j int) { inner[50*i+j].Add(1) })
	})
	checkOnce(t, "outer", outer)
	checkOnce(t, "inner", inner)

	var wg sync.WaitGroup
	counts := make([]atomic.Int32, 6*400)
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for rep := range 20 {
				p.Run(20, func(i int) { counts[400*g+20*rep+i].Add(1) })
			}
		}()
	}
	wg.Wait()
	checkOnce(t, "concurrent callers", counts)
}

// A panic in an iteration, wherever it runs, reaches run's caller after the other iterations
// have run, and the pool keeps working.
func TestWorkerPoolPanicReachesCaller(t *testing.T) {
	p := newWorkerPool(2)
	for rep := range 20 {
		counts := make([]atomic.Int32, 64)
		got := func() (v any) {
			defer func() { v = recover() }()
			p.Run(64, func(i int) {
				counts[i].Add(1)
				if i == rep {
					panic(fmt.Sprint("iteration ", i))
				}
			})
			return nil
		}()
		if want := fmt.Sprint("iteration ", rep); got != want {
			t.Fatalf("run panicked with %v, want %q", got, want)
		}
		checkOnce(t, "iterations around a panic", counts)
	}
	counts := make([]atomic.Int32, 10)
	p.Run(10, func(i int) { counts[i].Add(1) })
	checkOnce(t, "after panics", counts)
}

// Helpers park once idle for spinFor, and a loop started afterwards wakes them.
func TestWorkerPoolParksAndWakes(t *testing.T) {
	p := newWorkerPool(2)
	p.Run(4, func(int) {})
	deadline := time.Now().Add(5 * time.Second)
	for _, h := range p.helpers {
		for !h.parked.Load() {
			if time.Now().After(deadline) {
				t.Fatal("an idle helper never parked")
			}
			time.Sleep(time.Millisecond)
		}
	}
	// Iterations that wait for each other can only finish if the helpers really run them.
	var started atomic.Int32
	p.Run(3, func(int) {
		started.Add(1)
		for started.Load() < 3 {
			if time.Now().After(deadline) {
				return
			}
		}
	})
	if started.Load() != 3 || time.Now().After(deadline) {
		t.Fatal("parked helpers did not take part in the next loop")
	}
}

func TestParallelRangeCoversOnce(t *testing.T) {
	for _, c := range []struct{ n, grain, align int }{
		{0, 16, 16}, {5, 16, 16}, {100, 16, 16}, {1000, 7, 16}, {1001, 1, 1}, {1 << 16, 1 << 12, 4},
	} {
		counts := make([]atomic.Int32, c.n)
		var mu sync.Mutex
		var ranges [][2]int
		ParallelRange(c.n, c.grain, c.align, func(lo, hi int) {
			mu.Lock()
			ranges = append(ranges, [2]int{lo, hi})
			mu.Unlock()
			for i := lo; i < hi; i++ {
				counts[i].Add(1)
			}
		})
		checkOnce(t, fmt.Sprintf("%+v", c), counts)
		for _, r := range ranges {
			if r[1] != c.n && (r[0]%c.align != 0 || r[1]%c.align != 0) {
				t.Errorf("%+v: range %v is not aligned to %d", c, r, c.align)
			}
			if len(ranges) > 1 && r[1]-r[0] < c.grain && r[1] != c.n {
				t.Errorf("%+v: range %v is shorter than the grain", c, r)
			}
		}
	}
}

// BenchmarkWorkers splits a matrix product (1024×64 by 64×64) in two: on goroutines started for
// it, and on the worker pool. Compare with one goroutine doing it all ("one").
func BenchmarkWorkers(b *testing.B) {
	if !kernels.HasAVX512() {
		b.Skip("the benchmark's kernel needs AVX-512")
	}
	const m, n, k = 1024, 64, 64
	x, w, out := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	half := func(h int) {
		r0 := h * m / 2
		kernels.MatmulGroups(out[r0*n:], n, x[r0*k:], k, 1, m/2, k, w, n, 16, n/16, nil, kernels.EpiStore)
	}
	report := func(b *testing.B) {
		b.ReportMetric(float64(2*m*n*k*b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	}
	b.Run("one", func(b *testing.B) {
		for range b.N {
			half(0)
			half(1)
		}
		report(b)
	})
	b.Run("goroutines", func(b *testing.B) {
		for range b.N {
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { half(1); wg.Done() }()
			half(0)
			wg.Wait()
		}
		report(b)
	})
	b.Run("pool", func(b *testing.B) {
		p := newWorkerPool(1)
		for range b.N {
			p.Run(2, half)
		}
		report(b)
	})
}
