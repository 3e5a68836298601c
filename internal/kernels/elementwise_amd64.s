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
