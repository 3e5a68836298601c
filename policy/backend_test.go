package policy

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/graftrl/graftrl/internal/gobackend"
	"github.com/graftrl/graftrl/policy/spec"
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
	t.Setenv(spec.BackendEnv, "")
	if got := spec.ResolveBackendName(""); got != "go" {
		t.Errorf("default = %q, want go", got)
	}
	t.Setenv(spec.BackendEnv, "xla:cuda")
	if got := spec.ResolveBackendName(""); got != "xla:cuda" {
		t.Errorf("from env = %q", got)
	}
	if got := spec.ResolveBackendName("go"); got != "go" {
		t.Errorf("configured = %q", got)
	}
}

// childEnv marks the test binary re-run by TestOnlyGoBackendPatchesGoMLX.
const childEnv = "GRAFTRL_TEST_EXECUTOR_TABLE_CHILD"

// Selecting any backend other than "go" leaves GoMLX's Go-backend executor table as it was;
// selecting "go" installs graftrl's executors. The check runs in a fresh process, since the
// installation is process-wide and other tests of this package select "go".
func TestOnlyGoBackendPatchesGoMLX(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestOnlyGoBackendPatchesGoMLX$", "-test.v")
		cmd.Env = append(os.Environ(), childEnv+"=1", "PJRT_PLUGIN_LIBRARY_PATH="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestOnlyGoBackendPatchesGoMLX") {
			t.Fatalf("child process: %v\n%s", err, out)
		}
		return
	}
	before := gobackend.ExecutorTable()
	for _, name := range []string{"xla:cpu", "xla:cuda", "xla:/nonexistent/plugin.so", "tpu"} {
		if b, err := NewBackend(BackendOptions{Name: name}); err == nil {
			b.Finalize()
		}
		if !slices.Equal(gobackend.ExecutorTable(), before) {
			t.Fatalf("selecting backend %q changed GoMLX's executor table", name)
		}
	}
	b, err := NewBackend(BackendOptions{Name: "go"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Finalize()
	after := gobackend.ExecutorTable()
	changed := 0
	for i := range after {
		if after[i] != before[i] {
			changed++
		}
	}
	if changed == 0 {
		t.Fatal("selecting the go backend left GoMLX's executor table unchanged")
	}
	t.Logf("the go backend replaced %d of %d executors", changed, len(after))
}
