//go:build amd64 && !purego

#include "textflag.h"

// func attendScoresFMA(s, q, keys *float32, stride, hd, t int, scale float32)
//
// For j < t: s[j] = scale · (E + O), where E and O are the eight-lane sums of fused
// multiply-adds of q with key j's first hd values (keys + j·stride), E over the even 8-value
// chunks and O over the odd ones, each in order; E + O is reduced lane 0..7 as
// ((l0+l4)+(l1+l5)) + ((l2+l6)+(l3+l7)). hd is a multiple of 32 and t ≥ 1; bounds are
// checked by the Go caller. Strides are in elements.
//
// Registers: DI = s[j]; SI = q; DX = key j; R8 = stride in bytes; R9 = hd in bytes; CX = keys
// left; AX = byte offset in the row; X15 = scale.
TEXT ·attendScoresFMA(SB), NOSPLIT, $0-52
	MOVQ         s+0(FP), DI
	MOVQ         q+8(FP), SI
	MOVQ         keys+16(FP), DX
	MOVQ         stride+24(FP), R8
	SHLQ         $2, R8
	MOVQ         hd+32(FP), R9
	SHLQ         $2, R9
	MOVQ         t+40(FP), CX
	VMOVSS       scale+48(FP), X15

key:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	XORQ   AX, AX

chunk:
	VMOVUPS     (SI)(AX*1), Y2
	VMOVUPS     32(SI)(AX*1), Y3
	VFMADD231PS (DX)(AX*1), Y2, Y0
	VFMADD231PS 32(DX)(AX*1), Y3, Y1
	VMOVUPS     64(SI)(AX*1), Y2
	VMOVUPS     96(SI)(AX*1), Y3
	VFMADD231PS 64(DX)(AX*1), Y2, Y0
	VFMADD231PS 96(DX)(AX*1), Y3, Y1
	ADDQ        $128, AX
	CMPQ        AX, R9
	JLT         chunk

	VADDPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VMULSS       X15, X0, X0
	VMOVSS       X0, (DI)
	ADDQ         $4, DI
	ADDQ         R8, DX
	DECQ         CX
	JNZ          key

	VZEROUPPER
	RET

// func attendValuesFMA(o, p, vals *float32, stride, hd, t int)
//
// For each 32-value chunk c of o (hd a multiple of 32, t ≥ 1): o[c] = Σ_j p[j]·vals[j·stride
// + c], a chain of fused multiply-adds from +0 in order of j, four eight-lane chains side by
// side. Bounds are checked by the Go caller. Strides are in elements.
//
// Registers: DI = o at the chunk; SI = p; DX = vals at the chunk's column; R8 = stride in bytes;
// R9 = chunks left; R10 = t; BX = p[j]; AX = vals row j at the chunk; CX = positions left.
TEXT ·attendValuesFMA(SB), NOSPLIT, $0-48
	MOVQ o+0(FP), DI
	MOVQ p+8(FP), SI
	MOVQ vals+16(FP), DX
	MOVQ stride+24(FP), R8
	SHLQ $2, R8
	MOVQ hd+32(FP), R9
	SHRQ $5, R9
	MOVQ t+40(FP), R10

chunk:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ   SI, BX
	MOVQ   DX, AX
	MOVQ   R10, CX

pos:
	VBROADCASTSS (BX), Y4
	VFMADD231PS  (AX), Y4, Y0
	VFMADD231PS  32(AX), Y4, Y1
	VFMADD231PS  64(AX), Y4, Y2
	VFMADD231PS  96(AX), Y4, Y3
	ADDQ         $4, BX
	ADDQ         R8, AX
	DECQ         CX
	JNZ          pos

	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, DI
	ADDQ    $128, DX
	DECQ    R9
	JNZ     chunk

	VZEROUPPER
	RET
