//go:build amd64 && !purego

#include "textflag.h"

// func mulF32AVX(dst, a, b *float32, n int)
//
// dst[i] = a[i]·b[i] for i < n, n a multiple of 16, eight lanes per instruction (AVX). Each
// product is the IEEE single-precision product, as in a Go loop. dst may alias a or b.
TEXT ·mulF32AVX(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $4, CX
	JZ   mul_done

mul_loop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMULPS  (DX), Y0, Y0
	VMULPS  32(DX), Y1, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	DECQ    CX
	JNZ     mul_loop

mul_done:
	VZEROUPPER
	RET

// func addF32AVX(dst, a, b *float32, n int)
//
// dst[i] = a[i]+b[i] for i < n, n a multiple of 16; as mulF32AVX.
TEXT ·addF32AVX(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $4, CX
	JZ   add_done

add_loop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VADDPS  (DX), Y0, Y0
	VADDPS  32(DX), Y1, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	DECQ    CX
	JNZ     add_loop

add_done:
	VZEROUPPER
	RET

// func mulScalarF32AVX(dst, a *float32, c float32, n int)
//
// dst[i] = a[i]·c for i < n, n a multiple of 16.
TEXT ·mulScalarF32AVX(SB), NOSPLIT, $0-32
	MOVQ         dst+0(FP), DI
	MOVQ         a+8(FP), SI
	VBROADCASTSS c+16(FP), Y2
	MOVQ         n+24(FP), CX
	SHRQ         $4, CX
	JZ           muls_done

muls_loop:
	VMULPS  (SI), Y2, Y0
	VMULPS  32(SI), Y2, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     muls_loop

muls_done:
	VZEROUPPER
	RET

// func addScalarF32AVX(dst, a *float32, c float32, n int)
//
// dst[i] = a[i]+c for i < n, n a multiple of 16.
TEXT ·addScalarF32AVX(SB), NOSPLIT, $0-32
	MOVQ         dst+0(FP), DI
	MOVQ         a+8(FP), SI
	VBROADCASTSS c+16(FP), Y2
	MOVQ         n+24(FP), CX
	SHRQ         $4, CX
	JZ           adds_done

adds_loop:
	VADDPS  (SI), Y2, Y0
	VADDPS  32(SI), Y2, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     adds_loop

adds_done:
	VZEROUPPER
	RET
