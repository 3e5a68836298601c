package grpo

import (
	"github.com/graftrl/graftrl/advantage"
	"github.com/graftrl/graftrl/rollout"
)

// GiGPOOptions configure GiGPO (Feng et al., arXiv 2505.10978). Decode YAML onto
// DefaultGiGPOOptions() so omitted keys keep their defaults.
type GiGPOOptions struct {
	// Gamma is γ of the discounted step return R^S. Default 0.95; must be in [0, 1].
	Gamma float64 `yaml:"gamma"`
	// Omega is ω, the weight of the step advantage in A = A^E + ω·A^S. Default 1; must be finite.
	Omega float64 `yaml:"omega"`
	// Norm is F_norm for both A^E and A^S: "mean_std_norm" (std + ε, default) or "mean_norm" (1).
	Norm Norm `yaml:"norm"`
	// Std is the form of the std under mean_std_norm, for both A^E and A^S: "sample" (n − 1 over a
	// group's n members, torch.std's, as GRPO's default; default) or "population" (n).
	Std Std `yaml:"std"`
	// Eps is ε added to the std under mean_std_norm. Default 1e-6; must be > 0.
	Eps float64 `yaml:"eps"`
	// Score is the episode score R_i of A^E: "return" (default) or "outcome", as for GRPO.
	Score Score `yaml:"score"`
}

// DefaultGiGPOOptions returns the ALGORITHMS.md defaults: γ 0.95, ω 1, mean_std_norm with the
// sample std, ε 1e-6, score return.
func DefaultGiGPOOptions() GiGPOOptions {
	return GiGPOOptions{Gamma: 0.95, Omega: 1, Norm: MeanStdNorm, Std: StdSample, Eps: 1e-6, Score: ScoreReturn}
}

// Validate reports the first option whose value is out of range (an *advantage.OptionError).
func (o GiGPOOptions) Validate() error {
	switch {
	case !(o.Gamma >= 0 && o.Gamma <= 1):
		return advantage.OutOfRange("gamma", o.Gamma, "[0, 1]")
	case !finite(o.Omega):
		return advantage.OutOfRange("omega", o.Omega, "finite numbers")
	case !(o.Eps > 0) || !finite(o.Eps):
		return advantage.OutOfRange("eps", o.Eps, "finite numbers > 0")
	case !o.Norm.Valid():
		return advantage.NotAllowed("norm", o.Norm, "mean_std_norm, mean_norm")
	case !o.Std.Valid():
		return advantage.NotAllowed("std", o.Std, "sample, population")
	case !o.Score.Valid():
		return advantage.NotAllowed("score", o.Score, "return, outcome")
	}
	return nil
}

// GiGPO adds to GRPO's episode advantage a step advantage computed within anchor-state groups:
// all steps of one task's group whose state keys φ(s_t) are equal compare their discounted
// returns. Both terms divide by the std in the form Std (sample by default, as GRPO); a step
// alone in its anchor group gets A^S = 0. Estimate keeps no state between calls.
type GiGPO struct {
	opts GiGPOOptions
}

// NewGiGPO returns the GiGPO estimator.
func NewGiGPO(opts GiGPOOptions) (*GiGPO, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &GiGPO{opts: opts}, nil
}

// Estimate returns A_{i,t} = A^E_i + ω·A^S_{i,t} and the diagnostics adv_*, groups_all_equal
// (share of groups whose episode scores are all equal), nodes (anchor groups: distinct φ(s_t) per
// task), edges (distinct φ(s_t) → φ(s_{t+1}) pairs per task), edge_instances (steps), merge_ratio
// (steps per anchor group) and singleton_share (share of steps alone in their anchor group).
func (g *GiGPO) Estimate(b *rollout.Batch) (rollout.Advantages, rollout.Diagnostics) {
	o := g.opts
	adv := rollout.NewAdvantages(b)
	ids := make(map[string]int32)      // φ(s) → id, cleared per task (the buckets stay)
	pairs := make(map[uint64]struct{}) // distinct (φ(s_t), φ(s_{t+1})), for the diagnostics
	var anchorSeen []bool              // by id: does φ occur as some φ(s_t)?
	var ae, rs, as []float64
	var anchor []int32
	var z GroupNormalizer
	var groups, equal, steps, nodes, edges, singles int

	intern := func(k string) int32 {
		id, ok := ids[k]
		if !ok {
			id = int32(len(ids))
			ids[k] = id
			anchorSeen = append(anchorSeen, false)
		}
		return id
	}
	for _, group := range b.Groups() {
		ae = Zeroed(ae, len(group))
		uniform, valid := EpisodeAdvantages(b, group, o.Score, o.Norm, o.Std, o.Eps, ae) // A^E_i
		if valid == 0 {
			continue
		}
		groups++
		if uniform {
			equal++
		}
		clear(ids)
		clear(pairs)
		anchorSeen, rs, anchor = anchorSeen[:0], rs[:0], anchor[:0]
		for _, i := range group {
			t := &b.Trajs[i]
			if t.Err != "" {
				continue
			}
			n := len(t.Steps)
			base := len(rs)
			rs = append(rs, make([]float64, n)...)
			// R^S_{i,t} = Σ_k γ^k r_{i,t+k}, computed backwards; the outcome R_i is part of the
			// last step's reward.
			next := 0.0
			for k := n - 1; k >= 0; k-- {
				r := t.Steps[k].Reward
				if k == n-1 {
					r += t.Outcome
				}
				next = r + o.Gamma*next
				rs[base+k] = next
			}
			var v int32
			for k := range t.Steps {
				s := &t.Steps[k]
				u := v // φ(s_t) is usually the previous φ(s_{t+1}): skip the hash then
				if k == 0 || s.Key != t.Steps[k-1].NextKey {
					u = intern(s.Key)
				}
				if !anchorSeen[u] {
					anchorSeen[u] = true
					nodes++
				}
				anchor = append(anchor, u)
				v = intern(s.NextKey)
				pairs[uint64(uint32(u))<<32|uint64(uint32(v))] = struct{}{}
			}
		}
		edges += len(pairs)
		steps += len(rs)
		// A^S_{i,t} = (R^S_{i,t} − mean_G)/F_norm within the anchor group G of φ(s_t); singletons 0.
		as = Zeroed(as, len(rs))
		singles += z.Normalize(rs, anchor, len(ids), o.Norm, o.Std, o.Eps, 0, SingletonZero, as)
		e := 0
		for k, i := range group {
			if b.Trajs[i].Err != "" {
				continue
			}
			for t := range adv[i] {
				adv[i][t] = ae[k] + o.Omega*as[e] // A = A^E + ω·A^S
				e++
			}
		}
	}
	d := rollout.Diagnostics{
		"groups_all_equal": rollout.Ratio(equal, groups),
		"nodes":            float64(nodes),
		"edges":            float64(edges),
		"edge_instances":   float64(steps),
		"merge_ratio":      rollout.Ratio(steps, nodes),
		"singleton_share":  rollout.Ratio(singles, steps),
	}
	rollout.AdvantageStats(adv, d)
	return adv, d
}
