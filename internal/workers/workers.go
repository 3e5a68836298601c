// Package workers is the process-wide worker pool that splits one large operation (a matrix
// product, an element-wise op, the rows of a decode step) across the CPUs, and the scratch buffers
// those operations reuse. Its users are the Go-backend executors (internal/gobackend) and the host
// inference engine (policy/host).
package workers

import (
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// A goroutine started for a piece of work only runs in parallel once the operating system has
// woken an idle thread for it. On the virtual machines graftrl is measured on that wake-up takes
// tens of microseconds, as long as a whole quickstart-sized matrix product: a product split
// between two fresh goroutines took as long as on one (`go test ./internal/workers -bench Workers`).
// Helpers that keep polling for work for a short while after each job take it up within a
// microsecond instead, so even a few microseconds of work split two ways runs twice as fast.
// This is how OpenMP runtimes (and so PyTorch) keep their threads.

// spinFor is how long an idle helper keeps polling before it parks: long enough to bridge the
// gaps between the operations of one graph execution, short enough that an idle process stops
// burning CPU at once.
const spinFor = 300 * time.Microsecond

// Pool runs the iterations of a loop on the calling goroutine and on helper goroutines.
// One loop runs at a time: a loop started while another is running (from another goroutine, or
// from inside an iteration) runs on its caller alone.
type Pool struct {
	busy    sync.Mutex // held by the caller whose loop the helpers serve
	job     atomic.Pointer[poolJob]
	seq     uint64 // the last job's number (under busy)
	helpers []*poolHelper
}

// poolJob is one loop: iterations 0..n−1 of fn, claimed one at a time.
type poolJob struct {
	seq  uint64 // numbers jobs so that helpers tell a new one from the one they last served
	n    int64
	fn   func(i int)
	next atomic.Int64 // next unclaimed iteration
	left atomic.Int64 // iterations not finished
	// panicked is the first panic of an iteration, re-raised on run's caller (where GoMLX turns
	// an executor's panic into an error) rather than ending the process from a helper.
	panicked atomic.Pointer[any]
}

// poolHelper is one helper goroutine's parking state.
type poolHelper struct {
	parked atomic.Bool
	wake   chan struct{}
}

// workersPool is the process's pool, with one helper per extra CPU of GOMAXPROCS at first use:
// like the Go scheduler's own threads, a process-wide resource rather than per-policy state.
var (
	workersOnce sync.Once
	workersPool *Pool
)

// pool returns the process's worker pool, starting it on first use.
func Shared() *Pool {
	workersOnce.Do(func() { workersPool = newWorkerPool(runtime.GOMAXPROCS(0) - 1) })
	return workersPool
}

// newWorkerPool starts a pool with the given number of helper goroutines (which live as long as
// the process).
func newWorkerPool(helpers int) *Pool {
	p := &Pool{}
	for range max(0, helpers) {
		h := &poolHelper{wake: make(chan struct{}, 1)}
		p.helpers = append(p.helpers, h)
		go p.serve(h)
	}
	return p
}

// size is the number of goroutines a loop can run on (the caller and the helpers).
func (p *Pool) Size() int { return len(p.helpers) + 1 }

// run calls fn(i) for i in 0..n−1, spread over the caller and the helpers, and returns when all
// calls have returned. Iterations must be independent of each other. If one panics, the others
// still run and run panics with its value on the calling goroutine.
func (p *Pool) Run(n int, fn func(i int)) {
	if n <= 0 {
		return
	}
	if n == 1 || len(p.helpers) == 0 || !p.busy.TryLock() {
		for i := range n {
			fn(i)
		}
		return
	}
	defer p.busy.Unlock()
	p.seq++
	j := &poolJob{seq: p.seq, n: int64(n), fn: fn}
	j.left.Store(int64(n))
	p.job.Store(j)
	for _, h := range p.helpers {
		if h.parked.CompareAndSwap(true, false) {
			h.wake <- struct{}{}
		}
	}
	j.work()
	for spins := 0; j.left.Load() != 0; spins++ {
		if spins%1024 == 1023 {
			runtime.Gosched() // a helper was descheduled mid-iteration: let it have this CPU
		}
	}
	p.job.Store(nil)
	if v := j.panicked.Load(); v != nil {
		panic(*v)
	}
}

// work claims and runs iterations of j until none is left.
func (j *poolJob) work() {
	for {
		i := j.next.Add(1) - 1
		if i >= j.n {
			return
		}
		j.call(int(i))
	}
}

// call runs iteration i, recording a panic instead of letting it end the goroutine.
func (j *poolJob) call(i int) {
	defer func() {
		if r := recover(); r != nil {
			j.panicked.CompareAndSwap(nil, &r)
		}
		j.left.Add(-1)
	}()
	j.fn(i)
}

// serve is a helper's loop: take part in each new job, poll for the next one for spinFor, then
// park until run wakes it.
func (p *Pool) serve(h *poolHelper) {
	var last uint64
	for {
		idle := time.Now()
		for spins := 0; ; spins++ {
			if j := p.job.Load(); j != nil && j.seq != last {
				last = j.seq
				j.work()
				idle = time.Now()
				continue
			}
			if spins%1024 != 1023 {
				continue
			}
			if time.Since(idle) > spinFor {
				break
			}
			if spins%16384 == 16383 {
				runtime.Gosched() // let goroutines waiting for a CPU (GC workers, I/O) run
			}
		}
		h.parked.Store(true)
		if j := p.job.Load(); j != nil && j.seq != last && h.parked.CompareAndSwap(true, false) {
			continue // a job arrived before run could see the helper parked
		}
		<-h.wake // run clears parked before it sends
	}
}

// ForEach calls fn(i) for i in 0..n−1: across the worker pool when parallel is set, else in order
// on the caller (work too small to be worth handing out).
func ForEach(n int, parallel bool, fn func(i int)) {
	if parallel {
		Shared().Run(n, fn)
		return
	}
	for i := range n {
		fn(i)
	}
}

// ParallelRange calls fn(lo, hi) on consecutive ranges covering 0..n−1, in parallel when n is at
// least twice grain: up to two ranges per goroutine of the pool, each a multiple of align long
// (but the last) and at least grain long. Callers whose results do not depend on how a loop is
// cut (element-wise operations, rows computed independently) stay bit for bit deterministic.
func ParallelRange(n, grain, align int, fn func(lo, hi int)) {
	p := Shared()
	parts := min(2*p.Size(), n/max(1, grain))
	if parts <= 1 {
		if n > 0 {
			fn(0, n)
		}
		return
	}
	align = max(1, align)
	step := (n + parts - 1) / parts
	step = (step + align - 1) / align * align
	p.Run((n+step-1)/step, func(i int) { fn(i*step, min(n, (i+1)*step)) })
}

// scratchPools recycle the scratch buffers of the executors (packed operands, copies), one pool
// per power-of-two capacity so that a request never drops a buffer that is merely too small: a
// fresh buffer of a few hundred kilobytes costs more in page faults and zeroing than the
// operation's arithmetic. Like the Go backend's own buffer pools they are a process-wide cache.
var scratchPools [48]sync.Pool

// GetScratch returns a float32 buffer of length n with arbitrary contents; give it back with
// PutScratch once nothing reads it.
func GetScratch(n int) *[]float32 {
	c := bits.Len(uint(max(n, 1) - 1)) // the capacity class: 2^c ≥ n
	if b, ok := scratchPools[c].Get().(*[]float32); ok {
		*b = (*b)[:n]
		return b
	}
	b := make([]float32, n, 1<<c)
	return &b
}

// PutScratch returns a buffer from GetScratch to the pool of its capacity.
func PutScratch(b *[]float32) {
	if c := bits.Len(uint(cap(*b)) - 1); c < len(scratchPools) && cap(*b) == 1<<c {
		scratchPools[c].Put(b)
	}
}
