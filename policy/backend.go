package policy

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/gomlx/gomlx/backends"

	"github.com/graftrl/graftrl/internal/gobackend"
	"github.com/graftrl/graftrl/internal/gradients"

	"github.com/graftrl/graftrl/policy/spec"
)

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
	// Devices, when above 1, asks the CPU PJRT plugin for that many host devices (its
	// cpu_device_count option), so that updates can be split over them (Options.Devices). A GPU
	// plugin exposes the GPUs it finds; the go backend has one device.
	Devices int
}

// ErrBackendUnavailable is wrapped by NewBackend's error when a valid backend cannot be loaded
// here (no PJRT plugin for it, a file that is not one, no GPU for xla:cuda): a problem of the
// machine, not of the input; another backend or an installed plugin is the way out.
var ErrBackendUnavailable = errors.New("unavailable")

// NewBackend creates the backend. Errors (unknown name, missing PJRT plugin) come back within
// backendTimeout; GoMLX never downloads a plugin unless opts.InstallPlugin is set. A plugin
// file is checked (CheckPluginFile, then the PJRT C API version it reports) before go-xla
// initialises it, since go-xla crashes on files that are not plugins and on plugins of another
// major API version.
func NewBackend(opts BackendOptions) (backends.Backend, error) {
	name := spec.ResolveBackendName(opts.Name)
	if err := spec.ValidateBackendName(name); err != nil {
		return nil, err
	}
	// graftrl's DotGeneral and BroadcastInDim gradients, for every backend: GoMLX's materialise
	// a [tokens × in × out] tensor per dense layer that XLA does not fuse away either.
	gradients.Register()
	if name == "go" {
		return gobackend.New()
	}
	if !XLABuilt {
		return nil, fmt.Errorf("backend %q %w: this graftrl was built without XLA (CGO_ENABLED=0 or -tags noxla); build it with cgo, or use --backend go", name, ErrBackendUnavailable)
	}
	plugin := strings.TrimPrefix(name, "xla:")
	check := checkNamedPlugin
	if filepath.IsAbs(plugin) {
		check = checkPlugin
	}
	if !opts.InstallPlugin || filepath.IsAbs(plugin) {
		if err := check(plugin); err != nil {
			return nil, fmt.Errorf("backend %q %w: %v", name, ErrBackendUnavailable, err)
		}
	}
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
		b, err := newXLABackend(plugin, opts)
		if err != nil {
			done <- result{err: err}
			return
		}
		done <- result{b: b}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			hint := "install the PJRT plugin for " + plugin + " (see docs/backends.md, Choosing a backend), or pass --install-plugin on a machine with internet access, or use --backend go"
			if filepath.IsAbs(plugin) {
				hint = "check the plugin file, or use --backend go"
			}
			return nil, fmt.Errorf("backend %q %w: %v; %s", name, ErrBackendUnavailable, r.err, hint)
		}
		return r.b, nil
	case <-time.After(backendTimeout):
		return nil, fmt.Errorf("backend %q: no answer after %s (plugin download or load hung); use --backend go", name, backendTimeout)
	}
}
