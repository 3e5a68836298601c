package spec

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// BackendEnv is the environment variable read when no backend is configured (as GoMLX does).
const BackendEnv = "GOMLX_BACKEND"

// DefaultBackend is the pure-Go backend: it needs nothing installed.
const DefaultBackend = "go"

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
	return fmt.Errorf("%w %q (allowed: go, xla:cpu, xla:cuda, xla:/path/to/plugin.so)", ErrUnknownBackend, name)
}

// ErrUnknownBackend is wrapped by the error of a backend name that is not one of the allowed
// forms: bad input.
var ErrUnknownBackend = errors.New("unknown backend")
