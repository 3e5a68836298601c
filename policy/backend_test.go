package policy

import (
	"strings"
	"testing"
	"time"
)

// Unknown names and missing PJRT plugins are clear errors, quickly, never a panic or a hang.
func TestBackendErrors(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"tpu", `unknown backend "tpu"`},
		{"xla", `unknown backend "xla"`},
		{"go:parallelism=1", "unknown backend"},
	} {
		if _, err := NewBackend(BackendOptions{Name: tc.name}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to mention %q", tc.name, err, tc.want)
		}
	}
	// This machine has no PJRT plugin: xla:cpu must fail fast with a hint, not download one.
	t.Setenv("PJRT_PLUGIN_LIBRARY_PATH", t.TempDir())
	start := time.Now()
	b, err := NewBackend(BackendOptions{Name: "xla:cpu"})
	if err == nil {
		b.Finalize()
		t.Skip("a PJRT CPU plugin is installed here")
	}
	if !strings.Contains(err.Error(), "xla:cpu") || !strings.Contains(err.Error(), "--backend go") {
		t.Errorf("error %q should name the backend and suggest the go backend", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the missing plugin took %s to report", d)
	}
}

// The default backend comes from GOMLX_BACKEND when nothing is configured.
func TestResolveBackendName(t *testing.T) {
	t.Setenv(BackendEnv, "")
	if got := ResolveBackendName(""); got != "go" {
		t.Errorf("default = %q, want go", got)
	}
	t.Setenv(BackendEnv, "xla:cuda")
	if got := ResolveBackendName(""); got != "xla:cuda" {
		t.Errorf("from env = %q", got)
	}
	if got := ResolveBackendName("go"); got != "go" {
		t.Errorf("configured = %q", got)
	}
}
