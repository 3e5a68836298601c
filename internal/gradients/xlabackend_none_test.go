//go:build !cgo || noxla

package gradients

import (
	"errors"

	"github.com/gomlx/gomlx/backends"
)

// xlaBackend in a build without cgo (or with -tags noxla), where go-xla is left out: it never
// loads, so the checks on xla:cpu skip (or fail with GRAFTRL_XLA_CPU=1, as they should).
func xlaBackend() (backends.Backend, error) {
	return nil, errors.New("built without XLA (CGO_ENABLED=0 or -tags noxla)")
}
