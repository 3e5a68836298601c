//go:build !amd64 || purego

package kernels

func fmaLoopAVX512(int) { panic("kernels: no FMA loop on this platform") }

func fmaLoopAVX2(int) { panic("kernels: no FMA loop on this platform") }
