//go:build amd64 && !purego

#include "textflag.h"

// Element-wise float32 kernels, eight lanes per instruction (AVX), for n a multiple of 16. Each
// lane is the IEEE single-precision operation a Go loop performs, with a as the first operand
// (so that NaN operands propagate as in the loop); dst may alias a or b.

// VECTOR defines func NAME(dst, a, b *float32, n int): dst[i] = a[i] OP b[i].
#define VECTOR(NAME, OP) \
TEXT NAME(SB), NOSPLIT, $0-32; \
	MOVQ dst+0(FP), DI; \
	MOVQ a+8(FP), SI; \
	MOVQ b+16(FP), DX; \
	MOVQ n+24(FP), CX; \
	SHRQ $4, CX; \
	JZ   done; \
loop: \
	VMOVUPS (SI), Y0; \
	VMOVUPS 32(SI), Y1; \
	OP      (DX), Y0, Y0; \
	OP      32(DX), Y1, Y1; \
	VMOVUPS Y0, (DI); \
	VMOVUPS Y1, 32(DI); \
	ADDQ    $64, SI; \
	ADDQ    $64, DX; \
	ADDQ    $64, DI; \
	DECQ    CX; \
	JNZ     loop; \
done: \
	VZEROUPPER; \
	RET

// SCALAR defines func NAME(dst, a *float32, c float32, n int): dst[i] = a[i] OP c.
#define SCALAR(NAME, OP) \
TEXT NAME(SB), NOSPLIT, $0-32; \
	MOVQ         dst+0(FP), DI; \
	MOVQ         a+8(FP), SI; \
	VBROADCASTSS c+16(FP), Y2; \
	MOVQ         n+24(FP), CX; \
	SHRQ         $4, CX; \
	JZ           done; \
loop: \
	VMOVUPS (SI), Y0; \
	VMOVUPS 32(SI), Y1; \
	OP      Y2, Y0, Y0; \
	OP      Y2, Y1, Y1; \
	VMOVUPS Y0, (DI); \
	VMOVUPS Y1, 32(DI); \
	ADDQ    $64, SI; \
	ADDQ    $64, DI; \
	DECQ    CX; \
	JNZ     loop; \
done: \
	VZEROUPPER; \
	RET

VECTOR(·MulF32AVX, VMULPS)
VECTOR(·AddF32AVX, VADDPS)
VECTOR(·SubF32AVX, VSUBPS)
VECTOR(·DivF32AVX, VDIVPS)
SCALAR(·MulScalarF32AVX, VMULPS)
SCALAR(·AddScalarF32AVX, VADDPS)
SCALAR(·SubScalarF32AVX, VSUBPS)
SCALAR(·DivScalarF32AVX, VDIVPS)

// func FillF32AVX(dst *float32, c float32, n int): dst[i] = c for i < n, n a multiple of 16.
TEXT ·FillF32AVX(SB), NOSPLIT, $0-24
	MOVQ         dst+0(FP), DI
	VBROADCASTSS c+8(FP), Y0
	MOVQ         n+16(FP), CX
	SHRQ         $4, CX
	JZ           done
loop:
	VMOVUPS Y0, (DI)
	VMOVUPS Y0, 32(DI)
	ADDQ    $64, DI
	DECQ    CX
	JNZ     loop
done:
	VZEROUPPER
	RET

// func SqrtF32AVX(dst, a *float32, n int): dst[i] = √a[i] for i < n, n a multiple of 16. VSQRTPS
// rounds correctly, as float32(math.Sqrt(float64(a[i]))) does (the float64 root rounded to
// float32 is the correctly rounded float32 root).
TEXT ·SqrtF32AVX(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	JZ   sqrtdone
sqrtloop:
	VSQRTPS (SI), Y0
	VSQRTPS 32(SI), Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     sqrtloop
sqrtdone:
	VZEROUPPER
	RET

// func SumRowsF32AVX(dst, src *float32, rows, ld, n int): dst[j] = the sum over r < rows, in
// order and from +0, of src[r·ld + j], for j < n, n a multiple of 8: each column's additions the
// Go loop's (the running sum the first operand). Columns go 32 at a time (four running sums,
// so that four additions are in flight), then 8.
TEXT ·SumRowsF32AVX(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rows+16(FP), R8
	MOVQ ld+24(FP), R9
	SHLQ $2, R9
	MOVQ n+32(FP), CX

sum32:
	CMPQ   CX, $32
	JLT    sum8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ   SI, AX
	MOVQ   R8, DX
	TESTQ  DX, DX
	JEQ    store32

rows32:
	VADDPS (AX), Y0, Y0
	VADDPS 32(AX), Y1, Y1
	VADDPS 64(AX), Y2, Y2
	VADDPS 96(AX), Y3, Y3
	ADDQ   R9, AX
	DECQ   DX
	JNZ    rows32

store32:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DI
	SUBQ    $32, CX
	JMP     sum32

sum8:
	CMPQ   CX, $8
	JLT    sumdone
	VXORPS Y0, Y0, Y0
	MOVQ   SI, AX
	MOVQ   R8, DX
	TESTQ  DX, DX
	JEQ    store8

rows8:
	VADDPS (AX), Y0, Y0
	ADDQ   R9, AX
	DECQ   DX
	JNZ    rows8

store8:
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     sum8

sumdone:
	VZEROUPPER
	RET

// func TransposeF32AVX(dst *float32, ldd int, src *float32, lds, rows, cols int): dst[i·ldd + j]
// = src[j·lds + i] for i < rows and j < cols, both multiples of 8, in blocks of 8 × 8: eight
// loads of eight values (eight columns j of src, rows i..i+7), transposed in registers (pairs
// unpacked, then quadruples shuffled, then 128-bit halves exchanged), eight stores.
TEXT ·TransposeF32AVX(SB), NOSPLIT, $0-48
	MOVQ  dst+0(FP), DI
	MOVQ  ldd+8(FP), R8
	SHLQ  $2, R8
	MOVQ  src+16(FP), SI
	MOVQ  lds+24(FP), R9
	SHLQ  $2, R9
	MOVQ  rows+32(FP), R10
	SHRQ  $3, R10
	JEQ   trdone
	MOVQ  cols+40(FP), R11
	SHRQ  $3, R11
	JEQ   trdone
	LEAQ  (R9)(R9*2), R12 // 3·lds
	LEAQ  (R8)(R8*2), R13 // 3·ldd

trrows:
	MOVQ SI, AX  // src at column 0 of this block of rows
	MOVQ DI, BX  // dst at row i, column 0
	MOVQ R11, CX

trblock:
	VMOVUPS (AX), Y0
	VMOVUPS (AX)(R9*1), Y1
	VMOVUPS (AX)(R9*2), Y2
	VMOVUPS (AX)(R12*1), Y3
	LEAQ    (AX)(R9*4), DX
	VMOVUPS (DX), Y4
	VMOVUPS (DX)(R9*1), Y5
	VMOVUPS (DX)(R9*2), Y6
	VMOVUPS (DX)(R12*1), Y7
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15
	VSHUFPS $0x44, Y10, Y8, Y0
	VSHUFPS $0xEE, Y10, Y8, Y1
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xEE, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4
	VSHUFPS $0xEE, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xEE, Y15, Y13, Y7
	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15
	VMOVUPS Y8, (BX)
	VMOVUPS Y9, (BX)(R8*1)
	VMOVUPS Y10, (BX)(R8*2)
	VMOVUPS Y11, (BX)(R13*1)
	LEAQ    (BX)(R8*4), DX
	VMOVUPS Y12, (DX)
	VMOVUPS Y13, (DX)(R8*1)
	VMOVUPS Y14, (DX)(R8*2)
	VMOVUPS Y15, (DX)(R13*1)
	LEAQ    (AX)(R9*8), AX // eight columns on
	ADDQ    $32, BX
	DECQ    CX
	JNZ     trblock

	ADDQ $32, SI         // eight rows on
	LEAQ (DI)(R8*8), DI
	DECQ R10
	JNZ  trrows

trdone:
	VZEROUPPER
	RET
