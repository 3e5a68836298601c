// Package grpo implements graftrl's group-relative advantage estimators: GRPO and Dr.GRPO
// (trajectory level, ALGORITHMS.md §1) and GiGPO (step groups by anchor state, §2). Each turns a
// rollout.Batch into one scalar advantage per step; a group is the N rollouts of one task, never
// more. The helpers EpisodeAdvantages, GroupNormalizer, Sign and Zeroed are shared with package
// graft, whose GraphGPO and GRAFT add GiGPO's episode term.
package grpo

import (
	"github.com/graftrl/graftrl/advantage"
	"github.com/graftrl/graftrl/rollout"
)

// Options configure GRPO and Dr.GRPO. Decode YAML onto DefaultOptions() so omitted keys keep
// their defaults.
type Options struct {
	// Eps is ε in A_i = (R_i − mean_j R_j)/(std_j R_j + ε); Dr.GRPO does not divide and ignores it.
	// Default 1e-6; must be > 0.
	Eps float64 `yaml:"eps"`
	// Score is what R_i is: "return" (outcome plus step rewards, default) or "outcome".
	Score Score `yaml:"score"`
	// Std is the form of std_j R_j: "sample" (N−1, torch.std's and so TRL's and verl's; default)
	// or "population" (N). Dr.GRPO does not divide and ignores it.
	Std Std `yaml:"std"`
}

// DefaultOptions returns the ALGORITHMS.md defaults: eps 1e-6, score return, std sample.
func DefaultOptions() Options { return Options{Eps: 1e-6, Score: ScoreReturn, Std: StdSample} }

// Validate reports the first option whose value is out of range (an *advantage.OptionError).
func (o Options) Validate() error {
	switch {
	case !(o.Eps > 0) || !finite(o.Eps):
		return advantage.OutOfRange("eps", o.Eps, "finite numbers > 0")
	case !o.Std.Valid():
		return advantage.NotAllowed("std", o.Std, "sample, population")
	case !o.Score.Valid():
		return advantage.NotAllowed("score", o.Score, "return, outcome")
	}
	return nil
}

// GRPO is the trajectory-level baseline: every step of trajectory i gets
//
//	A_i = (R_i − mean_j R_j) / (std_j R_j + ε)        (GRPO)
//	A_i =  R_i − mean_j R_j                           (Dr.GRPO: no std division)
//
// with mean and std over the N valid trajectories of the task's group. std is by default the
// sample standard deviation (divide by N − 1), as torch.std computes it and so as TRL and verl
// normalise, and as GiGPO's and GraphGPO's episode and step terms do by default; `std: population`
// divides by N: the population σ is the smaller, so every A grows by √(N/(N−1)) against the
// default. Truncated rollouts are failures because their Outcome is 0. Estimate keeps no state
// between calls, so one GRPO may serve concurrent callers.
type GRPO struct {
	opts Options
	norm Norm
}

// New returns the GRPO estimator.
func New(opts Options) (*GRPO, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &GRPO{opts: opts, norm: MeanStdNorm}, nil
}

// NewDrGRPO returns Dr.GRPO: GRPO without the division by the group's std (its opts.Eps is unused).
func NewDrGRPO(opts Options) (*GRPO, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &GRPO{opts: opts, norm: MeanNorm}, nil
}

// Name is the registry name of the estimator: "grpo" or "drgrpo".
func (g *GRPO) Name() string {
	if g.norm == MeanNorm {
		return "drgrpo"
	}
	return "grpo"
}

// Estimate returns A_i broadcast to every step of trajectory i, and the diagnostics adv_*, groups
// (groups with a valid trajectory) and groups_all_equal (their share whose scores are all equal,
// which therefore carry no gradient).
func (g *GRPO) Estimate(b *rollout.Batch) (rollout.Advantages, rollout.Diagnostics) {
	adv := rollout.NewAdvantages(b)
	var ae []float64
	groups, equal := 0, 0
	for _, group := range b.Groups() {
		ae = Zeroed(ae, len(group))
		uniform, valid := EpisodeAdvantages(b, group, g.opts.Score, g.norm, g.opts.Std, g.opts.Eps, ae)
		if valid == 0 {
			continue
		}
		groups++
		if uniform {
			equal++
			continue // A ≡ 0: the group has no gradient
		}
		for k, i := range group {
			for t := range adv[i] {
				adv[i][t] = ae[k] // one A_i for every step of trajectory i
			}
		}
	}
	d := rollout.Diagnostics{"groups": float64(groups), "groups_all_equal": rollout.Ratio(equal, groups)}
	rollout.AdvantageStats(adv, d)
	return adv, d
}
