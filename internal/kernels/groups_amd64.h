// Macros shared by the groups kernels (groups_amd64.s, groups_fma_amd64.s), whose frames are the
// same: the arguments of matmulGroupsAVX512 and the stack slots below.

// GROUPSARGS loads the arguments into the stack slots and registers both kernels use (strides in
// bytes: ldob, rsb, isb, isb2 = 2·isb, gsb and R12 = ws; pairs = ⌊k/2⌋; SI = x, DI = out; oddd =
// odd − out in bytes) and jumps to DONE when there are no rows or no groups. Clobbers AX.
#define GROUPSARGS(DONE) \
	MOVQ n+40(FP), AX; \
	TESTQ AX, AX; \
	JEQ DONE; \
	MOVQ AX, rem-8(SP); \
	MOVQ ng+80(FP), AX; \
	TESTQ AX, AX; \
	JEQ DONE; \
	MOVQ ldo+8(FP), AX; \
	SHLQ $2, AX; \
	MOVQ AX, ldob-16(SP); \
	MOVQ rs+24(FP), AX; \
	SHLQ $2, AX; \
	MOVQ AX, rsb-24(SP); \
	MOVQ is+32(FP), AX; \
	SHLQ $2, AX; \
	MOVQ AX, isb-32(SP); \
	SHLQ $1, AX; \
	MOVQ AX, isb2-64(SP); \
	MOVQ ws+64(FP), R12; \
	SHLQ $2, R12; \
	MOVQ gs+72(FP), AX; \
	SHLQ $2, AX; \
	MOVQ AX, gsb-40(SP); \
	MOVQ k+48(FP), AX; \
	SHRQ $1, AX; \
	MOVQ AX, pairs-48(SP); \
	MOVQ x+16(FP), SI; \
	MOVQ out+0(FP), DI; \
	MOVQ odd+104(FP), AX; \
	SUBQ DI, AX; \
	MOVQ AX, oddd-80(SP)

// GROUPSROWS starts a block of rows at its first group: R14 = out at the block's row 0, CX = the
// groups left, wg = w of the group, biasg = its bias (nil without one). Clobbers AX.
#define GROUPSROWS \
	MOVQ DI, R14; \
	MOVQ ng+80(FP), CX; \
	MOVQ w+56(FP), AX; \
	MOVQ AX, wg-56(SP); \
	MOVQ bias+88(FP), AX; \
	MOVQ AX, biasg-72(SP)

// BIASNEXT moves biasg on by N bytes (to the next group) unless it is nil. Clobbers AX.
#define BIASNEXT(N) \
	MOVQ  biasg-72(SP), AX; \
	TESTQ AX, AX; \
	JEQ   2(PC); \
	ADDQ  N, biasg-72(SP)

// GROUPNEXT moves out, the bias and w on to the next group (out and the bias by 64 bytes) and
// loops to LOOP while groups are left. Clobbers AX.
#define GROUPNEXT(LOOP) \
	ADDQ $64, R14; \
	BIASNEXT($64); \
	MOVQ gsb-40(SP), AX; \
	ADDQ AX, wg-56(SP); \
	DECQ CX; \
	JNZ  LOOP
