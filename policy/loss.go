package policy

import (
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/graftrl/graftrl/policy/spec"
)

// lossTerms are the scalar outputs of the loss graph.
type lossTerms struct {
	total, pg, entropy, kl, approxKL, clipFrac *Node
}

// tokenLogProbs returns log π(target) [B,T] and the entropy of π [B,T] from logits [B,T,V]:
// with s = logits − max and Z = Σ e^s, log π(target) = s[target] − log Z (the target's shifted
// logit is gathered rather than picked with a one-hot product) and H = log Z − Σ e^s·s / Z, which
// is −Σ π·log π rewritten so that the [B,T,V] work is one exponential and one product.
func tokenLogProbs(logits, targets *Node, vocab int) (logp, entropy *Node) {
	g := logits.Graph()
	dims := logits.Shape().Dimensions
	rows := logits.Shape().Size() / vocab
	peak := StopGradient(ReduceMax(logits, -1))
	shifted := Sub(logits, broadcastLast(peak, dims))
	e := Exp(shifted)
	z := sumLast(e)
	logZ := Log(z)
	// Flat index of each position's target: row·V + target.
	row := Reshape(Iota(g, shapes.Make(dtypes.Int32, rows), 0), targets.Shape().Dimensions...)
	idx := Add(MulScalar(row, vocab), ConvertDType(targets, dtypes.Int32))
	picked := Gather(Reshape(shifted, rows*vocab, 1), InsertAxes(idx, -1)) // [B,T,1]
	logp = Sub(Reshape(picked, logZ.Shape().Dimensions...), logZ)
	entropy = Sub(logZ, Div(sumLast(Mul(e, shifted)), z))
	return logp, entropy
}

// clippedSurrogate is ℓ = −min(ρ·Â, clip(ρ, 1−ε_low, 1+ε_high)·Â), with the dual clip
// ℓ ← min(ℓ, −c·Â) where Â < 0 when c > 0. It also returns the indicator of clipped ratios.
func clippedSurrogate(l LossConfig, ratio, adv *Node) (loss, clipped *Node) {
	clippedRatio := ClipScalar(ratio, 1-l.ClipLow, 1+l.ClipHigh)
	loss = Neg(Min(Mul(ratio, adv), Mul(clippedRatio, adv)))
	if l.DualClip > 0 {
		dual := Min(loss, MulScalar(Neg(adv), l.DualClip))
		loss = Where(LessThan(adv, ZerosLike(adv)), dual, loss)
	}
	clipped = ConvertDType(NotEqual(ratio, clippedRatio), dtypes.Float32)
	return loss, clipped
}

// klPenalty is the per-token KL estimate for x = log π − log π_ref (k3 clamped to [−10, 10]).
func klPenalty(kind string, x *Node) *Node {
	switch kind {
	case spec.KLk1:
		return x
	case spec.KLk2:
		return MulScalar(Square(x), 0.5)
	default:
		return ClipScalar(Sub(Add(Exp(Neg(x)), x), OnesLike(x)), -10, 10)
	}
}

// lossTermsOf completes an objective's outputs from its policy term pg, clipped share and approximate
// KL: the weighted entropy, total = pg − coef·entropy, and the KL penalty (addKL).
func lossTermsOf(l LossConfig, pg, clipFrac, approxKL, logp, entropy, weight, refLogp *Node) lossTerms {
	t := lossTerms{pg: pg, entropy: ReduceAllSum(Mul(weight, entropy)), approxKL: approxKL, clipFrac: clipFrac}
	t.total = Sub(t.pg, MulScalar(t.entropy, l.EntropyCoef))
	addKL(l, &t, logp, weight, refLogp)
	return t
}

// addKL sets t.kl to the weighted per-token KL to the reference policy and adds β·KL to the
// total when KL is on (t.kl is 0 otherwise). Inactive positions (weight 0) contribute nothing.
func addKL(l LossConfig, t *lossTerms, logp, weight, refLogp *Node) {
	t.kl = ScalarZero(logp.Graph(), dtypes.Float32)
	if l.KL == spec.KLNone || refLogp == nil {
		return
	}
	active := GreaterThan(weight, ZerosLike(weight))
	x := Where(active, Sub(logp, refLogp), ZerosLike(logp))
	t.kl = ReduceAllSum(Mul(weight, klPenalty(l.KL, x)))
	t.total = Add(t.total, MulScalar(t.kl, l.KLCoef))
}

// tokenLoss builds the per-token objective. weight [B,T] carries the aggregation (and is 0 on
// context and padding tokens, which therefore never enter the loss, the KL or the entropy).
func tokenLoss(l LossConfig, logp, entropy, oldLogp, adv, weight, refLogp *Node) lossTerms {
	active := GreaterThan(weight, ZerosLike(weight))
	// Padding rows may hold anything: keep exp() finite there.
	logRatio := Where(active, Sub(logp, oldLogp), ZerosLike(logp))
	ratio := Exp(logRatio)
	pgTok, clipped := clippedSurrogate(l, ratio, adv)
	return lossTermsOf(l, ReduceAllSum(Mul(weight, pgTok)), ReduceAllSum(Mul(weight, clipped)),
		ReduceAllSum(Mul(weight, Sub(Sub(ratio, OnesLike(ratio)), logRatio))), logp, entropy, weight, refLogp)
}

// crossEntropyLoss is the supervised objective −Σ w·log π(target) over the weighted (action)
// tokens; the entropy and KL terms keep their per-token form with the token weights.
func crossEntropyLoss(l LossConfig, logp, entropy, weight, refLogp *Node) lossTerms {
	zero := ScalarZero(logp.Graph(), dtypes.Float32)
	return lossTermsOf(l, Neg(ReduceAllSum(Mul(weight, logp))), zero, zero, logp, entropy, weight, refLogp)
}

// stepLoss builds the step-level "GRPO-C" objective: per step, w = exp(mean over the step's tokens
// of log ρ), loss = −min(w·Â, clip(w)·Â) averaged over steps with stepWeight [B,S]. stepOf [B,T]
// holds each target token's step index (−1 for context tokens); stepAdv is Â per step [B,S].
// Entropy and KL keep their per-token form with the token weights.
func stepLoss(l LossConfig, logp, entropy, oldLogp, weight, refLogp, stepOf, stepAdv, stepWeight *Node) lossTerms {
	steps := stepAdv.Shape().Dimensions[1]
	active := GreaterThan(weight, ZerosLike(weight))
	logRatio := Where(active, Sub(logp, oldLogp), ZerosLike(logp))
	seg := OneHot(stepOf, steps, dtypes.Float32)                               // [B,T,S]
	count := ReduceSum(seg, 1)                                                 // [B,S]
	sumLR := DotGeneral(logRatio, []int{1}, []int{0}, seg, []int{1}, []int{0}) // [B,S]
	meanLR := Div(sumLR, Max(count, OnesLike(count)))                          // mean log ρ per step
	w := Exp(meanLR)                                                           // geometric-mean ratio
	pgStep, clipped := clippedSurrogate(l, w, stepAdv)                         // [B,S]
	ratio := Exp(logRatio)
	return lossTermsOf(l, ReduceAllSum(Mul(stepWeight, pgStep)), ReduceAllSum(Mul(stepWeight, clipped)),
		ReduceAllSum(Mul(weight, Sub(Sub(ratio, OnesLike(ratio)), logRatio))), logp, entropy, weight, refLogp)
}
