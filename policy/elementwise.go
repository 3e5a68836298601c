package policy

import (
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
)

// Float32 Mul and Add of same-shape operands, or of a tensor and a scalar, are the next largest
// costs of a training step on the Go backend (~20 %, pprof: GELU, layer norm and their
// gradients over the MLP's [batch, tokens, d_ff] activations). Where the CPU has AVX the
// executors below compute them eight lanes at a time; every lane is the same IEEE
// single-precision operation as the backend's Go loop, so results are bit-identical. Other
// shapes and dtypes go to the backend's executor.
func init() {
	if !useAVX {
		return
	}
	for _, op := range []backends.OpType{backends.OpTypeMul, backends.OpTypeAdd} {
		isMul := op == backends.OpTypeMul
		overrideExecutor(op, func(b *simplego.Backend, _ *simplego.Node, in []*simplego.Buffer) (*simplego.Buffer, bool, error) {
			out, ok := execBinaryFloat32(b, in, isMul)
			return out, ok, nil
		})
	}
}

// execBinaryFloat32 runs a float32 Mul (isMul) or Add whose operands have equal shapes, or where
// exactly one operand holds a single value; ok is false for anything else.
func execBinaryFloat32(b *simplego.Backend, in []*simplego.Buffer, isMul bool) (*simplego.Buffer, bool) {
	if len(in) != 2 {
		return nil, false
	}
	ls, err1 := b.BufferShape(in[0])
	rs, err2 := b.BufferShape(in[1])
	la, err3 := b.BufferData(in[0])
	ra, err4 := b.BufferData(in[1])
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return nil, false
	}
	l, ok1 := la.([]float32)
	r, ok2 := ra.([]float32)
	if !ok1 || !ok2 || len(l) != ls.Size() || len(r) != rs.Size() {
		return nil, false
	}
	switch {
	case ls.Equal(rs):
	case len(r) == 1 && len(l) > 1 && (rs.Rank() == 0 || rs.Rank() == ls.Rank()):
	case len(l) == 1 && len(r) > 1 && (ls.Rank() == 0 || ls.Rank() == rs.Rank()):
		l, r, ls = r, l, rs // commutative: the scalar goes right
	default:
		return nil, false
	}
	out := b.NewBuffer(ls.Clone())
	if out == nil {
		return nil, false
	}
	oa, err := b.BufferData(out)
	if err != nil {
		return nil, false
	}
	binaryFloat32(oa.([]float32), l, r, isMul)
	return out, true
}

// binaryFloat32 sets dst = l·r or l+r element-wise; r is either as long as l or a single value.
func binaryFloat32(dst, l, r []float32, isMul bool) {
	n := len(l)
	dst, head := dst[:n], n&^15
	if len(r) == 1 {
		c := r[0]
		if head > 0 {
			if isMul {
				mulScalarF32AVX(&dst[0], &l[0], c, head)
			} else {
				addScalarF32AVX(&dst[0], &l[0], c, head)
			}
		}
		for i := head; i < n; i++ {
			if isMul {
				dst[i] = l[i] * c
			} else {
				dst[i] = l[i] + c
			}
		}
		return
	}
	r = r[:n]
	if head > 0 {
		if isMul {
			mulF32AVX(&dst[0], &l[0], &r[0], head)
		} else {
			addF32AVX(&dst[0], &l[0], &r[0], head)
		}
	}
	for i := head; i < n; i++ {
		if isMul {
			dst[i] = l[i] * r[i]
		} else {
			dst[i] = l[i] + r[i]
		}
	}
}
