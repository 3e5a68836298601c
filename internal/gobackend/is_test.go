package gobackend

import (
	"testing"

	"github.com/gomlx/gomlx/backends"
)

// Is recognises the Go backend, fused or not, by its type (its Name is "SimpleGo (go)"), and
// nothing else.
func TestIs(t *testing.T) {
	fused, err := New()
	if err != nil {
		t.Fatal(err)
	}
	unfused, err := NewUnfused()
	if err != nil {
		t.Fatal(err)
	}
	if !Is(fused) || !Is(unfused) {
		t.Errorf("Is(New()) = %v, Is(NewUnfused()) = %v; want both true", Is(fused), Is(unfused))
	}
	type other struct{ backends.Backend }
	if Is(other{unfused}) {
		t.Error("Is took another backend wrapping the Go one for the Go backend")
	}
}
