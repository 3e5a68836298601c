//go:build !cgo || noxla

package policy

import (
	"errors"
	"strings"
	"testing"
)

// A build without XLA (CGO_ENABLED=0, or -tags noxla) still trains on go and refuses every
// xla:* backend as unavailable on this machine, saying why, before it looks for a plugin.
func TestBackendWithoutXLA(t *testing.T) {
	if XLABuilt {
		t.Fatal("XLABuilt in a build without XLA")
	}
	for _, name := range []string{"xla:cpu", "xla:cuda", "xla:/opt/pjrt_c_api_cpu_plugin.so"} {
		_, err := NewBackend(BackendOptions{Name: name})
		if !errors.Is(err, ErrBackendUnavailable) || !strings.Contains(err.Error(), "built without XLA") {
			t.Errorf("%s: %v, want ErrBackendUnavailable saying the build has no XLA", name, err)
		}
	}
	if _, err := NewBackend(BackendOptions{Name: "go"}); err != nil {
		t.Errorf("go: %v", err)
	}
}
