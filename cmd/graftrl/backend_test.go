package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graftrl/graftrl/policy"
)

// A bad --backend value is refused input (status 2); a valid backend this machine cannot load
// (a missing plugin, a file that is not one, no GPU for xla:cuda) is an environment failure
// (status 1). Each is reported within seconds, without a crash, naming what was wrong.
func TestBackendStatuses(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	cfg := writeTiny(t, dir, "")
	runs := filepath.Join(dir, "runs")
	text := filepath.Join(dir, "pjrt_c_api_cpu_plugin.so")
	if err := os.WriteFile(text, []byte("not a plugin\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	train := []string{"train", "--config", cfg, "--out-dir", runs, "--backend"}
	type tc struct {
		args       []string
		pluginPath string // PJRT_PLUGIN_LIBRARY_PATH
		status     int
		want       string
	}
	cases := []tc{
		{append(train, "tpu"), "", exitConfig, `--backend: unknown backend "tpu" (allowed: go, xla:cpu, xla:cuda, xla:/path/to/plugin.so)`},
		{append(train, "xla:"), "", exitConfig, `--backend: unknown backend "xla:"`},
		{append(train, "xla:relative.so"), "", exitConfig, `unknown backend "xla:relative.so"`},
		{[]string{"train", "--config", cfg, "--out-dir", runs, "--set", "backend=xla:gpu"}, "", exitConfig, `backend: unknown backend "xla:gpu"`},
		{[]string{"bench", "--config", "", "--backend", "tpu"}, "", exitConfig, `unknown backend "tpu"`},
		{append(train, "xla:/nonexistent/pjrt_plugin.so"), "", exitError, "PJRT plugin /nonexistent/pjrt_plugin.so: no such file"},
		{append(train, "xla:"+text), "", exitError, "not a shared library (no ELF header)"},
		{append(train, "xla:cpu"), dir, exitError, text + ": not a shared library (no ELF header)"},
		{append(train, "xla:cpu"), empty, exitError, "no plugins found"},
		{[]string{"bench", "--config", "", "--backend", "xla:/nonexistent/pjrt_plugin.so"}, "", exitError, "no such file"},
	}
	if !policy.HasNVIDIAGPU() {
		cases = append(cases, tc{append(train, "xla:cuda"), "", exitError, `backend "xla:cuda" unavailable: no NVIDIA GPU on this machine`})
	}
	for _, c := range cases {
		cmd := exec.Command(bin, c.args...)
		cmd.Env = os.Environ()
		if c.pluginPath != "" {
			cmd.Env = append(cmd.Env, policy.PluginPathEnv+"="+c.pluginPath)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		start := time.Now()
		err := cmd.Run()
		status := 0
		if ee, ok := err.(*exec.ExitError); ok {
			status = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if status != c.status || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v (%s=%s): exit %d, stderr %q; want exit %d mentioning %q", c.args, policy.PluginPathEnv, c.pluginPath, status, stderr.String(), c.status, c.want)
		}
		if strings.Contains(stderr.String(), "goroutine ") || strings.Contains(stderr.String(), "SIGSEGV") {
			t.Errorf("%v: crashed:\n%s", c.args, stderr.String())
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%v: took %s", c.args, d)
		}
	}
	if entries, _ := os.ReadDir(runs); len(entries) > 0 {
		t.Errorf("refused commands wrote runs: %v", entries)
	}
}
