package policy

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/backends/xla"
)

// BackendEnv is the environment variable read when no backend is configured (as GoMLX does).
const BackendEnv = "GOMLX_BACKEND"

// DefaultBackend is the pure-Go backend: it needs nothing installed.
const DefaultBackend = "go"

// backendTimeout bounds how long creating a backend may take, so that a missing or broken plugin
// (or a plugin download on a network that drops packets) is reported instead of hanging.
const backendTimeout = 60 * time.Second

// BackendOptions selects and configures the GoMLX backend.
type BackendOptions struct {
	// Name is "go" (pure Go, default), "xla:cpu" or "xla:cuda" (a PJRT plugin must be installed),
	// or "xla:/abs/path/to/pjrt_c_api_plugin.so". Empty means $GOMLX_BACKEND, then "go".
	Name string
	// InstallPlugin lets GoMLX download a missing PJRT plugin (needs internet). Off by default.
	InstallPlugin bool
}

// ResolveBackendName applies the defaults: the configured name, else $GOMLX_BACKEND, else "go".
func ResolveBackendName(name string) string {
	if name != "" {
		return name
	}
	if env := os.Getenv(BackendEnv); env != "" {
		return env
	}
	return DefaultBackend
}

// ValidateBackendName checks a backend name without creating the backend.
func ValidateBackendName(name string) error {
	switch {
	case name == "go", name == "xla:cpu", name == "xla:cuda":
		return nil
	case strings.HasPrefix(name, "xla:/"):
		return nil
	}
	return fmt.Errorf("unknown backend %q (allowed: go, xla:cpu, xla:cuda, xla:/path/to/plugin.so)", name)
}

// NewBackend creates the backend. Errors (unknown name, missing PJRT plugin) come back within
// backendTimeout; GoMLX never downloads a plugin unless opts.InstallPlugin is set.
func NewBackend(opts BackendOptions) (backends.Backend, error) {
	name := ResolveBackendName(opts.Name)
	if err := ValidateBackendName(name); err != nil {
		return nil, err
	}
	if name == "go" {
		return newGoBackend()
	}
	xla.EnableAutoInstall(opts.InstallPlugin)
	plugin := strings.TrimPrefix(name, "xla:")
	type result struct {
		b   backends.Backend
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{err: fmt.Errorf("%v", r)}
			}
		}()
		b, err := xla.New(plugin)
		done <- result{b, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			hint := "install the PJRT plugin for " + plugin + " (see README, Backends), or pass --install-plugin on a machine with internet access, or use --backend go"
			return nil, fmt.Errorf("backend %q unavailable: %v; %s", name, r.err, hint)
		}
		return r.b, nil
	case <-time.After(backendTimeout):
		return nil, fmt.Errorf("backend %q: no answer after %s (plugin download or load hung); use --backend go", name, backendTimeout)
	}
}

// newGoBackend creates the pure-Go backend. It runs a graph's ops one after another
// (ops_sequential) and each large op splits its own work across the worker pool (workers.go):
// the backend's parallel mode starts a goroutine per op, and on the machines measured here a
// goroutine needs tens of microseconds to be woken on an idle core, longer than most ops take, so
// it gained nothing over one core. Parallelism stays unlimited for the backend's own executors:
// GoMLX v0.26's bounded worker pool deadlocks when several matmuls are in flight.
func newGoBackend() (backends.Backend, error) {
	// simplego prints a line to stdout when parallelism is configured; keep stdout for our output.
	stdout := os.Stdout
	if devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		os.Stdout = devnull
		defer func() { os.Stdout = stdout; devnull.Close() }()
	}
	return simplego.New("parallelism=-1,ops_sequential")
}
