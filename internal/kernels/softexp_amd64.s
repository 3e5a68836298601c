//go:build amd64 && !purego

#include "textflag.h"

// The shifted exponential and the GELU of policy/host (expShifted, geluRows), sixteen values at
// a time (AVX-512F), each lane with the scalar code's float32 operations in its order and none
// fused, so that every result is bit for bit the scalar one. The constants come from an
// ExpConsts (softexp.go); its offsets are below.

#define O_INVSTEP 128
#define O_STEPHI 132
#define O_STEPLO 136
#define O_ROUND 140
#define O_LOWEST 144
#define O_SIXTH 148
#define O_HALF 152
#define O_ONE 156
#define O_GELUC 160
#define O_GELUC3 164
#define O_MAXARG 168

// LOADCONSTS broadcasts the exponential's constants from the ExpConsts at DX: Z30 InvStep,
// Z29 StepHi, Z28 StepLo, Z27 Round, Z26 Lowest, Z25 Sixth, Z24 Half, Z23 One, and the table's
// two halves into Z21 (entries 0..15) and Z22 (16..31).
#define LOADCONSTS \
	VBROADCASTSS O_INVSTEP(DX), Z30; \
	VBROADCASTSS O_STEPHI(DX), Z29; \
	VBROADCASTSS O_STEPLO(DX), Z28; \
	VBROADCASTSS O_ROUND(DX), Z27; \
	VBROADCASTSS O_LOWEST(DX), Z26; \
	VBROADCASTSS O_SIXTH(DX), Z25; \
	VBROADCASTSS O_HALF(DX), Z24; \
	VBROADCASTSS O_ONE(DX), Z23; \
	VMOVDQU32 (DX), Z21; \
	VMOVDQU32 64(DX), Z22

// EXPBODY replaces the exponents in Z0 by their exponentials (clobbers Z1–Z8):
//   x = max(x, Lowest)  (Go: if x < Lowest { x = Lowest }; Intel MAXPS returns its second source,
//                        here x, unless Lowest > x, so NaN stays NaN)
//   t = x·InvStep + Round; n = t − Round; k = bits(t) − bits(Round)
//   r = (x − n·StepHi) − n·StepLo
//   p = ((r·r)·(Half + r·Sixth) + r) + One
//   e = p · float32frombits(Table[k & 31] + ((k >> 5) << 23))
// VPERMI2D reads the low five bits of each index, which is k & 31.
#define EXPBODY \
	VMAXPS    Z0, Z26, Z0; \
	VMULPS    Z30, Z0, Z1; \
	VADDPS    Z27, Z1, Z1; \
	VSUBPS    Z27, Z1, Z2; \
	VPSUBD    Z27, Z1, Z3; \
	VMULPS    Z29, Z2, Z4; \
	VSUBPS    Z4, Z0, Z4; \
	VMULPS    Z28, Z2, Z5; \
	VSUBPS    Z5, Z4, Z4; \
	VMULPS    Z25, Z4, Z5; \
	VADDPS    Z24, Z5, Z5; \
	VMULPS    Z4, Z4, Z6; \
	VMULPS    Z5, Z6, Z6; \
	VADDPS    Z4, Z6, Z6; \
	VADDPS    Z23, Z6, Z6; \
	VMOVDQA32 Z3, Z7; \
	VPERMI2D  Z22, Z21, Z7; \
	VPSRAD    $5, Z3, Z8; \
	VPSLLD    $23, Z8, Z8; \
	VPADDD    Z8, Z7, Z7; \
	VMULPS    Z7, Z6, Z0

// func expShiftedAVX512(s *float32, n int, m float32, c *ExpConsts)
// s[i] = e^(s[i] − m) for i < n (a positive multiple of 16).
TEXT ·expShiftedAVX512(SB), NOSPLIT, $0-32
	MOVQ s+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSS m+16(FP), Z31
	MOVQ c+24(FP), DX
	LOADCONSTS

expLoop:
	VMOVUPS (DI), Z0
	VSUBPS  Z31, Z0, Z0
	EXPBODY
	VMOVUPS Z0, (DI)
	ADDQ    $64, DI
	SUBQ    $16, CX
	JNZ     expLoop
	VZEROUPPER
	RET

// func geluAVX512(x *float32, n int, c *ExpConsts)
// x[i] = x[i] / (One + e^t), t = min(GeluC·(x[i] + ((GeluC3·x[i])·x[i])·x[i]), MaxArg), for i < n
// (a positive multiple of 16). The scalar code subtracts m = 0 from t, which leaves every t
// (−0, NaN included) as it is, so it is not done here. Intel MINPS returns its second source, t,
// unless MaxArg < t.
TEXT ·geluAVX512(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ c+16(FP), DX
	LOADCONSTS
	VBROADCASTSS O_GELUC(DX), Z20
	VBROADCASTSS O_GELUC3(DX), Z19
	VBROADCASTSS O_MAXARG(DX), Z18

geluLoop:
	VMOVUPS (DI), Z9
	VMULPS  Z19, Z9, Z0
	VMULPS  Z9, Z0, Z0
	VMULPS  Z9, Z0, Z0
	VADDPS  Z0, Z9, Z0
	VMULPS  Z20, Z0, Z0
	VMINPS  Z0, Z18, Z0
	EXPBODY
	VADDPS  Z23, Z0, Z0
	VDIVPS  Z0, Z9, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, DI
	SUBQ    $16, CX
	JNZ     geluLoop
	VZEROUPPER
	RET
