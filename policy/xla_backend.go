//go:build cgo && !noxla

package policy

import (
	"path/filepath"
	"strings"

	"github.com/gomlx/go-xla/pkg/pjrt"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/xla"
)

// XLABuilt reports whether this build can run the xla:* backends. They need cgo (go-xla loads
// PJRT plugins through it), so a build with CGO_ENABLED=0 or -tags noxla leaves them out and
// NewBackend refuses them as unavailable on this machine.
const XLABuilt = true

// newXLABackend creates GoMLX's XLA backend for plugin (a name or an absolute path) once the
// plugin passed graftrl's checks. Auto-install is set on every call so that a second backend in
// the same process cannot inherit the first one's permission to download.
func newXLABackend(plugin string, opts BackendOptions) (backends.Backend, error) {
	xla.EnableAutoInstall(opts.InstallPlugin)
	return xla.NewWithOptions(plugin, pluginOptions(plugin, opts.Devices))
}

// pluginOptions are the PJRT client options: cpu_device_count for the CPU plugin (named cpu, or a
// file whose name says cpu) when more than one device is asked for; none otherwise, since other
// plugins may reject options they do not know.
func pluginOptions(plugin string, devices int) pjrt.NamedValuesMap {
	if devices <= 1 || !strings.Contains(strings.ToLower(filepath.Base(plugin)), "cpu") {
		return nil
	}
	return pjrt.NamedValuesMap{"cpu_device_count": int64(devices)}
}
