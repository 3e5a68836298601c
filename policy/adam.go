package policy

import (
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
)

// adamUpdate builds one Adam step over all parameters and returns the new values of the
// parameters, moments and step counter, plus the global gradient norm. A non-finite loss or
// gradient leaves everything unchanged (ok = false), so one bad minibatch cannot poison the weights.
//
//	g ← g · min(1, clip/‖g‖)            (global-norm clipping)
//	m ← β1·m + (1−β1)·g,  v ← β2·v + (1−β2)·g²
//	θ ← θ − lr · (m/(1−β1^t)) / (√(v/(1−β2^t)) + ε) − lr·wd·θ
func adamUpdate(o OptimConfig, lr *Node, loss *Node, theta, grads, m, v []*Node, step *Node) (
	newTheta, newM, newV []*Node, newStep, gradNorm, ok *Node) {
	g := lr.Graph()
	sq := ScalarZero(g, dtypes.Float32)
	for _, gr := range grads {
		sq = Add(sq, ReduceAllSum(Square(gr)))
	}
	gradNorm = Sqrt(sq)
	ok = LogicalAnd(IsFinite(loss), IsFinite(gradNorm))
	scale := ScalarOne(g, dtypes.Float32)
	if o.GradClip > 0 {
		scale = Min(scale, Div(Const(g, float32(o.GradClip)), AddScalar(gradNorm, 1e-6)))
	}
	t := OnePlus(step)
	bias1 := OneMinus(Pow(Const(g, float32(o.Beta1)), t))
	bias2 := OneMinus(Pow(Const(g, float32(o.Beta2)), t))
	for i := range theta {
		gr := Mul(grads[i], scale)
		mi := Add(MulScalar(m[i], o.Beta1), MulScalar(gr, 1-o.Beta1))
		vi := Add(MulScalar(v[i], o.Beta2), MulScalar(Square(gr), 1-o.Beta2))
		upd := Div(Div(mi, bias1), AddScalar(Sqrt(Div(vi, bias2)), o.Eps))
		if o.WeightDecay > 0 {
			upd = Add(upd, MulScalar(theta[i], o.WeightDecay))
		}
		ti := Sub(theta[i], Mul(lr, upd))
		newTheta = append(newTheta, Where(ok, ti, theta[i]))
		newM = append(newM, Where(ok, mi, m[i]))
		newV = append(newV, Where(ok, vi, v[i]))
	}
	newStep = Where(ok, t, step)
	return newTheta, newM, newV, newStep, gradNorm, ok
}
