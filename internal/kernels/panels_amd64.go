//go:build amd64 && !purego

package kernels

import "golang.org/x/sys/cpu"

// useFMA reports whether MatmulPanels runs the FMA kernel of panels_amd64.s (AVX with FMA3,
// enabled by the OS): it computes the same sums with fused multiply-adds, 4 lanes wide and four
// rows at a time, ~4× the throughput of the scalar Go loop.
var useFMA = cpu.X86.HasAVX && cpu.X86.HasFMA

// matmulPanelsFMA is the assembly kernel; see MatmulPanels for the contract.
//
//go:noescape
func matmulPanelsFMA(out *float32, ldo int, x *float32, ldx, n, k int, w *[4]float32, ps, np int, bias *float32, add int)

// useAVX512 reports whether the dot executor's 16-lane kernel (groups_amd64.s) can run.
var useAVX512 = useFMA && cpu.X86.HasAVX512F

// matmulGroupsAVX512 is the 16-lane kernel of groups_amd64.s; see MatmulGroups.
//
//go:noescape
func matmulGroupsAVX512(out *float32, ldo int, x *float32, rs, is, n, k int, w *float32, ws, gs, ng int, bias *float32, add int, odd *float32, resume, split int)

// matmulGroupsFMA is the 8-lane kernel of groups_fma_amd64.s (AVX with FMA3): MatmulGroups
// where the CPU has no AVX-512, bit for bit the same sums.
//
//go:noescape
func matmulGroupsFMA(out *float32, ldo int, x *float32, rs, is, n, k int, w *float32, ws, gs, ng int, bias *float32, add int, odd *float32, resume, split int)

// GatherF32AVX512 is the gather of groups_amd64.s; see broadcastRows and packGroupsNK in internal/gobackend.
//
//go:noescape
func GatherF32AVX512(dst *float32, src *float32, idx *int32, chunks, step int)

// attendScoresFMA is the assembly kernel of attend_amd64.s; see AttendScores.
//
//go:noescape
func attendScoresFMA(s, q, keys *float32, stride, hd, t int, scale float32)

// attendValuesFMA is the assembly kernel of attend_amd64.s; see AttendValues.
//
//go:noescape
func attendValuesFMA(o, p, vals *float32, stride, hd, t int)
