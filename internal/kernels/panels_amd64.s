//go:build amd64 && !purego

#include "textflag.h"

// func matmulPanelsFMA(out *float32, ldo int, x *float32, ldx, n, k int, w *[4]float32, ps, np int, bias *float32, add int)
//
// The contract of MatmulPanels (panels.go): for each of n rows r of x and each of np panels
// p of w, y[c] = bias[4p+c] + Σ_i x[r·ldx+i]·w[p·ps+i][c], stored to (add == 0) or added to
// (add != 0) out[r·ldo+4p+c]. Panels are taken two at a time: w[p][i] and w[p+1][i] fill the
// halves of one 8-lane register, whose columns 4p..4p+7 are contiguous in bias and out; an odd
// last panel uses 4 lanes. Rows are taken four at a time (then one at a time): four broadcasts of
// x feed four FMAs. Paired panels keep two accumulators per row, for even and odd i (halving the
// FMA dependency chain that bounds a lone row), and add them at the end; an odd last panel keeps
// one. Either way a row's arithmetic is the same whether it is computed in a block of four or
// alone, so that results do not depend on how rows are grouped (the host decoder's output must
// not depend on GOMAXPROCS). Strides are in elements; bounds are
// checked by the Go caller.
//
// Registers: SI, BX, R8, R9 = x rows 0..3 of the block; DX = w panel p; AX = w panel p+1 (and
// scratch); R13 = bias at column 4p; R14 = out at row 0 of the block, column 4p; R10 = k in
// bytes; R11 = panels left; R12 = panel stride in bytes; CX = 4·i; DI = out at row 0, column 0.
TEXT ·matmulPanelsFMA(SB), NOSPLIT, $32-88
	MOVQ n+32(FP), AX
	TESTQ AX, AX
	JEQ done
	MOVQ AX, rem-8(SP)
	MOVQ np+64(FP), AX
	TESTQ AX, AX
	JEQ done
	MOVQ ldo+8(FP), AX
	SHLQ $2, AX
	MOVQ AX, ldob-16(SP)
	MOVQ ldx+24(FP), AX
	SHLQ $2, AX
	MOVQ AX, ldxb-24(SP)
	MOVQ k+40(FP), R10
	SHLQ $2, R10
	MOVQ R10, AX
	ANDQ $-8, AX
	MOVQ AX, kev-32(SP) // bytes of x in whole pairs (i, i+1)
	MOVQ ps+56(FP), R12
	SHLQ $4, R12
	MOVQ x+16(FP), SI
	MOVQ out+0(FP), DI

block:
	MOVQ rem-8(SP), AX
	CMPQ AX, $4
	JLT single
	MOVQ ldxb-24(SP), AX
	LEAQ (SI)(AX*1), BX
	LEAQ (BX)(AX*1), R8
	LEAQ (R8)(AX*1), R9
	MOVQ w+48(FP), DX
	MOVQ bias+72(FP), R13
	MOVQ DI, R14
	MOVQ np+64(FP), R11

pair4:
	CMPQ R11, $2
	JLT one4
	VMOVUPS (R13), Y0
	VMOVAPS Y0, Y1
	VMOVAPS Y0, Y2
	VMOVAPS Y0, Y3
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	LEAQ (DX)(R12*1), AX
	XORQ CX, CX
	CMPQ CX, kev-32(SP)
	JGE kpair4tail

kpair4:
	VMOVUPS (DX)(CX*4), X4
	VINSERTF128 $1, (AX)(CX*4), Y4, Y4
	VMOVUPS 16(DX)(CX*4), X13
	VINSERTF128 $1, 16(AX)(CX*4), Y13, Y13
	VBROADCASTSS (SI)(CX*1), Y5
	VFMADD231PS Y4, Y5, Y0
	VBROADCASTSS 4(SI)(CX*1), Y5
	VFMADD231PS Y13, Y5, Y9
	VBROADCASTSS (BX)(CX*1), Y6
	VFMADD231PS Y4, Y6, Y1
	VBROADCASTSS 4(BX)(CX*1), Y6
	VFMADD231PS Y13, Y6, Y10
	VBROADCASTSS (R8)(CX*1), Y7
	VFMADD231PS Y4, Y7, Y2
	VBROADCASTSS 4(R8)(CX*1), Y7
	VFMADD231PS Y13, Y7, Y11
	VBROADCASTSS (R9)(CX*1), Y8
	VFMADD231PS Y4, Y8, Y3
	VBROADCASTSS 4(R9)(CX*1), Y8
	VFMADD231PS Y13, Y8, Y12
	ADDQ $8, CX
	CMPQ CX, kev-32(SP)
	JLT kpair4

kpair4tail:
	CMPQ CX, R10
	JGE epipair4
	VMOVUPS (DX)(CX*4), X4
	VINSERTF128 $1, (AX)(CX*4), Y4, Y4
	VBROADCASTSS (SI)(CX*1), Y5
	VFMADD231PS Y4, Y5, Y0
	VBROADCASTSS (BX)(CX*1), Y6
	VFMADD231PS Y4, Y6, Y1
	VBROADCASTSS (R8)(CX*1), Y7
	VFMADD231PS Y4, Y7, Y2
	VBROADCASTSS (R9)(CX*1), Y8
	VFMADD231PS Y4, Y8, Y3

epipair4:
	VADDPS Y9, Y0, Y0
	VADDPS Y10, Y1, Y1
	VADDPS Y11, Y2, Y2
	VADDPS Y12, Y3, Y3
	MOVQ ldob-16(SP), AX
	CMPQ add+80(FP), $0
	JEQ storepair4
	VADDPS (R14), Y0, Y0
	VADDPS (R14)(AX*1), Y1, Y1
	VADDPS (R14)(AX*2), Y2, Y2
	LEAQ (AX)(AX*2), AX
	VADDPS (R14)(AX*1), Y3, Y3
	MOVQ ldob-16(SP), AX

storepair4:
	VMOVUPS Y0, (R14)
	VMOVUPS Y1, (R14)(AX*1)
	VMOVUPS Y2, (R14)(AX*2)
	LEAQ (AX)(AX*2), AX
	VMOVUPS Y3, (R14)(AX*1)
	LEAQ (DX)(R12*2), DX
	ADDQ $32, R13
	ADDQ $32, R14
	SUBQ $2, R11
	JMP pair4

one4:
	TESTQ R11, R11
	JEQ nextblock
	VMOVUPS (R13), X0
	VMOVAPS X0, X1
	VMOVAPS X0, X2
	VMOVAPS X0, X3
	XORQ CX, CX
	CMPQ R10, $0
	JEQ epi4

k4:
	VMOVUPS (DX)(CX*4), X4
	VBROADCASTSS (SI)(CX*1), X5
	VFMADD231PS X4, X5, X0
	VBROADCASTSS (BX)(CX*1), X6
	VFMADD231PS X4, X6, X1
	VBROADCASTSS (R8)(CX*1), X7
	VFMADD231PS X4, X7, X2
	VBROADCASTSS (R9)(CX*1), X8
	VFMADD231PS X4, X8, X3
	ADDQ $4, CX
	CMPQ CX, R10
	JLT k4

epi4:
	MOVQ ldob-16(SP), AX
	CMPQ add+80(FP), $0
	JEQ store4
	VADDPS (R14), X0, X0
	VADDPS (R14)(AX*1), X1, X1
	VADDPS (R14)(AX*2), X2, X2
	LEAQ (AX)(AX*2), AX
	VADDPS (R14)(AX*1), X3, X3
	MOVQ ldob-16(SP), AX

store4:
	VMOVUPS X0, (R14)
	VMOVUPS X1, (R14)(AX*1)
	VMOVUPS X2, (R14)(AX*2)
	LEAQ (AX)(AX*2), AX
	VMOVUPS X3, (R14)(AX*1)

nextblock:
	MOVQ ldxb-24(SP), AX
	LEAQ (SI)(AX*4), SI
	MOVQ ldob-16(SP), AX
	LEAQ (DI)(AX*4), DI
	SUBQ $4, rem-8(SP)
	JMP block

single:
	MOVQ rem-8(SP), AX
	TESTQ AX, AX
	JEQ done
	MOVQ w+48(FP), DX
	MOVQ bias+72(FP), R13
	MOVQ DI, R14
	MOVQ np+64(FP), R11

pair1:
	CMPQ R11, $2
	JLT one1
	VMOVUPS (R13), Y0
	VXORPS Y9, Y9, Y9
	LEAQ (DX)(R12*1), AX
	XORQ CX, CX
	CMPQ CX, kev-32(SP)
	JGE kpair1tail

kpair1:
	VMOVUPS (DX)(CX*4), X4
	VINSERTF128 $1, (AX)(CX*4), Y4, Y4
	VMOVUPS 16(DX)(CX*4), X13
	VINSERTF128 $1, 16(AX)(CX*4), Y13, Y13
	VBROADCASTSS (SI)(CX*1), Y5
	VFMADD231PS Y4, Y5, Y0
	VBROADCASTSS 4(SI)(CX*1), Y6
	VFMADD231PS Y13, Y6, Y9
	ADDQ $8, CX
	CMPQ CX, kev-32(SP)
	JLT kpair1

kpair1tail:
	CMPQ CX, R10
	JGE epipair1
	VMOVUPS (DX)(CX*4), X4
	VINSERTF128 $1, (AX)(CX*4), Y4, Y4
	VBROADCASTSS (SI)(CX*1), Y5
	VFMADD231PS Y4, Y5, Y0

epipair1:
	VADDPS Y9, Y0, Y0
	CMPQ add+80(FP), $0
	JEQ storepair1
	VADDPS (R14), Y0, Y0

storepair1:
	VMOVUPS Y0, (R14)
	LEAQ (DX)(R12*2), DX
	ADDQ $32, R13
	ADDQ $32, R14
	SUBQ $2, R11
	JMP pair1

one1:
	TESTQ R11, R11
	JEQ nextrow
	VMOVUPS (R13), X0
	XORQ CX, CX
	CMPQ R10, $0
	JEQ epi1

k1:
	VBROADCASTSS (SI)(CX*1), X5
	VFMADD231PS (DX)(CX*4), X5, X0
	ADDQ $4, CX
	CMPQ CX, R10
	JLT k1

epi1:
	CMPQ add+80(FP), $0
	JEQ store1
	VADDPS (R14), X0, X0

store1:
	VMOVUPS X0, (R14)

nextrow:
	MOVQ ldxb-24(SP), AX
	ADDQ AX, SI
	MOVQ ldob-16(SP), AX
	ADDQ AX, DI
	DECQ rem-8(SP)
	JMP single

done:
	VZEROUPPER
	RET
