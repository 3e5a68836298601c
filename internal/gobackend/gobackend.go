// Package gobackend makes GoMLX's pure-Go backend fast enough to train graftrl's policy: faster
// executors for the ops that dominate a training step (DotGeneral, element-wise arithmetic, Exp
// and Tanh, broadcasts, reductions, transposes, row gathers and scatters). Every executor is
// bit-identical to the one it replaces. The gradients of DotGeneral and BroadcastInDim, which
// every backend uses, are internal/gradients'; New registers them too.
//
// Nothing happens on import: New (or Install) patches GoMLX's executor tables, once per process,
// and only the `go` backend's selection calls it, so a program that runs on XLA leaves them as
// they are. The package reaches into gomlx v0.26.0 internals (see executors.go); gomlx is pinned
// and the tests fail if those internals move.
package gobackend

import (
	"os"
	"reflect"
	"sync"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"

	"github.com/graftrl/graftrl/internal/gradients"
	"github.com/graftrl/graftrl/internal/kernels"
)

// The CPU features the executors choose their kernels by. They are variables so that tests can
// run the narrower paths on a machine that has the wider ones.
var (
	useFMA           = kernels.HasFMA()
	useAVX512        = kernels.HasAVX512()
	useGroups        = kernels.HasGroups()
	useAVX           = kernels.HasAVX()
	haveUnaryKernels = kernels.HasUnaryKernels()
)

// installOnce guards Install: GoMLX's tables are process-wide, and each override wraps the
// executor it finds, so installing twice would wrap graftrl's own executors.
var installOnce sync.Once

// Install replaces the Go backend's executors with graftrl's, once per process; later calls do
// nothing.
func Install() {
	installOnce.Do(func() {
		installBroadcast()
		installDot()
		installBinary()
		installGather()
		installReduce()
		installTranspose()
		installUnary()
		if useAVX {
			installFused()
		}
	})
}

// New installs graftrl's executors (Install) and gradients (gradients.Register) and creates the
// pure-Go backend, which fuses the element-wise chains of every graph it compiles (fuse.go). It
// runs a graph's ops one after another (ops_sequential) and each large op splits its own work
// across the worker pool (internal/workers): the backend's parallel mode starts a goroutine per
// op, and on the machines measured here a goroutine needs tens of microseconds to be woken on an
// idle core, longer than most ops take, so it gained nothing over one core. Parallelism stays
// unlimited for the backend's own executors: GoMLX v0.26's bounded worker pool deadlocks when
// several matmuls are in flight.
func New() (backends.Backend, error) {
	b, err := newSimplego()
	if err != nil || fuseProblem() != nil {
		return b, err
	}
	return fusingBackend{b}, nil
}

// Is reports whether b is the Go backend (New or NewUnfused), whose executables run any input
// shape without compiling again.
func Is(b backends.Backend) bool {
	if f, ok := b.(fusingBackend); ok {
		b = f.Backend
	}
	_, ok := b.(*simplego.Backend)
	return ok
}

// NewUnfused is New without fusing element-wise chains: the same values (fusing is bit for bit),
// one op at a time, for checks and speed comparisons.
func NewUnfused() (backends.Backend, error) { return newSimplego() }

// newSimplego installs graftrl's executors and gradients and creates the Go backend, unfused.
func newSimplego() (backends.Backend, error) {
	Install()
	gradients.Register()
	// simplego prints a line to stdout when parallelism is configured; keep stdout for our output.
	stdout := os.Stdout
	if devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		os.Stdout = devnull
		defer func() { os.Stdout = stdout; devnull.Close() }()
	}
	return simplego.New("parallelism=-1,ops_sequential")
}

// ExecutorTable returns the address of every entry of the Go backend's executor table (0 for an
// empty one), for tests and diagnostics that check whether graftrl's executors are installed.
func ExecutorTable() []uintptr {
	out := make([]uintptr, len(simplegoNodeExecutors))
	for i, e := range simplegoNodeExecutors {
		if e != nil {
			out[i] = reflect.ValueOf(e).Pointer()
		}
	}
	return out
}
