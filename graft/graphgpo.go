package graft

import (
	"math"

	"github.com/graftrl/graftrl/advantage"
	"github.com/graftrl/graftrl/grpo"
	"github.com/graftrl/graftrl/rollout"
)

// goalScale is the 10 of GraphGPO's step return g_t = 10·γ_g^d.
const goalScale = 10

// GraphGPOOptions configure GraphGPO (arXiv 2605.26684). Decode YAML onto
// DefaultGraphGPOOptions() so omitted keys keep their defaults.
type GraphGPOOptions struct {
	// GammaG is γ_g of g_t = 10·γ_g^{d(s_{t+1})}. Default 0.1; must be in (0, 1].
	GammaG float64 `yaml:"gamma_g"`
	// NormalizeDistance uses g_t = 10·γ_g^{d(s_{t+1}) − d(s_t) + 1}, the progress a step makes,
	// instead of the distance it reaches. Default false.
	NormalizeDistance bool `yaml:"normalize_distance"`
	// Norm is F_norm for both A^E and A^S: "mean_std_norm" (default) or "mean_norm".
	Norm grpo.Norm `yaml:"norm"`
	// Std is the form of the std under mean_std_norm, for both A^E and A^S: "sample" (n − 1 over a
	// group's n members, torch.std's, as GRPO's default; default) or "population" (n).
	Std grpo.Std `yaml:"std"`
	// Eps is ε added to the std under mean_std_norm. Default 1e-6; must be > 0.
	Eps float64 `yaml:"eps"`
	// EpisodeWeight weights GiGPO's episode advantage A^E. Default 1; must be finite.
	EpisodeWeight float64 `yaml:"episode_weight"`
	// StepWeight weights the step advantage A^S. Default 1; must be finite.
	StepWeight float64 `yaml:"step_weight"`
	// Score is the episode score of A^E: "return" (default) or "outcome".
	Score grpo.Score `yaml:"score"`
}

// DefaultGraphGPOOptions returns the ALGORITHMS.md defaults: γ_g 0.1, distances not normalised,
// mean_std_norm with the sample std, ε 1e-6, weights 1 : 1, score return.
func DefaultGraphGPOOptions() GraphGPOOptions {
	return GraphGPOOptions{GammaG: 0.1, Norm: grpo.MeanStdNorm, Std: grpo.StdSample, Eps: 1e-6,
		EpisodeWeight: 1, StepWeight: 1, Score: grpo.ScoreReturn}
}

// Validate reports the first option whose value is out of range (an *advantage.OptionError).
func (o GraphGPOOptions) Validate() error {
	switch {
	case !(o.GammaG > 0 && o.GammaG <= 1):
		return advantage.OutOfRange("gamma_g", o.GammaG, "(0, 1]")
	case !o.Norm.Valid():
		return advantage.NotAllowed("norm", o.Norm, "mean_std_norm, mean_norm")
	case !o.Std.Valid():
		return advantage.NotAllowed("std", o.Std, "sample, population")
	case !(o.Eps > 0) || math.IsInf(o.Eps, 0):
		return advantage.OutOfRange("eps", o.Eps, "finite numbers > 0")
	case math.IsNaN(o.EpisodeWeight) || math.IsInf(o.EpisodeWeight, 0):
		return advantage.OutOfRange("episode_weight", o.EpisodeWeight, "finite numbers")
	case math.IsNaN(o.StepWeight) || math.IsInf(o.StepWeight, 0):
		return advantage.OutOfRange("step_weight", o.StepWeight, "finite numbers")
	case !o.Score.Valid():
		return advantage.NotAllowed("score", o.Score, "return, outcome")
	}
	return nil
}

// GraphGPO credits a step by how close to the goal it leads, on the task's graph: the shortest
// observed path length d to a virtual GOAL. It is the Bellman optimality counterpart of GRAFT:
// an optimistic, best-observed-continuation value. Its step term A^S normalises g_t within the
// groups of steps with equal φ(s_t) (a step alone in its group gets 0) and its episode term A^E is
// GiGPO's; both divide by the std in the form Std (sample by default, as GRPO).
//
// d(s_{t+1}) of a trajectory's last step is d(GOAL) = 0 when the trajectory succeeded (its last
// transition is redirected there) and the d of its real last state otherwise, so a failed
// rollout's last step is judged like any other step into that state. Estimate keeps no state
// between calls.
type GraphGPO struct {
	opts GraphGPOOptions
}

// NewGraphGPO returns the GraphGPO estimator.
func NewGraphGPO(opts GraphGPOOptions) (*GraphGPO, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &GraphGPO{opts: opts}, nil
}

// Estimate returns A = EpisodeWeight·A^E + StepWeight·A^S per step and the diagnostics adv_*,
// nodes, edges (distinct (u, v) pairs, GOAL included), edge_instances, merge_ratio,
// singleton_share (share of steps alone in their φ(s_t) group), groups_all_equal (of A^E),
// groups_no_success (share of tasks where no transition reached GOAL, so d ≡ 1) and
// unreachable_share (share of nodes of the other tasks that cannot reach GOAL).
func (x *GraphGPO) Estimate(b *rollout.Batch) (rollout.Advantages, rollout.Diagnostics) {
	o := &x.opts
	adv := rollout.NewAdvantages(b)
	g := newGraph()
	var z grpo.GroupNormalizer
	var d []int32
	var gt, as, ae []float64
	var mark []int32
	var groups, equal, noGoal, nodes, goalNodes, unreachable, edges, steps, singles int
	for _, group := range b.Groups() {
		ae = grpo.Zeroed(ae, len(group))
		uniform, valid := grpo.EpisodeAdvantages(b, group, o.Score, o.Norm, o.Std, o.Eps, ae) // A^E_i
		if valid == 0 {
			continue
		}
		groups++
		if uniform {
			equal++
		}
		g.build(b, group, routing{goal: true})
		var ne int
		ne, mark = g.distinctEdges(mark)
		nodes += g.real
		edges += ne
		steps += len(g.src)

		// d(s): hops to GOAL by reverse BFS; d_max + 1 where GOAL is out of reach; 1 everywhere
		// when no rollout reached GOAL.
		d = grpo.Zeroed(d, g.nodes())
		if g.goal < 0 {
			noGoal++
			for u := range d {
				d[u] = 1
			}
		} else {
			g.reverseBFS(func(u int32) bool { return u == g.goal })
			var dmax int32
			for _, du := range g.dist {
				dmax = max(dmax, du)
			}
			goalNodes += g.real
			for u, du := range g.dist {
				if du < 0 {
					du = dmax + 1
					unreachable++
				}
				d[u] = du
			}
		}

		// g_t = 10·γ_g^{d(s_{t+1})}, or 10·γ_g^{d(s_{t+1}) − d(s_t) + 1} with normalize_distance.
		gt = grpo.Zeroed(gt, len(g.src))
		for e := range g.src {
			k := d[g.dst[e]]
			if o.NormalizeDistance {
				k += 1 - d[g.src[e]]
			}
			gt[e] = goalScale * math.Pow(o.GammaG, float64(k))
		}
		// A^S: g_t normalised within the group of steps sharing φ(s_t); singletons 0.
		as = grpo.Zeroed(as, len(g.src))
		singles += z.Normalize(gt, g.src, g.nodes(), o.Norm, o.Std, o.Eps, 0, grpo.SingletonZero, as)

		j := 0
		for k, i := range group {
			if b.Trajs[i].Err != "" {
				continue
			}
			e := g.first[j]
			for t := range adv[i] {
				adv[i][t] = o.EpisodeWeight*ae[k] + o.StepWeight*as[e]
				e++
			}
			j++
		}
	}
	diag := rollout.Diagnostics{
		"nodes":             float64(nodes),
		"edges":             float64(edges),
		"edge_instances":    float64(steps),
		"merge_ratio":       rollout.Ratio(steps, nodes),
		"singleton_share":   rollout.Ratio(singles, steps),
		"groups_all_equal":  rollout.Ratio(equal, groups),
		"groups_no_success": rollout.Ratio(noGoal, groups),
		"unreachable_share": rollout.Ratio(unreachable, goalNodes),
	}
	rollout.AdvantageStats(adv, diag)
	return adv, diag
}
