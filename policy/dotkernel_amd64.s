//go:build amd64 && !purego

#include "textflag.h"

// func matmulPanelsTFMA(out *float32, ldo int, x *float32, ldx, n, k int, w *[4]float32, ps, np int, bias *float32, add int)
//
// matmulPanelsFMA (hostkernels_amd64.s) for an x stored transposed: the value of row r at step i
// is x[i·ldx + r] instead of x[r·ldx + i]. Everything else — panel pairs, blocks of four rows,
// even and odd accumulators, the order of every multiply-add — is that kernel's, so each output
// is bit for bit what it computes on the transposed copy of x. The four rows of a block are
// adjacent in memory at each step, so one step's four broadcasts read 16 contiguous bytes.
//
// Registers: SI = x at row 0 of the block (step 0); BX = x at the current step; R8 = ldx in
// bytes; DX = w panel p; AX = w panel p+1; R13 = bias at column 4p; R14 = out at row 0 of the
// block, column 4p; R10 = k in bytes; R11 = panels left; R12 = panel stride in bytes; CX = 4·i;
// DI = out at row 0, column 0.
TEXT ·matmulPanelsTFMA(SB), NOSPLIT, $32-88
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
	MOVQ ldx+24(FP), R8
	SHLQ $2, R8
	MOVQ k+40(FP), R10
	SHLQ $2, R10
	MOVQ R10, AX
	ANDQ $-8, AX
	MOVQ AX, kev-32(SP) // 4·i at the end of the whole pairs (i, i+1)
	MOVQ ps+56(FP), R12
	SHLQ $4, R12
	MOVQ x+16(FP), SI
	MOVQ out+0(FP), DI

block:
	MOVQ rem-8(SP), AX
	CMPQ AX, $4
	JLT single
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
	MOVQ SI, BX
	XORQ CX, CX
	CMPQ CX, kev-32(SP)
	JGE kpair4tail

kpair4:
	VMOVUPS (DX)(CX*4), X4
	VINSERTF128 $1, (AX)(CX*4), Y4, Y4
	VMOVUPS 16(DX)(CX*4), X13
	VINSERTF128 $1, 16(AX)(CX*4), Y13, Y13
	VBROADCASTSS (BX), Y5
	VFMADD231PS Y4, Y5, Y0
	VBROADCASTSS (BX)(R8*1), Y5
	VFMADD231PS Y13, Y5, Y9
	VBROADCASTSS 4(BX), Y6
	VFMADD231PS Y4, Y6, Y1
	VBROADCASTSS 4(BX)(R8*1), Y6
	VFMADD231PS Y13, Y6, Y10
	VBROADCASTSS 8(BX), Y7
	VFMADD231PS Y4, Y7, Y2
	VBROADCASTSS 8(BX)(R8*1), Y7
	VFMADD231PS Y13, Y7, Y11
	VBROADCASTSS 12(BX), Y8
	VFMADD231PS Y4, Y8, Y3
	VBROADCASTSS 12(BX)(R8*1), Y8
	VFMADD231PS Y13, Y8, Y12
	LEAQ (BX)(R8*2), BX
	ADDQ $8, CX
	CMPQ CX, kev-32(SP)
	JLT kpair4

kpair4tail:
	CMPQ CX, R10
	JGE epipair4
	VMOVUPS (DX)(CX*4), X4
	VINSERTF128 $1, (AX)(CX*4), Y4, Y4
	VBROADCASTSS (BX), Y5
	VFMADD231PS Y4, Y5, Y0
	VBROADCASTSS 4(BX), Y6
	VFMADD231PS Y4, Y6, Y1
	VBROADCASTSS 8(BX), Y7
	VFMADD231PS Y4, Y7, Y2
	VBROADCASTSS 12(BX), Y8
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
	MOVQ SI, BX
	XORQ CX, CX
	CMPQ R10, $0
	JEQ epi4

k4:
	VMOVUPS (DX)(CX*4), X4
	VBROADCASTSS (BX), X5
	VFMADD231PS X4, X5, X0
	VBROADCASTSS 4(BX), X6
	VFMADD231PS X4, X6, X1
	VBROADCASTSS 8(BX), X7
	VFMADD231PS X4, X7, X2
	VBROADCASTSS 12(BX), X8
	VFMADD231PS X4, X8, X3
	ADDQ R8, BX
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
	ADDQ $16, SI
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
	MOVQ SI, BX
	XORQ CX, CX
	CMPQ CX, kev-32(SP)
	JGE kpair1tail

kpair1:
	VMOVUPS (DX)(CX*4), X4
	VINSERTF128 $1, (AX)(CX*4), Y4, Y4
	VMOVUPS 16(DX)(CX*4), X13
	VINSERTF128 $1, 16(AX)(CX*4), Y13, Y13
	VBROADCASTSS (BX), Y5
	VFMADD231PS Y4, Y5, Y0
	VBROADCASTSS (BX)(R8*1), Y6
	VFMADD231PS Y13, Y6, Y9
	LEAQ (BX)(R8*2), BX
	ADDQ $8, CX
	CMPQ CX, kev-32(SP)
	JLT kpair1

kpair1tail:
	CMPQ CX, R10
	JGE epipair1
	VMOVUPS (DX)(CX*4), X4
	VINSERTF128 $1, (AX)(CX*4), Y4, Y4
	VBROADCASTSS (BX), Y5
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
	MOVQ SI, BX
	XORQ CX, CX
	CMPQ R10, $0
	JEQ epi1

k1:
	VBROADCASTSS (BX), X5
	VFMADD231PS (DX)(CX*4), X5, X0
	ADDQ R8, BX
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
	ADDQ $4, SI
	MOVQ ldob-16(SP), AX
	ADDQ AX, DI
	DECQ rem-8(SP)
	JMP single

done:
	VZEROUPPER
	RET
