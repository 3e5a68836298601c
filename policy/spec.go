package policy

import "github.com/graftrl/graftrl/policy/spec"

// Config is the architecture of the policy (spec.Config).
type Config = spec.Config

// LossConfig configures the clipped policy-gradient loss (spec.LossConfig).
type LossConfig = spec.LossConfig

// OptimConfig configures Adam with gradient-norm clipping (spec.OptimConfig).
type OptimConfig = spec.OptimConfig
