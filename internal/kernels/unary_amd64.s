//go:build amd64 && !purego

#include "textflag.h"

// Float32 Exp and Tanh bit for bit as the Go backend computes them, float32(math.Exp(float64(x)))
// and float32(math.Tanh(float64(x))), four values at a time in float64 lanes (AVX2 with FMA).
//
// EXPPD is the FMA path of the Go runtime's math.Exp on amd64 (math/exp_amd64.s, after Shibata's
// SIMD method): the same operations in the same order on each lane, so each lane's float64 equals
// math.Exp's. Its arguments must lie in [-700, 700], where math.Exp takes neither its overflow nor
// its denormal branch; the callers keep them there (see the kernels). The tanh kernel evaluates
// the three branches of math.Tanh (math/tanh.go, which the gc compiler for GOAMD64=v1 compiles
// without fused multiply-adds) on every lane and selects per lane what math.Tanh would return.
// tanhexec.go checks both kernels against math at start-up and does not use them on a mismatch.

// log2(e): 1.4426950408889634073599246810018920
#define C_LOG2E 0
// upper part of ln 2: 0.69314718055966295651160180568695068359375
#define C_LN2U 32
// lower part of ln 2: 0.28235290563031577122588448175013436025525412068e-12
#define C_LN2L 64
// 1/16: 0.0625
#define C_SIXTEENTH 96
// 2: 2.0
#define C_TWO 128
// 1: 1.0
#define C_ONE 160
// 1/8!: 2.4801587301587301587e-5
#define C_E64 192
// 1/7!: 1.9841269841269841270e-4
#define C_E56 224
// 1/6!: 1.3888888888888888889e-3
#define C_E48 256
// 1/5!: 8.3333333333333333333e-3
#define C_E40 288
// 1/4!: 4.1666666666666666667e-2
#define C_E32 320
// 1/3!: 1.6666666666666666667e-1
#define C_E24 352
// 1/2: 0.5
#define C_HALF 384
// largest argument of the vector exp: 700.0
#define C_EXPHI 416
// arguments below are raised to it (e^-700 is 0 in float32): -700.0
#define C_EXPLO 448
// log(2^127)/2: tanh is ±1 above: 44.014845965556527147994
#define C_TANHBIG 480
// tanh uses exp from here: 0.625
#define C_TANHMID 512
// tanhP[0]: -9.64399179425052238628e-1
#define C_P0 544
// tanhP[1]: -9.92877231001918586564e1
#define C_P1 576
// tanhP[2]: -1.61468768441708447952e3
#define C_P2 608
// tanhQ[0]: 1.12811678491632931402e2
#define C_Q0 640
// tanhQ[1]: 2.23548839060100448583e3
#define C_Q1 672
// tanhQ[2]: 4.84406305325125486048e3
#define C_Q2 704
// clamp of 2|x| for lanes that do not take the exp branch: 100.0
#define C_HUNDRED 736
// clears the sign bit
#define C_ABS 768
// the sign bit
#define C_SIGN 800
// exponent bias, four int32
#define C_BIAS 832

DATA unaryc<>+0(SB)/8, $0x3ff71547652b82fe
DATA unaryc<>+8(SB)/8, $0x3ff71547652b82fe
DATA unaryc<>+16(SB)/8, $0x3ff71547652b82fe
DATA unaryc<>+24(SB)/8, $0x3ff71547652b82fe
DATA unaryc<>+32(SB)/8, $0x3fe62e42fefa3000
DATA unaryc<>+40(SB)/8, $0x3fe62e42fefa3000
DATA unaryc<>+48(SB)/8, $0x3fe62e42fefa3000
DATA unaryc<>+56(SB)/8, $0x3fe62e42fefa3000
DATA unaryc<>+64(SB)/8, $0x3d53de6af278ece6
DATA unaryc<>+72(SB)/8, $0x3d53de6af278ece6
DATA unaryc<>+80(SB)/8, $0x3d53de6af278ece6
DATA unaryc<>+88(SB)/8, $0x3d53de6af278ece6
DATA unaryc<>+96(SB)/8, $0x3fb0000000000000
DATA unaryc<>+104(SB)/8, $0x3fb0000000000000
DATA unaryc<>+112(SB)/8, $0x3fb0000000000000
DATA unaryc<>+120(SB)/8, $0x3fb0000000000000
DATA unaryc<>+128(SB)/8, $0x4000000000000000
DATA unaryc<>+136(SB)/8, $0x4000000000000000
DATA unaryc<>+144(SB)/8, $0x4000000000000000
DATA unaryc<>+152(SB)/8, $0x4000000000000000
DATA unaryc<>+160(SB)/8, $0x3ff0000000000000
DATA unaryc<>+168(SB)/8, $0x3ff0000000000000
DATA unaryc<>+176(SB)/8, $0x3ff0000000000000
DATA unaryc<>+184(SB)/8, $0x3ff0000000000000
DATA unaryc<>+192(SB)/8, $0x3efa01a01a01a01a
DATA unaryc<>+200(SB)/8, $0x3efa01a01a01a01a
DATA unaryc<>+208(SB)/8, $0x3efa01a01a01a01a
DATA unaryc<>+216(SB)/8, $0x3efa01a01a01a01a
DATA unaryc<>+224(SB)/8, $0x3f2a01a01a01a01a
DATA unaryc<>+232(SB)/8, $0x3f2a01a01a01a01a
DATA unaryc<>+240(SB)/8, $0x3f2a01a01a01a01a
DATA unaryc<>+248(SB)/8, $0x3f2a01a01a01a01a
DATA unaryc<>+256(SB)/8, $0x3f56c16c16c16c17
DATA unaryc<>+264(SB)/8, $0x3f56c16c16c16c17
DATA unaryc<>+272(SB)/8, $0x3f56c16c16c16c17
DATA unaryc<>+280(SB)/8, $0x3f56c16c16c16c17
DATA unaryc<>+288(SB)/8, $0x3f81111111111111
DATA unaryc<>+296(SB)/8, $0x3f81111111111111
DATA unaryc<>+304(SB)/8, $0x3f81111111111111
DATA unaryc<>+312(SB)/8, $0x3f81111111111111
DATA unaryc<>+320(SB)/8, $0x3fa5555555555555
DATA unaryc<>+328(SB)/8, $0x3fa5555555555555
DATA unaryc<>+336(SB)/8, $0x3fa5555555555555
DATA unaryc<>+344(SB)/8, $0x3fa5555555555555
DATA unaryc<>+352(SB)/8, $0x3fc5555555555555
DATA unaryc<>+360(SB)/8, $0x3fc5555555555555
DATA unaryc<>+368(SB)/8, $0x3fc5555555555555
DATA unaryc<>+376(SB)/8, $0x3fc5555555555555
DATA unaryc<>+384(SB)/8, $0x3fe0000000000000
DATA unaryc<>+392(SB)/8, $0x3fe0000000000000
DATA unaryc<>+400(SB)/8, $0x3fe0000000000000
DATA unaryc<>+408(SB)/8, $0x3fe0000000000000
DATA unaryc<>+416(SB)/8, $0x4085e00000000000
DATA unaryc<>+424(SB)/8, $0x4085e00000000000
DATA unaryc<>+432(SB)/8, $0x4085e00000000000
DATA unaryc<>+440(SB)/8, $0x4085e00000000000
DATA unaryc<>+448(SB)/8, $0xc085e00000000000
DATA unaryc<>+456(SB)/8, $0xc085e00000000000
DATA unaryc<>+464(SB)/8, $0xc085e00000000000
DATA unaryc<>+472(SB)/8, $0xc085e00000000000
DATA unaryc<>+480(SB)/8, $0x404601e678fc457b
DATA unaryc<>+488(SB)/8, $0x404601e678fc457b
DATA unaryc<>+496(SB)/8, $0x404601e678fc457b
DATA unaryc<>+504(SB)/8, $0x404601e678fc457b
DATA unaryc<>+512(SB)/8, $0x3fe4000000000000
DATA unaryc<>+520(SB)/8, $0x3fe4000000000000
DATA unaryc<>+528(SB)/8, $0x3fe4000000000000
DATA unaryc<>+536(SB)/8, $0x3fe4000000000000
DATA unaryc<>+544(SB)/8, $0xbfeedc5baafd6f4b
DATA unaryc<>+552(SB)/8, $0xbfeedc5baafd6f4b
DATA unaryc<>+560(SB)/8, $0xbfeedc5baafd6f4b
DATA unaryc<>+568(SB)/8, $0xbfeedc5baafd6f4b
DATA unaryc<>+576(SB)/8, $0xc058d26a0e26682d
DATA unaryc<>+584(SB)/8, $0xc058d26a0e26682d
DATA unaryc<>+592(SB)/8, $0xc058d26a0e26682d
DATA unaryc<>+600(SB)/8, $0xc058d26a0e26682d
DATA unaryc<>+608(SB)/8, $0xc0993ac030580563
DATA unaryc<>+616(SB)/8, $0xc0993ac030580563
DATA unaryc<>+624(SB)/8, $0xc0993ac030580563
DATA unaryc<>+632(SB)/8, $0xc0993ac030580563
DATA unaryc<>+640(SB)/8, $0x405c33f28a581b86
DATA unaryc<>+648(SB)/8, $0x405c33f28a581b86
DATA unaryc<>+656(SB)/8, $0x405c33f28a581b86
DATA unaryc<>+664(SB)/8, $0x405c33f28a581b86
DATA unaryc<>+672(SB)/8, $0x40a176fa0e5535fa
DATA unaryc<>+680(SB)/8, $0x40a176fa0e5535fa
DATA unaryc<>+688(SB)/8, $0x40a176fa0e5535fa
DATA unaryc<>+696(SB)/8, $0x40a176fa0e5535fa
DATA unaryc<>+704(SB)/8, $0x40b2ec102442040c
DATA unaryc<>+712(SB)/8, $0x40b2ec102442040c
DATA unaryc<>+720(SB)/8, $0x40b2ec102442040c
DATA unaryc<>+728(SB)/8, $0x40b2ec102442040c
DATA unaryc<>+736(SB)/8, $0x4059000000000000
DATA unaryc<>+744(SB)/8, $0x4059000000000000
DATA unaryc<>+752(SB)/8, $0x4059000000000000
DATA unaryc<>+760(SB)/8, $0x4059000000000000
DATA unaryc<>+768(SB)/8, $0x7fffffffffffffff
DATA unaryc<>+776(SB)/8, $0x7fffffffffffffff
DATA unaryc<>+784(SB)/8, $0x7fffffffffffffff
DATA unaryc<>+792(SB)/8, $0x7fffffffffffffff
DATA unaryc<>+800(SB)/8, $0x8000000000000000
DATA unaryc<>+808(SB)/8, $0x8000000000000000
DATA unaryc<>+816(SB)/8, $0x8000000000000000
DATA unaryc<>+824(SB)/8, $0x8000000000000000
DATA unaryc<>+832(SB)/4, $0x3ff
DATA unaryc<>+836(SB)/4, $0x3ff
DATA unaryc<>+840(SB)/4, $0x3ff
DATA unaryc<>+844(SB)/4, $0x3ff
GLOBL unaryc<>(SB), RODATA|NOPTR, $848

// EXPPD sets x = e^x on four float64 lanes with x in [-700, 700]. Clobbers t, k (kx is its
// 128-bit half). Needs Y10 = log2 e, Y11 = LN2U, Y12 = LN2L, Y13 = 1/16, Y14 = 2, Y15 = 1.
#define EXPPD(x, t, k, kx) \
	VMULPD       Y10, x, t; \
	VCVTPD2DQY   t, kx; \
	VCVTDQ2PD    kx, t; \
	VFNMADD231PD Y11, t, x; \
	VFNMADD231PD Y12, t, x; \
	VMULPD       Y13, x, x; \
	VMOVUPD      unaryc<>+C_E64(SB), t; \
	VFMADD213PD  unaryc<>+C_E56(SB), x, t; \
	VFMADD213PD  unaryc<>+C_E48(SB), x, t; \
	VFMADD213PD  unaryc<>+C_E40(SB), x, t; \
	VFMADD213PD  unaryc<>+C_E32(SB), x, t; \
	VFMADD213PD  unaryc<>+C_E24(SB), x, t; \
	VFMADD213PD  unaryc<>+C_HALF(SB), x, t; \
	VFMADD213PD  Y15, x, t; \
	VMULPD       t, x, x; \
	VADDPD       Y14, x, t; \
	VMULPD       t, x, x; \
	VADDPD       Y14, x, t; \
	VMULPD       t, x, x; \
	VADDPD       Y14, x, t; \
	VMULPD       t, x, x; \
	VADDPD       Y14, x, t; \
	VFMADD213PD  Y15, t, x; \
	VPADDD       unaryc<>+C_BIAS(SB), kx, kx; \
	VPMOVZXDQ    kx, k; \
	VPSLLQ       $52, k, k; \
	VMULPD       k, x, x

#define EXPCONSTS \
	VMOVUPD unaryc<>+C_LOG2E(SB), Y10; \
	VMOVUPD unaryc<>+C_LN2U(SB), Y11; \
	VMOVUPD unaryc<>+C_LN2L(SB), Y12; \
	VMOVUPD unaryc<>+C_SIXTEENTH(SB), Y13; \
	VMOVUPD unaryc<>+C_TWO(SB), Y14; \
	VMOVUPD unaryc<>+C_ONE(SB), Y15

// func ExpF32FMA(dst, src *float32, n int) int
//
// dst[i] = float32(math.Exp(float64(src[i]))) for whole groups of four from the start, stopping
// before the first group holding a NaN or a value above 700 (math.Exp's special cases, left to
// the caller); returns how many values it wrote. Values below -700 are raised to -700: their
// exponential, like e^-700, rounds to float32 zero.
TEXT ·ExpF32FMA(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX
	EXPCONSTS
	VMOVUPD unaryc<>+C_EXPHI(SB), Y8
	VMOVUPD unaryc<>+C_EXPLO(SB), Y9

exploop:
	LEAQ 4(AX), DX
	CMPQ DX, CX
	JGT  expdone
	VCVTPS2PD (SI)(AX*4), Y0
	VCMPPD    $0x12, Y8, Y0, Y1 // x <= 700, false for NaN
	VMOVMSKPD Y1, DX
	CMPQ      DX, $15
	JNE       expdone
	VMAXPD    Y9, Y0, Y0
	EXPPD(Y0, Y1, Y2, X2)
	VCVTPD2PSY Y0, X0
	VMOVUPS   X0, (DI)(AX*4)
	ADDQ      $4, AX
	JMP       exploop

expdone:
	MOVQ AX, ret+24(FP)
	VZEROUPPER
	RET

// func TanhF32FMA(dst, src *float32, n int) int
//
// dst[i] = float32(math.Tanh(float64(src[i]))) for whole groups of four from the start, stopping
// before the first group holding a NaN; returns how many values it wrote. Per lane, as
// math.Tanh: |x| > log(2^127)/2 gives ±1; |x| >= 0.625 gives ±(1 − 2/(e^(2|x|)+1)); x = ±0 gives x;
// otherwise x + x·s·((P0·s+P1)·s+P2)/(((s+Q0)·s+Q1)·s+Q2) with s = x². The exp branch is computed
// on every lane with 2|x| clamped to 100, and discarded where it does not apply.
TEXT ·TanhF32FMA(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX
	EXPCONSTS

tanhloop:
	LEAQ 4(AX), DX
	CMPQ DX, CX
	JGT  tanhdone
	VCVTPS2PD (SI)(AX*4), Y0          // x
	VCMPPD    $0x03, Y0, Y0, Y1       // unordered: NaN
	VMOVMSKPD Y1, DX
	TESTQ     DX, DX
	JNE       tanhdone
	VANDPD    unaryc<>+C_ABS(SB), Y0, Y4  // z = |x|
	VANDPD    unaryc<>+C_SIGN(SB), Y0, Y5 // sign of x

	// exp branch: ±(1 − 2/(e^(2z)+1))
	VMINPD    unaryc<>+C_HUNDRED(SB), Y4, Y6
	VADDPD    Y6, Y6, Y6
	EXPPD(Y6, Y1, Y2, X2)
	VADDPD    Y15, Y6, Y6
	VDIVPD    Y6, Y14, Y6
	VSUBPD    Y6, Y15, Y6
	VXORPD    Y5, Y6, Y6

	// rational branch: x + (x·s)·((P0·s+P1)·s+P2) / (((s+Q0)·s+Q1)·s+Q2)
	VMULPD    Y0, Y0, Y7
	VMULPD    Y7, Y0, Y3
	VMULPD    unaryc<>+C_P0(SB), Y7, Y1
	VADDPD    unaryc<>+C_P1(SB), Y1, Y1
	VMULPD    Y7, Y1, Y1
	VADDPD    unaryc<>+C_P2(SB), Y1, Y1
	VMULPD    Y3, Y1, Y1
	VADDPD    unaryc<>+C_Q0(SB), Y7, Y2
	VMULPD    Y7, Y2, Y2
	VADDPD    unaryc<>+C_Q1(SB), Y2, Y2
	VMULPD    Y7, Y2, Y2
	VADDPD    unaryc<>+C_Q2(SB), Y2, Y2
	VDIVPD    Y2, Y1, Y1
	VADDPD    Y1, Y0, Y1

	// select: x where x = 0, the exp branch where z >= 0.625, ±1 where z > log(2^127)/2
	VXORPD    Y2, Y2, Y2
	VCMPPD    $0x00, Y2, Y0, Y3
	VBLENDVPD Y3, Y0, Y1, Y1
	VCMPPD    $0x1d, unaryc<>+C_TANHMID(SB), Y4, Y3
	VBLENDVPD Y3, Y6, Y1, Y1
	VCMPPD    $0x1e, unaryc<>+C_TANHBIG(SB), Y4, Y3
	VXORPD    Y5, Y15, Y6
	VBLENDVPD Y3, Y6, Y1, Y1

	VCVTPD2PSY Y1, X1
	VMOVUPS   X1, (DI)(AX*4)
	ADDQ      $4, AX
	JMP       tanhloop

tanhdone:
	MOVQ AX, ret+24(FP)
	VZEROUPPER
	RET

// func LogisticF32FMA(dst, src *float32, n int) int
//
// dst[i] = float32 of the Go backend's logistic of float64(src[i]) — 1/(1+e^−x) for x ≥ 0,
// e^x/(1+e^x) below — for whole groups of four from the start, stopping before the first group
// holding a NaN; returns how many values it wrote. Both branches are e/(1+e) with e = e^−|x| and
// the numerator 1 where x ≥ 0; −|x| below −700 is raised to −700 (either branch then rounds to
// the same float32 as with the exact exponential: 1, or 0).
TEXT ·LogisticF32FMA(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX
	EXPCONSTS
	VMOVUPD unaryc<>+C_EXPLO(SB), Y9

logisticloop:
	LEAQ 4(AX), DX
	CMPQ DX, CX
	JGT  logisticdone
	VCVTPS2PD (SI)(AX*4), Y0        // x
	VCMPPD    $0x03, Y0, Y0, Y1     // unordered: NaN
	VMOVMSKPD Y1, DX
	TESTQ     DX, DX
	JNE       logisticdone
	VORPD     unaryc<>+C_SIGN(SB), Y0, Y4 // −|x|
	VMAXPD    Y9, Y4, Y4
	EXPPD(Y4, Y1, Y2, X2)            // e = e^−|x|
	VADDPD    Y15, Y4, Y6            // 1 + e
	VXORPD    Y2, Y2, Y2
	VCMPPD    $0x1d, Y2, Y0, Y3      // x ≥ 0
	VBLENDVPD Y3, Y15, Y4, Y4        // numerator: 1 where x ≥ 0, else e
	VDIVPD    Y6, Y4, Y4
	VCVTPD2PSY Y4, X4
	VMOVUPS   X4, (DI)(AX*4)
	ADDQ      $4, AX
	JMP       logisticloop

logisticdone:
	MOVQ AX, ret+24(FP)
	VZEROUPPER
	RET
