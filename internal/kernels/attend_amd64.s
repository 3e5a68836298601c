//go:build amd64 && !purego

#include "textflag.h"

// func attendScoresFMA(s, q, keys *float32, stride, hd, t int, scale float32)
//
// For j < t: s[j] = scale · Σ over the eight lanes of E + O, where E and O are the eight-lane
// sums of fused multiply-adds of q with key j's first hd values (keys + j·stride), E over the
// even 8-value chunks and O over the odd ones, each in order, and the lanes l0..l7 of E + O add
// as ((l0+l1)+(l2+l3)) + ((l4+l5)+(l6+l7)). Keys go four at a time (q's chunks loaded once for
// the four), then one at a time, with the same arithmetic for each key either way, so a score
// does not depend on t. hd is a multiple of 32 and t ≥ 1; bounds are checked by the Go caller.
// Strides are in elements.
//
// Registers: DI = s[j]; SI = q; DX, BX, R10, R11 = keys j..j+3; R8 = stride in bytes; R9 = hd
// in bytes; CX = keys left; AX = byte offset in the rows; X15 = scale in every lane.
TEXT ·attendScoresFMA(SB), NOSPLIT, $0-52
	MOVQ         s+0(FP), DI
	MOVQ         q+8(FP), SI
	MOVQ         keys+16(FP), DX
	MOVQ         stride+24(FP), R8
	SHLQ         $2, R8
	MOVQ         hd+32(FP), R9
	SHLQ         $2, R9
	MOVQ         t+40(FP), CX
	VBROADCASTSS scale+48(FP), X15
	CMPQ         CX, $4
	JLT          one

four:
	LEAQ   (DX)(R8*1), BX
	LEAQ   (BX)(R8*1), R10
	LEAQ   (R10)(R8*1), R11
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	XORQ   AX, AX

chunk4:
	VMOVUPS     (SI)(AX*1), Y8
	VMOVUPS     32(SI)(AX*1), Y9
	VFMADD231PS (DX)(AX*1), Y8, Y0
	VFMADD231PS 32(DX)(AX*1), Y9, Y1
	VFMADD231PS (BX)(AX*1), Y8, Y2
	VFMADD231PS 32(BX)(AX*1), Y9, Y3
	VFMADD231PS (R10)(AX*1), Y8, Y4
	VFMADD231PS 32(R10)(AX*1), Y9, Y5
	VFMADD231PS (R11)(AX*1), Y8, Y6
	VFMADD231PS 32(R11)(AX*1), Y9, Y7
	ADDQ        $64, AX
	CMPQ        AX, R9
	JLT         chunk4

	VADDPS       Y1, Y0, Y0 // key j's E + O: a
	VADDPS       Y3, Y2, Y2 // b
	VADDPS       Y5, Y4, Y4 // c
	VADDPS       Y7, Y6, Y6 // d
	VHADDPS      Y2, Y0, Y0 // a01 a23 b01 b23 | a45 a67 b45 b67
	VHADDPS      Y6, Y4, Y4 // c01 c23 d01 d23 | c45 c67 d45 d67
	VHADDPS      Y4, Y0, Y0 // a0123 b0123 c0123 d0123 | a4567 b4567 c4567 d4567
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMULPS       X15, X0, X0
	VMOVUPS      X0, (DI)
	ADDQ         $16, DI
	LEAQ         (DX)(R8*4), DX
	SUBQ         $4, CX
	CMPQ         CX, $4
	JGE          four

one:
	TESTQ CX, CX
	JZ    done

key:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	XORQ   AX, AX

chunk:
	VMOVUPS     (SI)(AX*1), Y2
	VMOVUPS     32(SI)(AX*1), Y3
	VFMADD231PS (DX)(AX*1), Y2, Y0
	VFMADD231PS 32(DX)(AX*1), Y3, Y1
	ADDQ        $64, AX
	CMPQ        AX, R9
	JLT         chunk

	VADDPS       Y1, Y0, Y0
	VHADDPS      Y0, Y0, Y0 // l01 l23 l01 l23 | l45 l67 l45 l67
	VHADDPS      Y0, Y0, Y0 // l0123 … | l4567 …
	VEXTRACTF128 $1, Y0, X1
	VADDSS       X1, X0, X0
	VMULSS       X15, X0, X0
	VMOVSS       X0, (DI)
	ADDQ         $4, DI
	ADDQ         R8, DX
	DECQ         CX
	JNZ          key

done:
	VZEROUPPER
	RET

// func attendValuesFMA(o, p, vals *float32, stride, hd, t int)
//
// For each value i of o (hd a multiple of 32, t ≥ 1): o[i] = Σ_j p[j]·vals[j·stride + i], a
// chain of fused multiply-adds from +0 in order of j, eight lanes a register; 64 values at a
// time (eight chains) when 64 divides hd, else 32 (four). Each value's chain is the same either
// way. Bounds are checked by the Go caller. Strides are in elements.
//
// Registers: DI = o at the chunk; SI = p; DX = vals at the chunk's column; R8 = stride in bytes;
// R9 = chunks left; R10 = t; BX = p[j]; AX = vals row j at the chunk; CX = positions left.
TEXT ·attendValuesFMA(SB), NOSPLIT, $0-48
	MOVQ  o+0(FP), DI
	MOVQ  p+8(FP), SI
	MOVQ  vals+16(FP), DX
	MOVQ  stride+24(FP), R8
	SHLQ  $2, R8
	MOVQ  hd+32(FP), R9
	MOVQ  t+40(FP), R10
	TESTQ $63, R9
	JNZ   by32
	SHRQ  $6, R9

chunk64: // 64 values of o at a time: eight chains, one broadcast of p[j] for all
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	MOVQ   SI, BX
	MOVQ   DX, AX
	MOVQ   R10, CX

pos64:
	VBROADCASTSS (BX), Y8
	VFMADD231PS  (AX), Y8, Y0
	VFMADD231PS  32(AX), Y8, Y1
	VFMADD231PS  64(AX), Y8, Y2
	VFMADD231PS  96(AX), Y8, Y3
	VFMADD231PS  128(AX), Y8, Y4
	VFMADD231PS  160(AX), Y8, Y5
	VFMADD231PS  192(AX), Y8, Y6
	VFMADD231PS  224(AX), Y8, Y7
	ADDQ         $4, BX
	ADDQ         R8, AX
	DECQ         CX
	JNZ          pos64

	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	ADDQ    $256, DI
	ADDQ    $256, DX
	DECQ    R9
	JNZ     chunk64
	VZEROUPPER
	RET

by32:
	SHRQ $5, R9

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
