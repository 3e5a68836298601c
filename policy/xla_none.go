//go:build !cgo || noxla

package policy

import (
	"errors"

	"github.com/gomlx/gomlx/backends"
)

// XLABuilt reports whether this build can run the xla:* backends. This one cannot: it was built
// without cgo (CGO_ENABLED=0, as for a cross-compiled binary) or with -tags noxla, and go-xla
// needs cgo to load PJRT plugins. The go backend is unaffected.
const XLABuilt = false

// PJRTAPIMajor is the major version of the PJRT C API that go-xla v0.1.4 is written against; kept
// in builds without XLA so that the package offers the same names in every build.
const PJRTAPIMajor = 0

// errNoXLA is what the XLA entry points answer in a build without XLA; NewBackend refuses xla:*
// before it reaches them.
var errNoXLA = errors.New("this graftrl was built without XLA (CGO_ENABLED=0 or -tags noxla)")

// PluginAPIVersion cannot load a plugin in a build without XLA: it returns errNoXLA.
func PluginAPIVersion(path string) (major, minor int, err error) { return 0, 0, errNoXLA }

// checkPlugin refuses every plugin file in a build without XLA.
func checkPlugin(path string) error { return errNoXLA }

// newXLABackend refuses in a build without XLA.
func newXLABackend(plugin string, opts BackendOptions) (backends.Backend, error) {
	return nil, errNoXLA
}
