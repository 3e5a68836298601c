package gobackend

import (
	"sync"

	"github.com/gomlx/gomlx/backends"
)

// testBackend is one Go backend with the replacement executors installed, shared by the tests.
var testBackend = sync.OnceValues(func() (backends.Backend, error) { return New() })
