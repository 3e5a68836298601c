//go:build amd64 && !purego

package gobackend

import "testing"

// TestDotFloat32WithoutAVX512 checks the AVX2 path (the 4-wide panel kernel for every column)
// the way TestDotFloat32ReadsInPlace checks the AVX-512 one, so that both are tested whichever CPU
// runs the tests.
func TestDotFloat32WithoutAVX512(t *testing.T) {
	if !useFMA {
		t.Skip("no FMA on this machine: the Go loops run")
	}
	saved := useAVX512
	useAVX512 = false
	defer func() { useAVX512 = saved }()
	checkDotReadsInPlace(t)
}
