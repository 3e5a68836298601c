package policy

import (
	"fmt"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// Loss aggregations (ALGORITHMS.md §5).
const (
	AggTokenMean          = "token-mean"              // Σ ℓ / #action tokens in the minibatch (default)
	AggSeqMeanTokenMean   = "seq-mean-token-mean"     // mean over rows of the per-row token mean (original GRPO)
	AggSeqMeanTokenSumNrm = "seq-mean-token-sum-norm" // Σ ℓ / (#rows · constant) (Dr.GRPO)
)

// Objectives: the per-token clipped surrogate, the step-level "GRPO-C" surrogate, or the
// token-level cross-entropy of supervised fine-tuning (advantages and old log-probs unused).
const (
	ObjectiveToken        = "token"
	ObjectiveStep         = "step"
	ObjectiveCrossEntropy = "cross-entropy"
)

// KL estimators of KL(π_θ ‖ π_ref) per token, x = log π − log π_ref.
const (
	KLNone = "none"
	KLk1   = "k1" // x
	KLk2   = "k2" // x²/2
	KLk3   = "k3" // e^{−x} + x − 1
)

// LossConfig configures the clipped policy-gradient loss of ALGORITHMS.md §5.
type LossConfig struct {
	// ClipLow is ε_low: ratios below 1−ε_low are clipped (default 0.2).
	ClipLow float64 `yaml:"clip_low" json:"clip_low"`
	// ClipHigh is ε_high: ratios above 1+ε_high are clipped (default 0.2; DAPO's clip-higher is 0.28).
	ClipHigh float64 `yaml:"clip_high" json:"clip_high"`
	// DualClip is c of the dual clip for Â < 0 (ℓ ← min(ℓ, −c·Â)); 0 turns it off (default), 3 is usual.
	DualClip float64 `yaml:"dual_clip" json:"dual_clip"`
	// Aggregation is token-mean (default), seq-mean-token-mean or seq-mean-token-sum-norm.
	Aggregation string `yaml:"aggregation" json:"aggregation"`
	// NormConstant is the constant divisor of seq-mean-token-sum-norm (0 means policy.max_len).
	NormConstant float64 `yaml:"norm_constant" json:"norm_constant"`
	// Objective is token (per-token ratios, default), step (GRPO-C: one geometric-mean ratio per
	// step) or cross-entropy (−Σ w·log π(target): supervised fine-tuning on demonstrations).
	Objective string `yaml:"objective" json:"objective"`
	// EntropyCoef weights the entropy bonus (0 turns it off).
	EntropyCoef float64 `yaml:"entropy_coef" json:"entropy_coef"`
	// KL is the KL estimator to a frozen reference policy: none (default), k1, k2 or k3.
	KL string `yaml:"kl" json:"kl"`
	// KLCoef is β (default 0.01), used when KL is not none.
	KLCoef float64 `yaml:"kl_coef" json:"kl_coef"`
}

// DefaultLossConfig returns the defaults of ALGORITHMS.md §5.
func DefaultLossConfig() LossConfig {
	return LossConfig{ClipLow: 0.2, ClipHigh: 0.2, Aggregation: AggTokenMean, Objective: ObjectiveToken,
		KL: KLNone, KLCoef: 0.01}
}

// Validate checks the loss options; errors name the key under update.
func (l LossConfig) Validate() error {
	switch {
	case !(l.ClipLow > 0 && l.ClipLow < 1):
		return fmt.Errorf("update.clip_low: %g is out of range (allowed (0, 1))", l.ClipLow)
	case !(l.ClipHigh > 0 && l.ClipHigh <= 10):
		return fmt.Errorf("update.clip_high: %g is out of range (allowed (0, 10])", l.ClipHigh)
	case l.DualClip != 0 && !(l.DualClip > 1 && l.DualClip <= 100):
		return fmt.Errorf("update.dual_clip: %g is out of range (allowed 0 = off, or (1, 100])", l.DualClip)
	case l.Aggregation != AggTokenMean && l.Aggregation != AggSeqMeanTokenMean && l.Aggregation != AggSeqMeanTokenSumNrm:
		return fmt.Errorf("update.aggregation: %q is not allowed (allowed: %s, %s, %s)", l.Aggregation,
			AggTokenMean, AggSeqMeanTokenMean, AggSeqMeanTokenSumNrm)
	case !(l.NormConstant >= 0 && l.NormConstant <= 1e9):
		return fmt.Errorf("update.norm_constant: %g is out of range (allowed 0 = max_len, or > 0)", l.NormConstant)
	case l.Objective != ObjectiveToken && l.Objective != ObjectiveStep && l.Objective != ObjectiveCrossEntropy:
		return fmt.Errorf("update.objective: %q is not allowed (allowed: %s, %s, %s)", l.Objective,
			ObjectiveToken, ObjectiveStep, ObjectiveCrossEntropy)
	case !(l.EntropyCoef >= 0 && l.EntropyCoef <= 10):
		return fmt.Errorf("update.entropy_coef: %g is out of range (allowed [0, 10])", l.EntropyCoef)
	case l.KL != KLNone && l.KL != KLk1 && l.KL != KLk2 && l.KL != KLk3:
		return fmt.Errorf("update.kl: %q is not allowed (allowed: none, k1, k2, k3)", l.KL)
	case !(l.KLCoef >= 0 && l.KLCoef <= 100):
		return fmt.Errorf("update.kl_coef: %g is out of range (allowed [0, 100])", l.KLCoef)
	}
	return nil
}

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
	case KLk1:
		return x
	case KLk2:
		return MulScalar(Square(x), 0.5)
	default:
		return ClipScalar(Sub(Add(Exp(Neg(x)), x), OnesLike(x)), -10, 10)
	}
}

// terms completes an objective's outputs from its policy term pg, clipped share and approximate
// KL: the weighted entropy, total = pg − coef·entropy, and the KL penalty (addKL).
func (l LossConfig) terms(pg, clipFrac, approxKL, logp, entropy, weight, refLogp *Node) lossTerms {
	t := lossTerms{pg: pg, entropy: ReduceAllSum(Mul(weight, entropy)), approxKL: approxKL, clipFrac: clipFrac}
	t.total = Sub(t.pg, MulScalar(t.entropy, l.EntropyCoef))
	addKL(l, &t, logp, weight, refLogp)
	return t
}

// addKL sets t.kl to the weighted per-token KL to the reference policy and adds β·KL to the
// total when KL is on (t.kl is 0 otherwise). Inactive positions (weight 0) contribute nothing.
func addKL(l LossConfig, t *lossTerms, logp, weight, refLogp *Node) {
	t.kl = ScalarZero(logp.Graph(), dtypes.Float32)
	if l.KL == KLNone || refLogp == nil {
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
	return l.terms(ReduceAllSum(Mul(weight, pgTok)), ReduceAllSum(Mul(weight, clipped)),
		ReduceAllSum(Mul(weight, Sub(Sub(ratio, OnesLike(ratio)), logRatio))), logp, entropy, weight, refLogp)
}

// crossEntropyLoss is the supervised objective −Σ w·log π(target) over the weighted (action)
// tokens; the entropy and KL terms keep their per-token form with the token weights.
func crossEntropyLoss(l LossConfig, logp, entropy, weight, refLogp *Node) lossTerms {
	zero := ScalarZero(logp.Graph(), dtypes.Float32)
	return l.terms(Neg(ReduceAllSum(Mul(weight, logp))), zero, zero, logp, entropy, weight, refLogp)
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
	return l.terms(ReduceAllSum(Mul(stepWeight, pgStep)), ReduceAllSum(Mul(stepWeight, clipped)),
		ReduceAllSum(Mul(weight, Sub(Sub(ratio, OnesLike(ratio)), logRatio))), logp, entropy, weight, refLogp)
}

// AggregationWeights returns the per-token weights w[b·T+t] such that the minibatch loss is Σ w·ℓ:
// mask[i] marks action tokens. token-mean: 1/#tokens; seq-mean-token-mean: 1/(#rows · row tokens),
// counting only rows with action tokens; seq-mean-token-sum-norm: 1/(#rows · normConst).
func AggregationWeights(agg string, mask []bool, rows, length int, normConst float64) []float32 {
	w := make([]float32, rows*length)
	total, nonEmpty := 0, 0
	perRow := make([]int, rows)
	for b := range rows {
		for t := range length {
			if mask[b*length+t] {
				perRow[b]++
			}
		}
		total += perRow[b]
		if perRow[b] > 0 {
			nonEmpty++
		}
	}
	if total == 0 {
		return w
	}
	for b := range rows {
		for t := range length {
			if !mask[b*length+t] {
				continue
			}
			switch agg {
			case AggSeqMeanTokenMean:
				w[b*length+t] = float32(1 / (float64(nonEmpty) * float64(perRow[b])))
			case AggSeqMeanTokenSumNrm:
				w[b*length+t] = float32(1 / (float64(nonEmpty) * normConst))
			default:
				w[b*length+t] = float32(1 / float64(total))
			}
		}
	}
	return w
}
