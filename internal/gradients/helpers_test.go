package gradients

import (
	"os"
	"sync"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// xlaCPUEnv set to 1 makes the gradient checks on xla:cpu (TestXLACPU…) fail rather than skip
// when the CPU PJRT plugin does not load; CI installs it first (scripts/install-xla-cpu.sh).
const xlaCPUEnv = "GRAFTRL_XLA_CPU"

// goBackend is GoMLX's pure-Go backend with its own executors: the gradients are graph rewrites,
// checked here apart from graftrl's executors.
var goBackend = sync.OnceValues(func() (backends.Backend, error) {
	Register()
	return simplego.New("")
})

func backendT(t testing.TB) backends.Backend {
	t.Helper()
	b, err := goBackend()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// xlaT returns the xla:cpu backend, skipping the test where the plugin is not installed (failing
// it with GRAFTRL_XLA_CPU=1).
func xlaT(t testing.TB) backends.Backend {
	t.Helper()
	if os.Getenv(xlaCPUEnv) != "1" {
		t.Skipf("the checks on xla:cpu need its PJRT plugin (scripts/install-xla-cpu.sh): %s=1 runs them, as .ci/run does", xlaCPUEnv)
	}
	b, err := xlaBackend()
	if err != nil {
		t.Fatalf("%s=1 but xla:cpu does not load: %v", xlaCPUEnv, err)
	}
	return b
}

func shapeOf(dims []int) shapes.Shape { return shapes.Make(dtypes.Float64, dims...) }
