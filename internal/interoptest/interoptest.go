// Package interoptest hands graftrl's side of the interop checks (scripts/interop) to their
// Python peers: a Go test computes graftrl's values and writes them as JSON where the script
// reads them.
package interoptest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// OutEnv names the folder the interop script reads the exports from.
const OutEnv = "GRAFTRL_INTEROP_OUT"

// WriteJSON writes v, indented, as the file name in $GRAFTRL_INTEROP_OUT when it is set (else in
// a temporary folder of the test, so that the export is still exercised) and returns its bytes.
func WriteJSON(t testing.TB, name string, v any) []byte {
	t.Helper()
	dir := os.Getenv(OutEnv)
	if dir == "" {
		dir = t.TempDir()
	}
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}
