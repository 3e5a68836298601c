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

// FMABCAST2 broadcasts the x at M through B and adds its products with the step's w (Y12,
// Y13) to one row's halves S0, S1.
#define FMABCAST2(M, B, S0, S1) \
	VBROADCASTSS M, B; \
	VFMADD231PS  B, Y12, S0; \
	VFMADD231PS  B, Y13, S1

// FMAROW3 adds the step at byte offset OFF (R10 or R11) of rows SI, BX, R8 to six sums, with
// the step's w in Y12 (columns 0–7) and Y13 (8–15), x broadcast through Y14 and Y15.
#define FMAROW3(OFF, A0, A1, B0, B1, C0, C1) \
	FMABCAST2((SI)(OFF*1), Y14, A0, A1); \
	FMABCAST2((BX)(OFF*1), Y15, B0, B1); \
	FMABCAST2((R8)(OFF*1), Y14, C0, C1)

// FMAZERO6 sets six registers to +0.
#define FMAZERO6(A, B, C, D, E, F) \
	VXORPS A, A, A; \
	VXORPS B, B, B; \
	VXORPS C, C, C; \
	VXORPS D, D, D; \
	VXORPS E, E, E; \
	VXORPS F, F, F

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

// FMASTEP6 adds one step to six rows' sums of one parity (row r's halves in Y2r, Y2r+1): the
// step's w halves at W0, W1 (into Y12, Y13), x of rows 0–2 at XA, XA+R9, XA+2·R9 and of rows 3–5
// at XB, XB+R9, XB+2·R9, broadcast through Y14 and Y15.
#define FMASTEP6(W0, W1, XA, XB) \
	VMOVUPS W0, Y12; \
	VMOVUPS W1, Y13; \
	FMABCAST2((XA), Y14, Y0, Y1); \
	FMABCAST2((XA)(R9*1), Y15, Y2, Y3); \
	FMABCAST2((XA)(R9*2), Y14, Y4, Y5); \
	FMABCAST2((XB), Y15, Y6, Y7); \
	FMABCAST2((XB)(R9*1), Y14, Y8, Y9); \
	FMABCAST2((XB)(R9*2), Y15, Y10, Y11)

// FMAXROWS6 starts a pass over six rows of x whose row 0 is at R8 (at the pass's first step),
// rows R9 bytes apart, steps of the pass R11 bytes apart: BX = row 3; AX, R10 = rows 0 and 3 at
// the pass's second step; R15 = 3·ws in bytes.
#define FMAXROWS6 \
	LEAQ (R9)(R9*2), BX; \
	ADDQ R8, BX; \
	LEAQ (R8)(R11*1), AX; \
	LEAQ (BX)(R11*1), R10; \
	LEAQ (R12)(R12*2), R15

// FMAPREFETCH fetches the cache line at M; FMANOPF does nothing (FMAPASS6's prefetch or none).
#define FMAPREFETCH(M) PREFETCHT0 M
#define FMANOPF(M)

// FMAPASS6 runs a pass of DX steps over six rows from FMAXROWS6's registers, two steps a loop
// (the first at R13, R8, BX; the second at R13 + 2·ws, AX, R10) and the last step alone when DX
// is odd, each chain's steps in order. PF (FMAPREFETCH or FMANOPF) fetches the odd step after
// each step, or nothing. Two steps a loop and the loop on a 64-byte boundary: one core's rate
// with its operands in L1 rose by a tenth to a fifth (the loop's branch and pointer updates
// halved; unaligned, the rate moved with where the loop fell).
#define FMAPASS6(LOOP, TAIL, DONE, PF) \
	SUBQ $2, DX; \
	JLT  TAIL; \
	PCALIGN $64; \
LOOP: \
	PF((R13)(R12*1)); \
	FMASTEP6((R13), 32(R13), R8, BX); \
	PF((R13)(R15*1)); \
	FMASTEP6((R13)(R12*2), 32(R13)(R12*2), AX, R10); \
	LEAQ (R13)(R12*4), R13; \
	LEAQ (R8)(R11*2), R8; \
	LEAQ (BX)(R11*2), BX; \
	LEAQ (AX)(R11*2), AX; \
	LEAQ (R10)(R11*2), R10; \
	SUBQ $2, DX; \
	JGE  LOOP; \
TAIL: \
	TESTQ $1, DX; \
	JEQ   DONE; \
	PF((R13)(R12*1)); \
	FMASTEP6((R13), 32(R13), R8, BX); \
DONE:

// FMAROWS6 points R15 at row 3 of six rows whose row 0 is at P, rows ldob bytes apart (R10).
#define FMAROWS6(P) \
	MOVQ ldob-16(SP), R10; \
	LEAQ (R10)(R10*2), R15; \
	ADDQ P, R15

// FMALOAD6 loads six rows' sums of one parity from P (row r at P + r·ldob) into Y0–Y11.
// Clobbers R10, R15.
#define FMALOAD6(P) \
	FMAROWS6(P); \
	VMOVUPS (P), Y0; \
	VMOVUPS 32(P), Y1; \
	VMOVUPS (P)(R10*1), Y2; \
	VMOVUPS 32(P)(R10*1), Y3; \
	VMOVUPS (P)(R10*2), Y4; \
	VMOVUPS 32(P)(R10*2), Y5; \
	VMOVUPS (R15), Y6; \
	VMOVUPS 32(R15), Y7; \
	VMOVUPS (R15)(R10*1), Y8; \
	VMOVUPS 32(R15)(R10*1), Y9; \
	VMOVUPS (R15)(R10*2), Y10; \
	VMOVUPS 32(R15)(R10*2), Y11

// FMASTORE6 stores Y0–Y11 as six rows' sums at P (row r at P + r·ldob). Clobbers R10, R15.
#define FMASTORE6(P) \
	FMAROWS6(P); \
	VMOVUPS Y0, (P); \
	VMOVUPS Y1, 32(P); \
	VMOVUPS Y2, (P)(R10*1); \
	VMOVUPS Y3, 32(P)(R10*1); \
	VMOVUPS Y4, (P)(R10*2); \
	VMOVUPS Y5, 32(P)(R10*2); \
	VMOVUPS Y6, (R15); \
	VMOVUPS Y7, 32(R15); \
	VMOVUPS Y8, (R15)(R10*1); \
	VMOVUPS Y9, 32(R15)(R10*1); \
	VMOVUPS Y10, (R15)(R10*2); \
	VMOVUPS Y11, 32(R15)(R10*2)

// FMAFINISH finishes one half of a row's group at M: the even-step sum saved at OFF(AX) plus the
// odd-step sum O, plus the stored value when the epilogue is add (FMASTORE2's order).
#define FMAFINISH(OFF, O, M) \
	VMOVUPS OFF(AX), Y12; \
	VADDPS  O, Y12, Y12; \
	FMAADDOUT(M, Y12); \
	VMOVUPS Y12, M

// func matmulGroupsFMA(out *float32, ldo int, x *float32, rs, is, n, k int, w *float32, ws, gs, ng int, bias *float32, add int, odd *float32, resume, split int)
//
// matmulGroupsAVX512 (groups_amd64.s) on AVX2 with FMA3: the same contract and, per output, the
// same two chains of fused multiply-adds (even steps from the bias, odd steps from +0, the
// even-step sum first in their final addition), so each output is bit for bit what the 16-lane
// kernel and matmulPanelsFMA give. A group's sixteen columns are two 8-lane halves. Rows are
// taken six at a time while six are left, in two passes over the group's steps, one per chain:
// the even steps' sums of six rows (twelve in registers: six rows × two halves), saved aside (or
// stored, for a split part), then the odd steps' sums, which join them. Each step loads w once
// for the six rows and broadcasts one value of x per row: eight loads feed twelve multiply-adds
// (against ten in the blocks of three, where both chains share the registers). The pass over
// the even steps prefetches each odd step's w, which the odd pass then finds in L1 (weights
// streamed from memory, as in batch-16 decoding, were fetched twice without it). The rows left
// go three at a time (both chains at once, a step pair per loop), then one at a time. Strides
// are in elements; bounds are checked by the Go caller.
//
// Registers, blocks of six: SI = x at row 0 of the block; R8, BX = x rows 0 and 3 at the pass's
// step, AX, R10 = at the step after it in the pass (two steps a loop); R9 = rs in bytes; R11 =
// 2·is in bytes; R12 = ws in bytes; R15 = 3·ws in bytes; R13 = w at the pass's step; R14 = out at
// row 0 of the block, column 16g; DI = out at row 0 of the block; DX = steps left in the pass,
// less two; CX = groups left; Y0–Y11 = the pass's sums (row r's halves in Y2r, Y2r+1); Y12, Y13 =
// w at one step; Y14, Y15 = broadcast x; the even-step sums saved at even-464(SP). While sums are
// loaded or stored, R10, R15 = ldob and out at row 3.
//
// Blocks of three: SI, BX, R8 = x rows 0..2 of the block; R10 = byte offset of step i, R11 = of
// step i+1; R12, R13, R14, DI, CX as above; DX = step pairs left; Y0–Y5 = even-step sums (row
// r's halves in Y2r, Y2r+1), Y6–Y11 = odd-step sums (row r's in Y2r+6, Y2r+7); Y12, Y13 = w at
// one step; Y14, Y15 = broadcast x.
TEXT ·matmulGroupsFMA(SB), NOSPLIT, $464-128
	GROUPSARGS(fdone)

fblock6:
	MOVQ rem-8(SP), AX
	CMPQ AX, $6
	JLT  fblock
	MOVQ rsb-24(SP), R9
	MOVQ isb2-64(SP), R11
	GROUPSROWS

fgroup6:
	MOVQ wg-56(SP), R13
	CMPQ resume+112(FP), $0
	JNE  feresume6
	FMAINIT3(Y0, Y1, Y2, Y3, Y4, Y5)
	VMOVAPS Y0, Y6
	VMOVAPS Y1, Y7
	VMOVAPS Y0, Y8
	VMOVAPS Y1, Y9
	VMOVAPS Y0, Y10
	VMOVAPS Y1, Y11
	JMP  feven6

feresume6:
	FMALOAD6(R14)

feven6:
	MOVQ SI, R8
	FMAXROWS6
	MOVQ k+48(FP), DX
	SUBQ pairs-48(SP), DX
	FMAPASS6(feloop6, fetail6, fedone6, FMAPREFETCH)

	CMPQ split+120(FP), $0
	JEQ  fesave6
	FMASTORE6(R14)
	JMP  fodd6

fesave6:
	LEAQ    even-464(SP), AX
	VMOVUPS Y0, (AX)
	VMOVUPS Y1, 32(AX)
	VMOVUPS Y2, 64(AX)
	VMOVUPS Y3, 96(AX)
	VMOVUPS Y4, 128(AX)
	VMOVUPS Y5, 160(AX)
	VMOVUPS Y6, 192(AX)
	VMOVUPS Y7, 224(AX)
	VMOVUPS Y8, 256(AX)
	VMOVUPS Y9, 288(AX)
	VMOVUPS Y10, 320(AX)
	VMOVUPS Y11, 352(AX)

fodd6:
	MOVQ wg-56(SP), R13
	ADDQ R12, R13
	CMPQ resume+112(FP), $0
	JNE  foresume6
	FMAZERO6(Y0, Y1, Y2, Y3, Y4, Y5)
	FMAZERO6(Y6, Y7, Y8, Y9, Y10, Y11)
	JMP  fostart6

foresume6:
	MOVQ oddd-80(SP), AX
	ADDQ R14, AX
	FMALOAD6(AX)

fostart6:
	MOVQ isb-32(SP), R8
	ADDQ SI, R8
	FMAXROWS6
	MOVQ pairs-48(SP), DX
	FMAPASS6(foloop6, fotail6, fend6, FMANOPF)

	CMPQ split+120(FP), $0
	JEQ  fjoin6
	MOVQ oddd-80(SP), AX
	ADDQ R14, AX
	FMASTORE6(AX)
	JMP  fnext6

fjoin6:
	LEAQ even-464(SP), AX
	FMAROWS6(R14)
	FMAFINISH(0, Y0, (R14))
	FMAFINISH(32, Y1, 32(R14))
	FMAFINISH(64, Y2, (R14)(R10*1))
	FMAFINISH(96, Y3, 32(R14)(R10*1))
	FMAFINISH(128, Y4, (R14)(R10*2))
	FMAFINISH(160, Y5, 32(R14)(R10*2))
	FMAFINISH(192, Y6, (R15))
	FMAFINISH(224, Y7, 32(R15))
	FMAFINISH(256, Y8, (R15)(R10*1))
	FMAFINISH(288, Y9, 32(R15)(R10*1))
	FMAFINISH(320, Y10, (R15)(R10*2))
	FMAFINISH(352, Y11, 32(R15)(R10*2))

fnext6:
	GROUPNEXT(fgroup6)

	MOVQ rsb-24(SP), AX
	LEAQ (AX)(AX*2), AX
	SHLQ $1, AX
	ADDQ AX, SI
	MOVQ ldob-16(SP), AX
	LEAQ (AX)(AX*2), AX
	SHLQ $1, AX
	ADDQ AX, DI
	SUBQ $6, rem-8(SP)
	JMP  fblock6

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
	FMAZERO6(Y6, Y7, Y8, Y9, Y10, Y11)
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
	PCALIGN $64

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
	PCALIGN $64

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
