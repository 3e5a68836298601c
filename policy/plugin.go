package policy

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// PluginPathEnv lists the folders searched for PJRT plugins (colon-separated); when set it
// replaces go-xla's default folders.
const PluginPathEnv = "PJRT_PLUGIN_LIBRARY_PATH"

// pjrtSymbol is the function every PJRT plugin exports.
const pjrtSymbol = "GetPjrtApi"

// CheckPluginFile checks, without loading it, that path is a PJRT plugin this process could
// load: a regular file, an ELF shared library for this machine's architecture that exports
// GetPjrtApi. Its error says what the file is instead. A file that passes can still fail
// inside the plugin (a missing CUDA library, a PJRT API the plugin does not support).
func CheckPluginFile(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("PJRT plugin %s: no such file", path)
		}
		return fmt.Errorf("PJRT plugin %s: %v", path, err)
	}
	if info.IsDir() {
		return fmt.Errorf("PJRT plugin %s: a folder, not a file (for a folder of plugins set %s and use xla:cpu or xla:cuda)", path, PluginPathEnv)
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("PJRT plugin %s: not a regular file (a %s)", path, info.Mode().Type())
	}
	f, err := elf.Open(path)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "bad magic number") {
			return fmt.Errorf("PJRT plugin %s: not a shared library (no ELF header): a PJRT plugin is a .so file exporting %s", path, pjrtSymbol)
		}
		return fmt.Errorf("PJRT plugin %s: not a readable ELF shared library: %v", path, err)
	}
	defer f.Close()
	if f.Type != elf.ET_DYN {
		return fmt.Errorf("PJRT plugin %s: an ELF file of type %s, not a shared library (ET_DYN)", path, f.Type)
	}
	if want, ok := elfMachines[runtime.GOARCH]; ok && f.Machine != want {
		return fmt.Errorf("PJRT plugin %s: built for %s, this machine is %s (%s)", path, f.Machine, runtime.GOARCH, want)
	}
	syms, err := f.DynamicSymbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return fmt.Errorf("PJRT plugin %s: cannot read its dynamic symbols: %v", path, err)
	}
	for _, s := range syms {
		if s.Name == pjrtSymbol && s.Section != elf.SHN_UNDEF && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			return nil
		}
	}
	return fmt.Errorf("PJRT plugin %s: a shared library that does not export %s, so not a PJRT plugin", path, pjrtSymbol)
}

// elfMachines maps GOARCH to the ELF machine of libraries this process can load.
var elfMachines = map[string]elf.Machine{
	"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64, "386": elf.EM_386, "arm": elf.EM_ARM,
	"ppc64le": elf.EM_PPC64, "s390x": elf.EM_S390, "riscv64": elf.EM_RISCV,
}

// PluginDirs are the folders go-xla searches for plugins by name: $PJRT_PLUGIN_LIBRARY_PATH
// when set, else ~/.local/lib/go-xla, /usr/local/lib/go-xla (each with its nvidia/ folder),
// their older gomlx/pjrt equivalents and the absolute entries of $LD_LIBRARY_PATH. (go-xla
// also searches the folders of /etc/ld.so.conf; they are not listed here.)
func PluginDirs() []string {
	if v, ok := os.LookupEnv(PluginPathEnv); ok {
		return slices.DeleteFunc(strings.Split(v, ":"), func(s string) bool { return s == "" })
	}
	var dirs []string
	if home, err := os.UserHomeDir(); err == nil {
		d := filepath.Join(home, ".local", "lib", "go-xla")
		dirs = append(dirs, d, filepath.Join(d, "nvidia"), filepath.Join(home, ".local", "lib", "gomlx", "pjrt"))
	}
	dirs = append(dirs, "/usr/local/lib/go-xla", "/usr/local/lib/go-xla/nvidia", "/usr/local/lib/gomlx/pjrt")
	for _, d := range strings.Split(os.Getenv("LD_LIBRARY_PATH"), ":") {
		if filepath.IsAbs(d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// pluginFiles lists the files of dir that go-xla takes for plugins, with the plugin name each
// stands for (pjrt_c_api_NAME_plugin.so, pjrt-plugin-NAME.so, pjrt_plugin_NAME.so).
func pluginFiles(dir string) map[string]string {
	files := map[string]string{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		n := e.Name()
		var name string
		switch {
		case strings.HasPrefix(n, "pjrt_c_api_") && strings.HasSuffix(n, "_plugin.so"):
			name = strings.TrimSuffix(strings.TrimPrefix(n, "pjrt_c_api_"), "_plugin.so")
		case (strings.HasPrefix(n, "pjrt-plugin-") || strings.HasPrefix(n, "pjrt_plugin_")) && strings.HasSuffix(n, ".so"):
			name = strings.TrimSuffix(n[len("pjrt-plugin-"):], ".so")
		}
		if name != "" {
			files[filepath.Join(dir, n)] = name
		}
	}
	return files
}

// isCUDAName is go-xla's test for a CUDA plugin: it skips those where no NVIDIA GPU is found.
func isCUDAName(name string) bool {
	u := strings.ToUpper(name)
	return strings.Contains(u, "CUDA") || strings.Contains(u, "NVIDIA")
}

// HasNVIDIAGPU reports whether this machine shows an NVIDIA GPU as go-xla looks for one: a
// /dev/nvidia* device, else nvidia-smi finding one.
func HasNVIDIAGPU() bool {
	if m, _ := filepath.Glob("/dev/nvidia*"); len(m) > 0 {
		return true
	}
	if _, err := exec.LookPath("nvidia-smi"); err != nil {
		return false
	}
	out, err := exec.Command("nvidia-smi").CombinedOutput()
	return err == nil && strings.Contains(string(out), "NVIDIA-SMI")
}

// checkNamedPlugin checks what go-xla will load for the plugin name ("cpu", "cuda") before it
// does: every plugin file in PluginDirs (go-xla opens them all to list the available ones; a
// file that is not a plugin crashes that listing), and a GPU for a CUDA plugin.
func checkNamedPlugin(name string) error {
	hasGPU := sync.OnceValue(HasNVIDIAGPU) // looked for once, and only when a CUDA name needs it
	if isCUDAName(name) && !hasGPU() {
		return fmt.Errorf("no NVIDIA GPU on this machine (no /dev/nvidia* device, no nvidia-smi that finds one), so no CUDA plugin can run; use --backend xla:cpu or go")
	}
	for _, dir := range PluginDirs() {
		files := pluginFiles(dir)
		paths := make([]string, 0, len(files))
		for p := range files {
			paths = append(paths, p)
		}
		slices.Sort(paths)
		for _, p := range paths {
			if isCUDAName(files[p]) && !hasGPU() {
				continue // go-xla skips it without opening it
			}
			if err := checkPlugin(p); err != nil {
				return fmt.Errorf("%v (in the plugin folder %s: go-xla opens every file there named like a plugin; remove or replace this one)", err, dir)
			}
		}
	}
	return nil
}
