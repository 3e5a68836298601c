package modelfile

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Dequantize decodes len(dst) elements of type typ from src into dst, following ggml's block
// layouts (ggml-quants.c, dequantize_row_*):
//
//	Q8_0: f16 d, 32 int8 q:                      x = q·d
//	Q4_0: f16 d, 16 bytes of 4-bit q:            x = (q−8)·d
//	Q4_1: f16 d, f16 m, 16 bytes of 4-bit q:     x = q·d + m
//
// In a 4-bit block, byte j holds element j in its low nibble and element j+16 in its high one.
// Each product and sum is rounded to float32 on its own (no fused multiply-add), as numpy and the
// Python gguf package compute them. len(dst) must be a whole number of blocks, and src exactly
// their bytes.
func Dequantize(typ TensorType, src []byte, dst []float32) error {
	l, ok := layoutOf(typ)
	if !ok || !l.dequantises {
		return fmt.Errorf("tensor type %s is not dequantised (F32, F16, BF16, Q8_0, Q4_0 and Q4_1 are)", typ)
	}
	n := int64(len(dst))
	if n%l.blockSize != 0 {
		return fmt.Errorf("%d elements of %s: not a whole number of %d-element blocks", n, typ, l.blockSize)
	}
	if want := n / l.blockSize * l.blockBytes; int64(len(src)) != want {
		return fmt.Errorf("%d elements of %s take %d bytes, not %d", n, typ, want, len(src))
	}
	le := binary.LittleEndian
	switch typ {
	case F32:
		for i := range dst {
			dst[i] = math.Float32frombits(le.Uint32(src[4*i:]))
		}
	case F16:
		for i := range dst {
			dst[i] = HalfToFloat32(le.Uint16(src[2*i:]))
		}
	case BF16:
		for i := range dst {
			dst[i] = math.Float32frombits(uint32(le.Uint16(src[2*i:])) << 16)
		}
	case Q8_0:
		for b := range len(dst) / 32 {
			blk, out := src[34*b:34*b+34], dst[32*b:32*b+32]
			d := HalfToFloat32(le.Uint16(blk))
			for j, q := range blk[2:] {
				out[j] = float32(int8(q)) * d
			}
		}
	case Q4_0:
		for b := range len(dst) / 32 {
			blk, out := src[18*b:18*b+18], dst[32*b:32*b+32]
			d := HalfToFloat32(le.Uint16(blk))
			for j, q := range blk[2:] {
				out[j] = float32(int(q&0xF)-8) * d
				out[j+16] = float32(int(q>>4)-8) * d
			}
		}
	case Q4_1:
		for b := range len(dst) / 32 {
			blk, out := src[20*b:20*b+20], dst[32*b:32*b+32]
			d, m := HalfToFloat32(le.Uint16(blk)), HalfToFloat32(le.Uint16(blk[2:]))
			for j, q := range blk[4:] {
				// The conversions round each product before the sum: Go may fuse x*y + z.
				out[j] = float32(float32(q&0xF)*d) + m
				out[j+16] = float32(float32(q>>4)*d) + m
			}
		}
	}
	return nil
}

// HalfToFloat32 converts an IEEE 754 half-precision value (its bits) to float32, exactly:
// subnormals, infinities and NaNs included.
func HalfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1F
	frac := uint32(h) & 0x3FF
	switch {
	case exp == 0x1F: // infinity or NaN: the fraction kept, its top bits first
		return math.Float32frombits(sign | 0xFF<<23 | frac<<13)
	case exp != 0: // normal: rebias the exponent from 15 to 127
		return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
	case frac == 0:
		return math.Float32frombits(sign)
	}
	// Subnormal: frac·2^-24, exact in float32.
	v := float32(frac) * (1.0 / (1 << 24))
	if sign != 0 {
		v = -v
	}
	return v
}
