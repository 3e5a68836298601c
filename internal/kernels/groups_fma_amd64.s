//go:build amd64 && !purego

#include "textflag.h"
#include "groups_amd64.h"

// FMAINIT3 starts three rows' even-step sums of a group (two 8-lane halves each: A0/A1, B0/B1,
// C0/C1) at the bias (the 16 values at the group's bias pointer, biasg) or, without a bias, at
// +0. Clobbers AX.
#define FMAINIT3(A0, A1, B0, B1, C0, C1) \
	MOVQ    biasg-72(SP), AX; \
	TESTQ   AX, AX; \
	JEQ     4(PC); \
	VMOVUPS (AX), A0; \
	VMOVUPS 32(AX), A1; \
	JMP     3(PC); \
	VXORPS  A0, A0, A0; \
	VXORPS  A1, A1, A1; \
	VMOVAPS A0, B0; \
	VMOVAPS A1, B1; \
	VMOVAPS A0, C0; \
	VMOVAPS A1, C1

// FMAROW3 adds the step at byte offset OFF (R10 or R11) of rows SI, BX, R8 to six sums, with
// the step's w in Y12 (columns 0–7) and Y13 (8–15), x broadcast through Y14 and Y15.
#define FMAROW3(OFF, A0, A1, B0, B1, C0, C1) \
	VBROADCASTSS (SI)(OFF*1), Y14; \
	VFMADD231PS  Y14, Y12, A0; \
	VFMADD231PS  Y14, Y13, A1; \
	VBROADCASTSS (BX)(OFF*1), Y15; \
	VFMADD231PS  Y15, Y12, B0; \
	VFMADD231PS  Y15, Y13, B1; \
	VBROADCASTSS (R8)(OFF*1), Y14; \
	VFMADD231PS  Y14, Y12, C0; \
	VFMADD231PS  Y14, Y13, C1

// FMAADDOUT adds the value stored at M to the sum S when the epilogue is add (add ≠ 0).
#define FMAADDOUT(M, S) \
	CMPQ   add+96(FP), $0; \
	JEQ    2(PC); \
	VADDPS M, S, S

// FMASTORE2 finishes one row's group, its halves at M and 32+M: the even-step sums E0, E1 plus
// the odd-step sums O0, O1, plus the stored values when the epilogue is add.
#define FMASTORE2(M, M32, E0, E1, O0, O1) \
	VADDPS  O0, E0, E0; \
	VADDPS  O1, E1, E1; \
	FMAADDOUT(M, E0); \
	FMAADDOUT(M32, E1); \
	VMOVUPS E0, M; \
	VMOVUPS E1, M32

// func matmulGroupsFMA(out *float32, ldo int, x *float32, rs, is, n, k int, w *float32, ws, gs, ng int, bias *float32, add int, odd *float32, resume, split int)
//
// matmulGroupsAVX512 (groups_amd64.s) on AVX2 with FMA3: the same contract and, per output, the
// same two chains of fused multiply-adds (even steps from the bias, odd steps from +0, the
// even-step sum first in their final addition), so each output is bit for bit what the 16-lane
// kernel and matmulPanelsFMA give. A group's sixteen columns are two 8-lane halves; rows are
// taken three at a time (twelve sums in registers: three rows × two halves × two chains), then
// one at a time. Each step loads the group's w once for the three rows and broadcasts one value
// of x per row: ten loads feed twelve multiply-adds per step pair. Strides are in elements;
// bounds are checked by the Go caller.
//
// Registers: SI, BX, R8 = x rows 0..2 of the block; R10 = byte offset of step i, R11 = of step
// i+1; R12 = ws in bytes; R13 = w at step i of group g; R14 = out at row 0 of the block, column
// 16g; DI = out at row 0 of the block; DX = step pairs left; CX = groups left; Y0–Y5 = even-step
// sums (row r's halves in Y2r, Y2r+1), Y6–Y11 = odd-step sums (row r's in Y2r+6, Y2r+7); Y12,
// Y13 = w at one step; Y14, Y15 = broadcast x.
TEXT ·matmulGroupsFMA(SB), NOSPLIT, $80-128
	GROUPSARGS(fdone)

fblock:
	MOVQ rem-8(SP), AX
	CMPQ AX, $3
	JLT fsingle
	MOVQ rsb-24(SP), AX
	LEAQ (SI)(AX*1), BX
	LEAQ (BX)(AX*1), R8
	GROUPSROWS

fgroup3:
	MOVQ wg-56(SP), R13
	CMPQ resume+112(FP), $0
	JNE  fresume3
	FMAINIT3(Y0, Y1, Y2, Y3, Y4, Y5)
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	JMP  fstart3

fresume3:
	MOVQ    ldob-16(SP), R10
	MOVQ    oddd-80(SP), R11
	ADDQ    R14, R11
	VMOVUPS (R14), Y0
	VMOVUPS 32(R14), Y1
	VMOVUPS (R14)(R10*1), Y2
	VMOVUPS 32(R14)(R10*1), Y3
	VMOVUPS (R14)(R10*2), Y4
	VMOVUPS 32(R14)(R10*2), Y5
	VMOVUPS (R11), Y6
	VMOVUPS 32(R11), Y7
	VMOVUPS (R11)(R10*1), Y8
	VMOVUPS 32(R11)(R10*1), Y9
	VMOVUPS (R11)(R10*2), Y10
	VMOVUPS 32(R11)(R10*2), Y11

fstart3:
	XORQ  R10, R10
	MOVQ  isb-32(SP), R11
	MOVQ  pairs-48(SP), DX
	TESTQ DX, DX
	JEQ   ftail3

fpair3:
	VMOVUPS (R13), Y12
	VMOVUPS 32(R13), Y13
	FMAROW3(R10, Y0, Y1, Y2, Y3, Y4, Y5)
	VMOVUPS (R13)(R12*1), Y12
	VMOVUPS 32(R13)(R12*1), Y13
	FMAROW3(R11, Y6, Y7, Y8, Y9, Y10, Y11)
	LEAQ (R13)(R12*2), R13
	ADDQ isb2-64(SP), R10
	ADDQ isb2-64(SP), R11
	DECQ DX
	JNZ  fpair3

ftail3:
	TESTQ $1, k+48(FP)
	JEQ fstore3
	VMOVUPS (R13), Y12
	VMOVUPS 32(R13), Y13
	FMAROW3(R10, Y0, Y1, Y2, Y3, Y4, Y5)

fstore3:
	CMPQ split+120(FP), $0
	JNE  fsplit3
	MOVQ ldob-16(SP), AX
	FMASTORE2((R14), 32(R14), Y0, Y1, Y6, Y7)
	FMASTORE2((R14)(AX*1), 32(R14)(AX*1), Y2, Y3, Y8, Y9)
	FMASTORE2((R14)(AX*2), 32(R14)(AX*2), Y4, Y5, Y10, Y11)
	JMP  fnext3

fsplit3:
	MOVQ    ldob-16(SP), R10
	MOVQ    oddd-80(SP), R11
	ADDQ    R14, R11
	VMOVUPS Y0, (R14)
	VMOVUPS Y1, 32(R14)
	VMOVUPS Y2, (R14)(R10*1)
	VMOVUPS Y3, 32(R14)(R10*1)
	VMOVUPS Y4, (R14)(R10*2)
	VMOVUPS Y5, 32(R14)(R10*2)
	VMOVUPS Y6, (R11)
	VMOVUPS Y7, 32(R11)
	VMOVUPS Y8, (R11)(R10*1)
	VMOVUPS Y9, 32(R11)(R10*1)
	VMOVUPS Y10, (R11)(R10*2)
	VMOVUPS Y11, 32(R11)(R10*2)

fnext3:
	GROUPNEXT(fgroup3)

	MOVQ rsb-24(SP), AX
	LEAQ (AX)(AX*2), AX
	ADDQ AX, SI
	MOVQ ldob-16(SP), AX
	LEAQ (AX)(AX*2), AX
	ADDQ AX, DI
	SUBQ $3, rem-8(SP)
	JMP fblock

fsingle:
	MOVQ rem-8(SP), AX
	TESTQ AX, AX
	JEQ fdone
	GROUPSROWS

fgroup1:
	MOVQ wg-56(SP), R13
	CMPQ resume+112(FP), $0
	JNE  fresume1
	MOVQ biasg-72(SP), AX
	TESTQ AX, AX
	JEQ fgroup1zero
	VMOVUPS (AX), Y0
	VMOVUPS 32(AX), Y1
	JMP fgroup1odd

fgroup1zero:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1

fgroup1odd:
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	JMP  fstart1

fresume1:
	MOVQ    oddd-80(SP), AX
	VMOVUPS (R14), Y0
	VMOVUPS 32(R14), Y1
	VMOVUPS (R14)(AX*1), Y6
	VMOVUPS 32(R14)(AX*1), Y7

fstart1:
	XORQ  R10, R10
	MOVQ  isb-32(SP), R11
	MOVQ  pairs-48(SP), DX
	TESTQ DX, DX
	JEQ   ftail1

fpair1:
	VBROADCASTSS (SI)(R10*1), Y14
	VBROADCASTSS (SI)(R11*1), Y15
	VFMADD231PS  (R13), Y14, Y0
	VFMADD231PS  32(R13), Y14, Y1
	VFMADD231PS  (R13)(R12*1), Y15, Y6
	VFMADD231PS  32(R13)(R12*1), Y15, Y7
	LEAQ (R13)(R12*2), R13
	ADDQ isb2-64(SP), R10
	ADDQ isb2-64(SP), R11
	DECQ DX
	JNZ  fpair1

ftail1:
	TESTQ $1, k+48(FP)
	JEQ fstore1
	VBROADCASTSS (SI)(R10*1), Y14
	VFMADD231PS  (R13), Y14, Y0
	VFMADD231PS  32(R13), Y14, Y1

fstore1:
	CMPQ split+120(FP), $0
	JNE  fsplit1
	FMASTORE2((R14), 32(R14), Y0, Y1, Y6, Y7)
	JMP  fnext1

fsplit1:
	MOVQ    oddd-80(SP), AX
	VMOVUPS Y0, (R14)
	VMOVUPS Y1, 32(R14)
	VMOVUPS Y6, (R14)(AX*1)
	VMOVUPS Y7, 32(R14)(AX*1)

fnext1:
	GROUPNEXT(fgroup1)

	MOVQ rsb-24(SP), AX
	ADDQ AX, SI
	MOVQ ldob-16(SP), AX
	ADDQ AX, DI
	DECQ rem-8(SP)
	JMP fsingle

fdone:
	VZEROUPPER
	RET
