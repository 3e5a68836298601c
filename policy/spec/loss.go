package spec

import "fmt"

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
