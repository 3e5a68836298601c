//go:build amd64 && !purego

package gobackend

import "testing"

// TestDotFloat32WithoutAVX512 checks the AVX2 path (groups packed without the AVX-512 gather,
// and in cache blocks as TestDotFloat32BlockedBitExact) and the panel kernel alone for every
// column (no groups kernel) the way TestDotFloat32ReadsInPlace checks the default one, so that
// all are tested whichever CPU runs the tests.
func TestDotFloat32WithoutAVX512(t *testing.T) {
	if !useFMA {
		t.Skip("no FMA on this machine: the Go loops run")
	}
	savedWide, savedGroups := useAVX512, useGroups
	defer func() { useAVX512, useGroups = savedWide, savedGroups }()
	useAVX512 = false
	t.Run("groups", checkDotReadsInPlace)
	t.Run("groups in blocks", checkDotBlockedBitExact)
	useGroups = false
	t.Run("panels", checkDotReadsInPlace)
}
