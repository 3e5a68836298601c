//go:build amd64 && !purego

#include "textflag.h"
#include "groups_amd64.h"

// ZERO4 clears four sums.
#define ZERO4(A, B, C, D) \
	VPXORD A, A, A; \
	VPXORD B, B, B; \
	VPXORD C, C, C; \
	VPXORD D, D, D

// EVENINIT4 starts four rows' even-step sums of a group at the bias (the 16 values at OFF bytes
// past the group's bias pointer, biasg) or, without a bias, at +0. Clobbers AX.
#define EVENINIT4(A, B, C, D, OFF) \
	MOVQ    biasg-72(SP), AX; \
	TESTQ   AX, AX; \
	JEQ     3(PC); \
	VMOVUPS OFF(AX), A; \
	JMP     2(PC); \
	VPXORD  A, A, A; \
	VMOVAPS A, B; \
	VMOVAPS A, C; \
	VMOVAPS A, D

// ADDOUT adds the value stored at M to the sum S when the epilogue is add (add ≠ 0).
#define ADDOUT(M, S) \
	CMPQ   add+96(FP), $0; \
	JEQ    2(PC); \
	VADDPS M, S, S

// FIRSTSTEP points R10 and R11 at steps 0 and 1, loads the number of step pairs into DX and
// jumps to TAIL when there are none.
#define FIRSTSTEP(TAIL) \
	XORQ  R10, R10; \
	MOVQ  isb-32(SP), R11; \
	MOVQ  pairs-48(SP), DX; \
	TESTQ DX, DX; \
	JEQ   TAIL

// NEXTPAIR moves w (R13) and the step offsets (R10, R11) on by two steps and loops to LOOP while
// step pairs are left.
#define NEXTPAIR(LOOP) \
	LEAQ (R13)(R12*2), R13; \
	ADDQ isb2-64(SP), R10; \
	ADDQ isb2-64(SP), R11; \
	DECQ DX; \
	JNZ  LOOP

// RESUME4 loads four rows' sums of a group, OFF bytes past R14: the even-step sums E0–E3 from
// out, the odd-step sums O0–O3 from the odd buffer. Clobbers AX, R10, R11.
#define RESUME4(E0, E1, E2, E3, O0, O1, O2, O3, OFF) \
	MOVQ    ldob-16(SP), R10; \
	MOVQ    oddd-80(SP), R11; \
	ADDQ    R14, R11; \
	LEAQ    (R10)(R10*2), AX; \
	VMOVUPS OFF(R14), E0; \
	VMOVUPS OFF(R14)(R10*1), E1; \
	VMOVUPS OFF(R14)(R10*2), E2; \
	VMOVUPS OFF(R14)(AX*1), E3; \
	VMOVUPS OFF(R11), O0; \
	VMOVUPS OFF(R11)(R10*1), O1; \
	VMOVUPS OFF(R11)(R10*2), O2; \
	VMOVUPS OFF(R11)(AX*1), O3

// SPLIT4 stores four rows' sums of a group where RESUME4 loads them. Clobbers AX, R10, R11.
#define SPLIT4(E0, E1, E2, E3, O0, O1, O2, O3, OFF) \
	MOVQ    ldob-16(SP), R10; \
	MOVQ    oddd-80(SP), R11; \
	ADDQ    R14, R11; \
	LEAQ    (R10)(R10*2), AX; \
	VMOVUPS E0, OFF(R14); \
	VMOVUPS E1, OFF(R14)(R10*1); \
	VMOVUPS E2, OFF(R14)(R10*2); \
	VMOVUPS E3, OFF(R14)(AX*1); \
	VMOVUPS O0, OFF(R11); \
	VMOVUPS O1, OFF(R11)(R10*1); \
	VMOVUPS O2, OFF(R11)(R10*2); \
	VMOVUPS O3, OFF(R11)(AX*1)

// PAIRSTEP adds steps i and i+1 of row X to both groups of a pair: X's values at R10 and R11
// broadcast into BE and BO, multiplied with the first group's w (Z8, Z9) into its even and odd
// sums E0, O0 and with the second group's (Z18, Z19) into E1, O1.
#define PAIRSTEP(X, E0, O0, E1, O1, BE, BO) \
	VBROADCASTSS (X)(R10*1), BE; \
	VBROADCASTSS (X)(R11*1), BO; \
	VFMADD231PS  BE, Z8, E0; \
	VFMADD231PS  BO, Z9, O0; \
	VFMADD231PS  BE, Z18, E1; \
	VFMADD231PS  BO, Z19, O1

// PAIRTAIL adds the last step (odd k) of row X to the even sums E0, E1 of a pair of groups.
#define PAIRTAIL(X, E0, E1, B) \
	VBROADCASTSS (X)(R10*1), B; \
	VFMADD231PS  B, Z8, E0; \
	VFMADD231PS  B, Z18, E1

// func matmulGroupsAVX512(out *float32, ldo int, x *float32, rs, is, n, k int, w *float32, ws, gs, ng int, bias *float32, add int, odd *float32, resume, split int)
//
// For each of n rows r (row r's value at step i is x[r·rs + i·is]) and each of ng groups g of 16
// columns (column 16g+c's value at step i is w[g·gs + i·ws + c]), stores
//
//	y = Σ_{even i} x·w[i][c] + Σ_{odd i} x·w[i][c]
//
// to out[r·ldo + 16g + c] (add = 0) or adds it to the value there (add ≠ 0), where each sum is a
// chain of fused multiply-adds in order of i, the even-step chain starting from bias[16g + c]
// (from +0 when bias is nil) and the odd one from +0, and the even-step chain goes first in the
// final addition. That is the arithmetic matmulPanelsFMA (panels_amd64.s) does for a pair of
// panels, so each output is bit for bit what it gives; this kernel does it sixteen lanes wide (AVX-512F), four rows at a time (then one
// at a time), with x broadcast from memory into each multiply-add, or, for two groups side by
// side, broadcast once into a register for both. Strides are in elements; bounds are checked by
// the Go caller.
//
// A long sum can be computed in parts of an even number of steps: with split ≠ 0 the even- and
// odd-step sums are stored apart, to out and to odd (whose values lie at the same offsets as
// out's), instead of their sum; with resume ≠ 0 both chains start from the values stored there
// instead of from the bias and +0. The chains continue exactly, so a sum computed in parts is bit
// for bit the sum computed at once.
//
// biasg (a stack slot) is the bias at column 16g, moving with g.
//
// Registers: SI, BX, R8, R9 = x rows 0..3 of the block; R10 = byte offset of step i, R11 = of
// step i+1; R12 = ws in bytes; R13 = w at step i of group g; R14 = out at row 0 of the block,
// column 16g; DI = out at row 0 of the block; DX = step pairs left; CX = groups left; Z0–Z3 =
// even-step sums, Z4–Z7 = odd-step sums; Z8, Z9 = w at steps i, i+1; for a pair of groups also
// R15 = w at step i of group g+1, Z10–Z17 its sums, Z18, Z19 its w, Z20–Z27 the broadcast x.
TEXT ·matmulGroupsAVX512(SB), NOSPLIT, $80-128
	GROUPSARGS(done)

block:
	MOVQ rem-8(SP), AX
	CMPQ AX, $4
	JLT single
	MOVQ rsb-24(SP), AX
	LEAQ (SI)(AX*1), BX
	LEAQ (BX)(AX*1), R8
	LEAQ (R8)(AX*1), R9
	GROUPSROWS

group4:
	CMPQ CX, $2
	JLT  group4one

	// Two groups side by side: every broadcast of x feeds both, so each step pair loads four
	// vectors of w and eight values of x for sixteen multiply-adds. Z10–Z13 and Z14–Z17 are the
	// second group's even- and odd-step sums, Z18, Z19 its w at steps i, i+1, R15 its w pointer.
	MOVQ wg-56(SP), R13
	MOVQ R13, R15
	ADDQ gsb-40(SP), R15
	CMPQ resume+112(FP), $0
	JNE  resume4x2
	EVENINIT4(Z0, Z1, Z2, Z3, 0)
	EVENINIT4(Z10, Z11, Z12, Z13, 64)
	ZERO4(Z4, Z5, Z6, Z7)
	ZERO4(Z14, Z15, Z16, Z17)
	JMP  start4x2

resume4x2:
	RESUME4(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, 0)
	RESUME4(Z10, Z11, Z12, Z13, Z14, Z15, Z16, Z17, 64)

start4x2:
	FIRSTSTEP(tail4x2)

pair4x2:
	VMOVUPS (R13), Z8
	VMOVUPS (R13)(R12*1), Z9
	VMOVUPS (R15), Z18
	VMOVUPS (R15)(R12*1), Z19
	PAIRSTEP(SI, Z0, Z4, Z10, Z14, Z20, Z21)
	PAIRSTEP(BX, Z1, Z5, Z11, Z15, Z22, Z23)
	PAIRSTEP(R8, Z2, Z6, Z12, Z16, Z24, Z25)
	PAIRSTEP(R9, Z3, Z7, Z13, Z17, Z26, Z27)
	LEAQ (R15)(R12*2), R15
	NEXTPAIR(pair4x2)

tail4x2:
	TESTQ $1, k+48(FP)
	JEQ store4x2
	VMOVUPS (R13), Z8
	VMOVUPS (R15), Z18
	PAIRTAIL(SI, Z0, Z10, Z20)
	PAIRTAIL(BX, Z1, Z11, Z22)
	PAIRTAIL(R8, Z2, Z12, Z24)
	PAIRTAIL(R9, Z3, Z13, Z26)

store4x2:
	CMPQ split+120(FP), $0
	JNE  split4x2
	VADDPS Z4, Z0, Z0
	VADDPS Z5, Z1, Z1
	VADDPS Z6, Z2, Z2
	VADDPS Z7, Z3, Z3
	VADDPS Z14, Z10, Z10
	VADDPS Z15, Z11, Z11
	VADDPS Z16, Z12, Z12
	VADDPS Z17, Z13, Z13
	MOVQ ldob-16(SP), AX
	ADDOUT((R14), Z0)
	ADDOUT(64(R14), Z10)
	ADDOUT((R14)(AX*1), Z1)
	ADDOUT(64(R14)(AX*1), Z11)
	ADDOUT((R14)(AX*2), Z2)
	ADDOUT(64(R14)(AX*2), Z12)
	VMOVUPS Z0, (R14)
	VMOVUPS Z10, 64(R14)
	VMOVUPS Z1, (R14)(AX*1)
	VMOVUPS Z11, 64(R14)(AX*1)
	VMOVUPS Z2, (R14)(AX*2)
	VMOVUPS Z12, 64(R14)(AX*2)
	LEAQ (AX)(AX*2), AX
	ADDOUT((R14)(AX*1), Z3)
	ADDOUT(64(R14)(AX*1), Z13)
	VMOVUPS Z3, (R14)(AX*1)
	VMOVUPS Z13, 64(R14)(AX*1)
	JMP  next4x2

split4x2:
	SPLIT4(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, 0)
	SPLIT4(Z10, Z11, Z12, Z13, Z14, Z15, Z16, Z17, 64)

next4x2:
	ADDQ $128, R14
	BIASNEXT($128)
	MOVQ gsb-40(SP), AX
	SHLQ $1, AX
	ADDQ AX, wg-56(SP)
	SUBQ $2, CX
	JNZ group4
	JMP nextblock

group4one:
	MOVQ wg-56(SP), R13
	CMPQ resume+112(FP), $0
	JNE  resume4
	EVENINIT4(Z0, Z1, Z2, Z3, 0)
	ZERO4(Z4, Z5, Z6, Z7)
	JMP  start4

resume4:
	RESUME4(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, 0)

start4:
	FIRSTSTEP(tail4)

pair4:
	VMOVUPS (R13), Z8
	VMOVUPS (R13)(R12*1), Z9
	VFMADD231PS.BCST (SI)(R10*1), Z8, Z0
	VFMADD231PS.BCST (SI)(R11*1), Z9, Z4
	VFMADD231PS.BCST (BX)(R10*1), Z8, Z1
	VFMADD231PS.BCST (BX)(R11*1), Z9, Z5
	VFMADD231PS.BCST (R8)(R10*1), Z8, Z2
	VFMADD231PS.BCST (R8)(R11*1), Z9, Z6
	VFMADD231PS.BCST (R9)(R10*1), Z8, Z3
	VFMADD231PS.BCST (R9)(R11*1), Z9, Z7
	NEXTPAIR(pair4)

tail4:
	TESTQ $1, k+48(FP)
	JEQ store4
	VMOVUPS (R13), Z8
	VFMADD231PS.BCST (SI)(R10*1), Z8, Z0
	VFMADD231PS.BCST (BX)(R10*1), Z8, Z1
	VFMADD231PS.BCST (R8)(R10*1), Z8, Z2
	VFMADD231PS.BCST (R9)(R10*1), Z8, Z3

store4:
	CMPQ split+120(FP), $0
	JNE  split4
	VADDPS Z4, Z0, Z0
	VADDPS Z5, Z1, Z1
	VADDPS Z6, Z2, Z2
	VADDPS Z7, Z3, Z3
	MOVQ ldob-16(SP), AX
	ADDOUT((R14), Z0)
	ADDOUT((R14)(AX*1), Z1)
	ADDOUT((R14)(AX*2), Z2)
	VMOVUPS Z0, (R14)
	VMOVUPS Z1, (R14)(AX*1)
	VMOVUPS Z2, (R14)(AX*2)
	LEAQ (AX)(AX*2), AX
	ADDOUT((R14)(AX*1), Z3)
	VMOVUPS Z3, (R14)(AX*1)
	JMP  next4

split4:
	SPLIT4(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, 0)

next4:
	GROUPNEXT(group4)

nextblock:
	MOVQ rsb-24(SP), AX
	LEAQ (SI)(AX*4), SI
	MOVQ ldob-16(SP), AX
	LEAQ (DI)(AX*4), DI
	SUBQ $4, rem-8(SP)
	JMP block

single:
	MOVQ rem-8(SP), AX
	TESTQ AX, AX
	JEQ done
	GROUPSROWS

group1:
	MOVQ wg-56(SP), R13
	CMPQ resume+112(FP), $0
	JNE  resume1
	MOVQ biasg-72(SP), AX
	TESTQ AX, AX
	JEQ group1zero
	VMOVUPS (AX), Z0
	JMP group1odd

group1zero:
	VPXORD Z0, Z0, Z0

group1odd:
	VPXORD Z4, Z4, Z4
	JMP  start1

resume1:
	MOVQ    oddd-80(SP), AX
	VMOVUPS (R14), Z0
	VMOVUPS (R14)(AX*1), Z4

start1:
	XORQ R10, R10
	MOVQ isb-32(SP), R11
	MOVQ pairs-48(SP), DX
	TESTQ DX, DX
	JEQ tail1

pair1:
	VMOVUPS (R13), Z8
	VMOVUPS (R13)(R12*1), Z9
	VFMADD231PS.BCST (SI)(R10*1), Z8, Z0
	VFMADD231PS.BCST (SI)(R11*1), Z9, Z4
	NEXTPAIR(pair1)

tail1:
	TESTQ $1, k+48(FP)
	JEQ store1
	VMOVUPS (R13), Z8
	VFMADD231PS.BCST (SI)(R10*1), Z8, Z0

store1:
	CMPQ split+120(FP), $0
	JNE  split1
	VADDPS Z4, Z0, Z0
	ADDOUT((R14), Z0)
	VMOVUPS Z0, (R14)
	JMP  next1

split1:
	MOVQ    oddd-80(SP), AX
	VMOVUPS Z0, (R14)
	VMOVUPS Z4, (R14)(AX*1)

next1:
	GROUPNEXT(group1)

	MOVQ rsb-24(SP), AX
	ADDQ AX, SI
	MOVQ ldob-16(SP), AX
	ADDQ AX, DI
	DECQ rem-8(SP)
	JMP single

done:
	VZEROUPPER
	RET

// func GatherF32AVX512(dst *float32, src *float32, idx *int32, chunks, step int)
//
// Gathers chunks × 16 values: chunk c is dst[16c + j] = src[c·step/4 + idx[j]] for j < 16 (step
// in bytes), one 16-lane gather per chunk (AVX-512F): strided rows (broadcastRows) and, with a
// step of one value, sixteen rows transposed into a group of the 16-lane kernel (packGroupsNK).
// Bounds are checked by the Go caller.
TEXT ·GatherF32AVX512(SB), NOSPLIT, $0-40
	MOVQ      dst+0(FP), DI
	MOVQ      src+8(FP), SI
	MOVQ      idx+16(FP), AX
	MOVQ      chunks+24(FP), CX
	MOVQ      step+32(FP), DX
	TESTQ     CX, CX
	JEQ       gatherdone
	VMOVDQU32 (AX), Z1

gatherloop:
	KXNORW     K1, K1, K1
	VGATHERDPS (SI)(Z1*4), K1, Z0
	VMOVUPS    Z0, (DI)
	ADDQ       DX, SI
	ADDQ       $64, DI
	DECQ       CX
	JNZ        gatherloop

gatherdone:
	VZEROUPPER
	RET
