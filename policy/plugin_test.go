package policy

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/graftrl/graftrl/policy/spec"
)

// fakePluginC exports GetPjrtApi returning an API table that reports PJRT C API
// FAKE_MAJOR.FAKE_MINOR and holds no functions; without FAKE_MAJOR it exports something else.
const fakePluginC = `#include <stddef.h>
typedef struct { size_t s; void *e; size_t vs; void *ve; int major; int minor; void *fns[200]; } api_t;
#ifdef FAKE_MAJOR
static api_t api = { sizeof(api_t), 0, 24, 0, FAKE_MAJOR, FAKE_MINOR, {0} };
const api_t *GetPjrtApi(void) { return &api; }
#else
int not_a_plugin(void) { return 1; }
#endif
`

// buildSharedLib compiles fakePluginC with the given -D flags into dir/name.
func buildSharedLib(t *testing.T, dir, name string, defs ...string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc is needed to build the test libraries")
	}
	src := filepath.Join(dir, "fake.c")
	if err := os.WriteFile(src, []byte(fakePluginC), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	args := append([]string{"-shared", "-fPIC", "-o", out, src}, defs...)
	if b, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	return out
}

// Files that are not PJRT plugins, given by path, are refused with what they are instead,
// quickly, as an unavailable backend (not a crash inside go-xla).
func TestBackendBadPluginFile(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "pjrt_c_api_text_plugin.so")
	os.WriteFile(text, []byte("not a library\n"), 0o644)
	empty := filepath.Join(dir, "empty.so")
	os.WriteFile(empty, nil, 0o644)
	lib := buildSharedLib(t, t.TempDir(), "libother.so")
	v1 := buildSharedLib(t, t.TempDir(), "pjrt_c_api_v1_plugin.so", "-DFAKE_MAJOR=1", "-DFAKE_MINOR=0")
	// The same library marked as built for another architecture (e_machine, bytes 18–19).
	other := filepath.Join(dir, "pjrt_c_api_other_plugin.so")
	b, err := os.ReadFile(buildSharedLib(t, t.TempDir(), "pjrt_c_api_fake_plugin.so", "-DFAKE_MAJOR=0", "-DFAKE_MINOR=83"))
	if err != nil {
		t.Fatal(err)
	}
	foreign, wantArch := elf.EM_AARCH64, "built for EM_AARCH64"
	if runtime.GOARCH == "arm64" {
		foreign, wantArch = elf.EM_X86_64, "built for EM_X86_64"
	}
	binary.LittleEndian.PutUint16(b[18:], uint16(foreign))
	os.WriteFile(other, b, 0o755)
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "missing.so"), "missing.so: no such file"},
		{dir, "a folder, not a file"},
		{text, "not a shared library (no ELF header)"},
		{empty, "not a shared library (no ELF header)"},
		{lib, "does not export GetPjrtApi"},
		{other, wantArch + ", this machine is " + runtime.GOARCH},
		{v1, "reports PJRT C API 1.0, incompatible with the 0.x"},
	} {
		start := time.Now()
		b, err := NewBackend(BackendOptions{Name: "xla:" + tc.path})
		if err == nil {
			b.Finalize()
			t.Errorf("%s: loaded", tc.path)
			continue
		}
		if !errors.Is(err, ErrBackendUnavailable) || errors.Is(err, spec.ErrUnknownBackend) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %q, want an unavailable backend mentioning %q", tc.path, err, tc.want)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %s to report", tc.path, d)
		}
	}
}

// A file in a plugin folder that is named like a plugin but is not one is reported by path and
// folder; go-xla would crash on it.
func TestBackendBadPluginInFolder(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "pjrt_c_api_cpu_plugin.so"), []byte("text"), 0o644)
	t.Setenv(PluginPathEnv, dir)
	_, err := NewBackend(BackendOptions{Name: "xla:cpu"})
	if !errors.Is(err, ErrBackendUnavailable) || !strings.Contains(err.Error(), filepath.Join(dir, "pjrt_c_api_cpu_plugin.so")+": not a shared library") ||
		!strings.Contains(err.Error(), "in the plugin folder "+dir) {
		t.Errorf("error %v, want the bad file and its folder named", err)
	}

	v1 := t.TempDir()
	buildSharedLib(t, v1, "pjrt_plugin_cpu.so", "-DFAKE_MAJOR=1", "-DFAKE_MINOR=2")
	t.Setenv(PluginPathEnv, v1)
	if _, err := NewBackend(BackendOptions{Name: "xla:cpu"}); !errors.Is(err, ErrBackendUnavailable) || !strings.Contains(err.Error(), "reports PJRT C API 1.2") {
		t.Errorf("error %v, want the incompatible version named", err)
	}
}

// xla:cuda on a machine without an NVIDIA GPU says so, even with a plugin under the cuda name
// (here the CPU plugin linked as one, where it is installed).
func TestBackendCUDAWithoutGPU(t *testing.T) {
	if HasNVIDIAGPU() {
		t.Skip("this machine has an NVIDIA GPU")
	}
	dir := t.TempDir()
	if cpu, ok := installedCPUPlugin(); ok {
		os.Symlink(cpu, filepath.Join(dir, "pjrt_c_api_cuda_plugin.so"))
	}
	t.Setenv(PluginPathEnv, dir)
	start := time.Now()
	_, err := NewBackend(BackendOptions{Name: "xla:cuda"})
	if !errors.Is(err, ErrBackendUnavailable) || !strings.Contains(err.Error(), "no NVIDIA GPU on this machine") {
		t.Errorf("error %v, want no NVIDIA GPU", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s to report", d)
	}
}

// The installed CPU plugin (scripts/install-xla-cpu.sh) passes the checks and reports API 0.x.
func TestCheckInstalledPlugin(t *testing.T) {
	cpu, ok := installedCPUPlugin()
	if !ok {
		t.Skip("no CPU plugin installed (scripts/install-xla-cpu.sh)")
	}
	if err := CheckPluginFile(cpu); err != nil {
		t.Fatal(err)
	}
	major, minor, err := PluginAPIVersion(cpu)
	if err != nil || major != PJRTAPIMajor || minor == 0 {
		t.Fatalf("version %d.%d, %v", major, minor, err)
	}
	t.Logf("%s: PJRT C API %d.%d", cpu, major, minor)
}

// Names that are not a backend are bad input (ErrUnknownBackend), not an unavailable one.
func TestUnknownBackendName(t *testing.T) {
	for _, name := range []string{"tpu", "xla", "xla:", "xla:gpu", "xla:relative/plugin.so", "go:parallelism=1"} {
		_, err := NewBackend(BackendOptions{Name: name})
		if !errors.Is(err, spec.ErrUnknownBackend) || errors.Is(err, ErrBackendUnavailable) || !strings.Contains(err.Error(), "allowed: go, xla:cpu, xla:cuda") {
			t.Errorf("%q: error %v", name, err)
		}
	}
}

// installedCPUPlugin is the CPU plugin in go-xla's default folder, if installed.
func installedCPUPlugin() (string, bool) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", false
	}
	p := filepath.Join(home, ".local", "lib", "go-xla", "pjrt_c_api_cpu_plugin.so")
	_, err = os.Stat(p)
	return p, err == nil
}
