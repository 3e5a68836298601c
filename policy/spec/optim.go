package spec

import "fmt"

// OptimConfig configures Adam with gradient-norm clipping.
type OptimConfig struct {
	// LR is the learning rate (default 1e-3).
	LR float64 `yaml:"lr" json:"lr"`
	// Beta1 and Beta2 are Adam's moment decays (0.9, 0.999).
	Beta1 float64 `yaml:"beta1" json:"beta1"`
	Beta2 float64 `yaml:"beta2" json:"beta2"`
	// Eps is Adam's ε (1e-8).
	Eps float64 `yaml:"eps" json:"eps"`
	// GradClip is the maximum global gradient norm (0 turns clipping off; default 1).
	GradClip float64 `yaml:"grad_clip" json:"grad_clip"`
	// WeightDecay is decoupled (AdamW) weight decay (default 0).
	WeightDecay float64 `yaml:"weight_decay" json:"weight_decay"`
}

// DefaultOptimConfig returns Adam 1e-3 with gradient norm clipped at 1.
func DefaultOptimConfig() OptimConfig {
	return OptimConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, GradClip: 1}
}

// Validate checks the optimizer options; errors name the key under optim.
func (o OptimConfig) Validate() error {
	switch {
	case !(o.LR > 0 && o.LR <= 1):
		return fmt.Errorf("optim.lr: %g is out of range (allowed (0, 1])", o.LR)
	case !(o.Beta1 >= 0 && o.Beta1 < 1):
		return fmt.Errorf("optim.beta1: %g is out of range (allowed [0, 1))", o.Beta1)
	case !(o.Beta2 >= 0 && o.Beta2 < 1):
		return fmt.Errorf("optim.beta2: %g is out of range (allowed [0, 1))", o.Beta2)
	case !(o.Eps > 0 && o.Eps <= 1):
		return fmt.Errorf("optim.eps: %g is out of range (allowed (0, 1])", o.Eps)
	case !(o.GradClip >= 0 && o.GradClip <= 1e6):
		return fmt.Errorf("optim.grad_clip: %g is out of range (allowed 0 = off, or (0, 1e6])", o.GradClip)
	case !(o.WeightDecay >= 0 && o.WeightDecay < 1):
		return fmt.Errorf("optim.weight_decay: %g is out of range (allowed [0, 1))", o.WeightDecay)
	}
	return nil
}
