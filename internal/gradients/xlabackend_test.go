//go:build cgo && !noxla

package gradients

import (
	"sync"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/xla"
)

// xlaBackend is the xla:cpu backend of the gradient checks. It needs go-xla, hence cgo: builds
// without it (-tags noxla) take xlabackend_none_test.go's, which never loads.
var xlaBackend = sync.OnceValues(func() (backends.Backend, error) {
	Register()
	xla.EnableAutoInstall(false) // the plugin comes from scripts/install-xla-cpu.sh, never a download
	return xla.NewWithOptions("cpu", nil)
})
