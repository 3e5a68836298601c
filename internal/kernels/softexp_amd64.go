//go:build amd64 && !purego

package kernels

// expShiftedAVX512 is the kernel of softexp_amd64.s; see ExpShiftedVec (n a positive multiple of 16).
//
//go:noescape
func expShiftedAVX512(s *float32, n int, m float32, c *ExpConsts)

// geluAVX512 is the kernel of softexp_amd64.s; see GeluVec (n a positive multiple of 16).
//
//go:noescape
func geluAVX512(x *float32, n int, c *ExpConsts)
