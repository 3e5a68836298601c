package graft

import (
	"math"

	"github.com/graftrl/graftrl/advantage"
	"github.com/graftrl/graftrl/grpo"
	"github.com/graftrl/graftrl/rollout"
)

// Mode is how GRAFT turns graph values into a step advantage.
type Mode string

const (
	// ModePath is GAE along the trajectory's own path with graph values (default):
	// A_t = Σ_k (γλ)^k δ_{t+k}; λ = 1 gives the discounted return from t minus V(s_t).
	ModePath Mode = "path"
	// ModeTD is the one-step TD advantage of the paper's Eq. 8 (λ = 0): A_t = δ_t.
	ModeTD Mode = "td"
	// ModePaper is the paper's Graph GAE (Eq. 9–10): A_t plus the discounted mean TD advantage of
	// the edge instances reachable from a_t in exactly k hops, k ≥ 1.
	ModePaper Mode = "paper"
)

// Weighting is the empirical policy π̂(a|u) that averages the outgoing edges of a node in V.
type Weighting string

const (
	// WeightCount weights each edge instance equally: π̂(a|u) = count(u,a)/count(u) (default).
	WeightCount Weighting = "count"
	// WeightUniform weights each distinct action (distinct action text at u) equally; an action's
	// value is the count-weighted mean of its instances' r + γV(v).
	WeightUniform Weighting = "uniform"
)

// Truncation is where a truncated trajectory's last transition leads.
type Truncation string

const (
	// TruncSinkZero ends it in ⊥(0), as a failure (default).
	TruncSinkZero Truncation = "sink_zero"
	// TruncBootstrap ends it at its real last state, whose graph value stands in for the unseen
	// future (0 when that state was never left by any rollout).
	TruncBootstrap Truncation = "bootstrap"
)

// Options configure GRAFT. Decode YAML onto DefaultOptions() so omitted keys keep their defaults
// (use_step_rewards and normalize default to true).
type Options struct {
	// Gamma is the discount γ of the graph values and the advantage. Default 0.99; must be in
	// (0, 1): γ < 1 is what makes cycles converge and bounds the sweep cap.
	Gamma float64 `yaml:"gamma"`
	// Lambda is λ of the path and paper modes (td uses 0). Default 0.95; must be in [0, 1].
	Lambda float64 `yaml:"lambda"`
	// Mode is the advantage form: "path" (default), "td" or "paper".
	Mode Mode `yaml:"mode"`
	// PolicyWeighting is "count" (default) or "uniform".
	PolicyWeighting Weighting `yaml:"policy_weighting"`
	// Truncation is "sink_zero" (default) or "bootstrap".
	Truncation Truncation `yaml:"truncation"`
	// UseStepRewards puts the per-step rewards r_e (the invalid-action penalty …) on the edges, in
	// V and in the advantage alike; false drops them from both. Default true.
	UseStepRewards bool `yaml:"use_step_rewards"`
	// Normalize applies the per-node normalisation of Eq. 11. Default true.
	Normalize bool `yaml:"normalize"`
	// Eps is ε of Eq. 11 (and of the episode term's std). A node's lone advantage with |A| ≤ ε
	// counts as 0 rather than sign(A) = ±1: it is solver noise. Default 1e-6; must be > 0.
	// A node whose advantages agree to σ_u ≤ 1e-9 gets Â = 0 whatever ε.
	Eps float64 `yaml:"eps"`
	// Tol is the Gauss–Seidel stopping threshold on max|ΔV|; it also sets the sweep cap
	// ⌈log tol / log γ⌉ + 50 and the hop cap of the paper mode. It is not itself a bound on the
	// error of V: a sweep is a γ-contraction, so V is within γ/(1−γ)·tol of the exact solution
	// (9.9e-7 at the defaults). Default 1e-8; must be > 0.
	Tol float64 `yaml:"tol"`
	// EpisodeWeight adds EpisodeWeight·A^E, GiGPO's episode advantage, to the normalised step
	// advantage. Default 0 (no mixing, as in the paper); must be finite.
	EpisodeWeight float64 `yaml:"episode_weight"`
	// EpisodeNorm is F_norm of A^E: "mean_std_norm" (default) or "mean_norm".
	EpisodeNorm grpo.Norm `yaml:"episode_norm"`
	// EpisodeStd is the form of A^E's std under mean_std_norm: "sample" (N − 1, as GRPO and
	// GiGPO; default) or "population" (N). Eq. 11's per-node σ_u is the population one whatever
	// this says.
	EpisodeStd grpo.Std `yaml:"episode_std"`
	// Score is the episode score of A^E: "return" (default) or "outcome".
	Score grpo.Score `yaml:"score"`
}

// DefaultOptions returns the ALGORITHMS.md defaults: γ 0.99, λ 0.95, mode path, count weighting,
// truncation sink_zero, step rewards on, normalisation on, ε 1e-6, tol 1e-8, episode weight 0
// (its A^E: mean_std_norm with the sample std, score return).
func DefaultOptions() Options {
	return Options{
		Gamma: 0.99, Lambda: 0.95, Mode: ModePath, PolicyWeighting: WeightCount,
		Truncation: TruncSinkZero, UseStepRewards: true, Normalize: true, Eps: 1e-6, Tol: 1e-8,
		EpisodeNorm: grpo.MeanStdNorm, EpisodeStd: grpo.StdSample, Score: grpo.ScoreReturn,
	}
}

// flatSigma is the spread σ_u at or below which the advantages leaving a node count as equal and
// all get Â = 0 in Eq. 11 (ALGORITHMS.md §4): advantages that differ only by rounding would
// otherwise be divided by σ_u + ε ≈ ε and come out of order σ_u/ε instead of 0.
const flatSigma = 1e-9

// Validate reports the first option whose value is out of range (an *advantage.OptionError).
func (o Options) Validate() error {
	switch {
	case !(o.Gamma > 0 && o.Gamma < 1):
		return advantage.OutOfRange("gamma", o.Gamma, "(0, 1)")
	case !(o.Lambda >= 0 && o.Lambda <= 1):
		return advantage.OutOfRange("lambda", o.Lambda, "[0, 1]")
	case o.Mode != ModePath && o.Mode != ModeTD && o.Mode != ModePaper:
		return advantage.NotAllowed("mode", o.Mode, "path, td, paper")
	case o.PolicyWeighting != WeightCount && o.PolicyWeighting != WeightUniform:
		return advantage.NotAllowed("policy_weighting", o.PolicyWeighting, "count, uniform")
	case o.Truncation != TruncSinkZero && o.Truncation != TruncBootstrap:
		return advantage.NotAllowed("truncation", o.Truncation, "sink_zero, bootstrap")
	case !(o.Eps > 0) || math.IsInf(o.Eps, 0):
		return advantage.OutOfRange("eps", o.Eps, "finite numbers > 0")
	case !(o.Tol > 0) || math.IsInf(o.Tol, 0):
		return advantage.OutOfRange("tol", o.Tol, "finite numbers > 0")
	case math.IsNaN(o.EpisodeWeight) || math.IsInf(o.EpisodeWeight, 0):
		return advantage.OutOfRange("episode_weight", o.EpisodeWeight, "finite numbers")
	case !o.EpisodeNorm.Valid():
		return advantage.NotAllowed("episode_norm", o.EpisodeNorm, "mean_std_norm, mean_norm")
	case !o.EpisodeStd.Valid():
		return advantage.NotAllowed("episode_std", o.EpisodeStd, "sample, population")
	case !o.Score.Valid():
		return advantage.NotAllowed("score", o.Score, "return, outcome")
	}
	return nil
}

// sweepCap is the Gauss–Seidel sweep limit ⌈log tol / log γ⌉ + 50: by then γ^sweeps < tol, the
// contraction bound of a discounted system, with a margin.
func (o Options) sweepCap() int {
	return int(math.Max(0, math.Ceil(math.Log(o.Tol)/math.Log(o.Gamma)))) + 50
}

// GRAFT estimates step advantages from the Bellman expectation of the empirical policy on each
// task's trajectory graph (Yao et al., arXiv 2609.28963). Per task:
//
//	V(u)   = Σ_{e=(u→v)} π̂_e·(r_e + γ·V(v)),  V(⊥(R)) = R      Gauss–Seidel, sinks outwards
//	δ_t    = r_t + γ·V(φ(s_{t+1})) − V(φ(s_t))                  Eq. 8 (mode td)
//	A_t    = Σ_k (γλ)^k δ_{t+k} along the trajectory            mode path (default)
//	A_t    = δ_t + Σ_{k≥1} (γλ)^k Ā_{t+k}                       Eq. 9–10 (mode paper)
//	Â_t    = (A_t − μ_u)/(σ_u + ε) over the steps leaving u     Eq. 11 (sign(A) when alone)
//
// with π̂_e = 1/N(u) (count weighting) or 1/(|A(u)|·n(u,a)) (uniform), σ_u the population std
// (Â = 0 for every step of a node whose σ_u ≤ 1e-9), plus optionally EpisodeWeight·A^E, GiGPO's
// episode advantage with the std EpisodeStd (sample by default). Estimate keeps no state between
// calls (its buffers live for one call).
type GRAFT struct {
	opts Options
}

// New returns the GRAFT estimator.
func New(opts Options) (*GRAFT, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &GRAFT{opts: opts}, nil
}

// Estimate returns one advantage per step and the diagnostics adv_*, nodes (state nodes), edges
// (distinct (u, v) pairs, sinks included), edge_instances, merge_ratio (steps per node),
// singleton_share (share of steps that are the only instance leaving their node), sweeps (most
// Gauss–Seidel sweeps of any task), residual (largest final Bellman residual), sinks,
// unreachable_share (share of nodes that reach no sink and keep V = 0) and, in paper mode,
// paper_hops (most hops propagated).
func (x *GRAFT) Estimate(b *rollout.Batch) (rollout.Advantages, rollout.Diagnostics) {
	adv := rollout.NewAdvantages(b)
	ws := newWorkspace()
	var sum taskStats
	for _, group := range b.Groups() {
		st := x.estimateTask(ws, b, group, adv)
		sum.add(st)
	}
	d := rollout.Diagnostics{
		"nodes":             float64(sum.nodes),
		"edges":             float64(sum.edges),
		"edge_instances":    float64(sum.instances),
		"merge_ratio":       rollout.Ratio(sum.instances, sum.nodes),
		"singleton_share":   rollout.Ratio(sum.singletons, sum.instances),
		"sweeps":            float64(sum.sweeps),
		"residual":          sum.residual,
		"sinks":             float64(sum.sinks),
		"unreachable_share": rollout.Ratio(sum.unreachable, sum.nodes),
	}
	if x.opts.Mode == ModePaper {
		d["paper_hops"] = float64(sum.hops)
	}
	rollout.AdvantageStats(adv, d)
	return adv, d
}

// taskStats are one task's diagnostics; add folds them into batch totals (maxima for sweeps,
// hops and residual).
type taskStats struct {
	nodes, edges, instances, singletons, sinks, unreachable int
	sweeps, hops                                            int
	residual                                                float64
}

func (s *taskStats) add(t taskStats) {
	s.nodes += t.nodes
	s.edges += t.edges
	s.instances += t.instances
	s.singletons += t.singletons
	s.sinks += t.sinks
	s.unreachable += t.unreachable
	s.sweeps = max(s.sweeps, t.sweeps)
	s.hops = max(s.hops, t.hops)
	s.residual = max(s.residual, t.residual)
}

// system is a sparse affine map over a list of nodes, row p for node nodes[p]:
//
//	x(u) ← c[p] + self[p]·x(u) + Σ_j w[j]·x(to[j]),   j ∈ [start[p], start[p+1])
//
// with parallel edge instances merged into one entry and the self-loop weight held apart, since
// Gauss–Seidel divides by the diagonal.
type system struct {
	nodes, start, to []int32
	w, c, self       []float64
}

// workspace holds every buffer of one Estimate call, reused from task to task.
type workspace struct {
	g          *graph
	val, prop  system    // value system (policy weights, γ folded in); paper-mode hop propagation (count weights)
	p          []float64 // π̂ weight of each edge instance: 1/N(u) or 1/(|A(u)|·n(u,a))
	V          []float64 // V(u) per node; R on ⊥(R)
	delta, raw []float64 // per edge instance: δ_e and the mode's advantage A_e
	out        []float64 // per edge instance: Â, the advantage after Eq. 11
	h, h2, G   []float64 // paper mode, per node: k-hop mean advantage and Σ_k (γλ)^k Ā_k
	ae         []float64 // A^E by position in the group
	reach      []int32   // state nodes that reach a sink, nearest first: the sweep order
	live       []int32   // state nodes with outgoing edge instances
	mark, slot []int32
	stamp, cnt []int32
	z          grpo.GroupNormalizer
	actions    bool // intern action texts even under count weighting (the export groups by them)
}

func newWorkspace() *workspace { return &workspace{g: newGraph()} }

// estimateTask runs GRAFT on one task's group, writes the advantages of its steps into adv and
// leaves the graph, values and per-instance advantages in ws (the export reads them).
func (x *GRAFT) estimateTask(ws *workspace, b *rollout.Batch, group []int, adv rollout.Advantages) taskStats {
	o := &x.opts
	g := ws.g
	g.build(b, group, routing{
		bootstrap: o.Truncation == TruncBootstrap,
		rewards:   o.UseStepRewards,
		actions:   o.PolicyWeighting == WeightUniform || ws.actions,
	})
	n := g.nodes()
	st := taskStats{nodes: g.real, instances: len(g.src), sinks: len(g.sinks)}
	st.edges, ws.mark = g.distinctEdges(ws.mark)
	for _, u := range g.src {
		if g.outDegree(u) == 1 {
			st.singletons++
		}
	}

	// Solver order: reverse BFS from the sinks, closest first; nodes that reach no sink are left
	// out and keep V = 0.
	g.reverseBFS(func(u int32) bool { return g.kind[u] == kindSink })
	ws.reach = ws.reach[:0]
	for _, u := range g.order {
		if g.kind[u] == kindState {
			ws.reach = append(ws.reach, u)
		}
	}
	st.unreachable = g.real - len(ws.reach)

	// V(u) = Σ_e π̂_e·(r_e + γ·V(v)) on the nodes that reach a sink, V(⊥(R)) = R.
	ws.policyWeights(x.opts.PolicyWeighting)
	ws.V = grpo.Zeroed(ws.V, n)
	for u := range ws.V {
		ws.V[u] = g.fixed[u] // V(⊥(R)) = R
	}
	ws.val.assemble(ws, ws.reach, ws.p, o.Gamma, true)
	st.sweeps, st.residual = gaussSeidel(&ws.val, ws.V, o.Tol, o.sweepCap())

	// δ_e = r_e + γ·V(v) − V(u) for every edge instance e = (u → v) (Eq. 8); on the last step v is
	// ⊥(R) with V = R, or under bootstrap the real last state.
	ws.delta = grpo.Zeroed(ws.delta, len(g.src))
	for e := range g.src {
		ws.delta[e] = g.rew[e] + o.Gamma*ws.V[g.dst[e]] - ws.V[g.src[e]]
	}
	ws.raw = grpo.Zeroed(ws.raw, len(g.src))
	switch o.Mode {
	case ModeTD:
		copy(ws.raw, ws.delta)
	case ModePath:
		// A_t = δ_t + γλ·A_{t+1} backwards along each trajectory's own steps (GAE).
		gl := o.Gamma * o.Lambda
		for j := range g.trajs {
			next := 0.0
			for e := g.first[j+1] - 1; e >= g.first[j]; e-- {
				next = ws.delta[e] + gl*next
				ws.raw[e] = next
			}
		}
	case ModePaper:
		st.hops = ws.graphGAE(o.Gamma*o.Lambda, o.Tol, o.sweepCap())
		for e := range g.src {
			ws.raw[e] = ws.delta[e] + ws.G[g.dst[e]] // A^GAE_t = A_t + Σ_{k≥1} (γλ)^k Ā_{t+k}
		}
	}

	// Eq. 11: Â = (A − μ_u)/(σ_u + ε) over the edge instances leaving each node u, σ_u the
	// population std; 0 where σ_u ≤ 1e-9; sign(A) alone.
	ws.out = grpo.Zeroed(ws.out, len(g.src))
	if o.Normalize {
		ws.z.Normalize(ws.raw, g.src, n, grpo.MeanStdNorm, grpo.StdPopulation, o.Eps, flatSigma, grpo.SingletonSign, ws.out)
	} else {
		copy(ws.out, ws.raw)
	}

	ws.ae = grpo.Zeroed(ws.ae, len(group))
	if o.EpisodeWeight != 0 {
		grpo.EpisodeAdvantages(b, group, o.Score, o.EpisodeNorm, o.EpisodeStd, o.Eps, ws.ae) // A^E_i
	}
	j := 0
	for k, i := range group {
		if b.Trajs[i].Err != "" {
			continue
		}
		e := g.first[j]
		for t := range adv[i] {
			adv[i][t] = ws.out[e] + o.EpisodeWeight*ws.ae[k]
			e++
		}
		j++
	}
	return st
}

// policyWeights sets ws.p[e] = π̂ weight of edge instance e within its source node: 1/N(u) for
// count weighting; 1/(|A(u)|·n(u,a)) for uniform weighting, |A(u)| the distinct actions at u and
// n(u,a) the instances of action a there.
func (ws *workspace) policyWeights(wt Weighting) {
	g := ws.g
	ws.p = grpo.Zeroed(ws.p, len(g.src))
	if wt == WeightUniform {
		ws.stamp = grpo.Zeroed(ws.stamp, len(g.acts))
		ws.cnt = grpo.Zeroed(ws.cnt, len(g.acts))
	}
	for u := 0; u < g.nodes(); u++ {
		inst := g.outInst[g.outStart[u]:g.outStart[u+1]]
		if len(inst) == 0 {
			continue
		}
		if wt == WeightCount {
			w := 1 / float64(len(inst))
			for _, e := range inst {
				ws.p[e] = w
			}
			continue
		}
		distinct := 0
		for _, e := range inst {
			a := g.act[e]
			if ws.stamp[a] != int32(u)+1 {
				ws.stamp[a], ws.cnt[a] = int32(u)+1, 0
				distinct++
			}
			ws.cnt[a]++
		}
		for _, e := range inst {
			ws.p[e] = 1 / (float64(distinct) * float64(ws.cnt[g.act[e]]))
		}
	}
}

// assemble builds the rows of nodes from their outgoing edge instances with weights scale·p_e.
// With value set it is the Bellman system V(u) = Σ_e p_e·(r_e + γ·V(v)) over the nodes that reach
// a sink (scale = γ): the rewards go to c, and so do the edges into sinks (V = R, fixed) and into
// nodes that reach no sink (V = 0 for ever), so that a sweep touches only live entries. Without
// value every edge is kept (the paper mode propagates over all nodes) and c stays 0.
func (s *system) assemble(ws *workspace, nodes []int32, p []float64, scale float64, value bool) {
	g := ws.g
	ws.mark = grpo.Zeroed(ws.mark, g.nodes())
	ws.slot = grpo.Zeroed(ws.slot, g.nodes())
	s.nodes = append(s.nodes[:0], nodes...)
	s.start = append(s.start[:0], 0)
	s.to, s.w = s.to[:0], s.w[:0]
	s.c = grpo.Zeroed(s.c, len(nodes))
	s.self = grpo.Zeroed(s.self, len(nodes))
	for r, u := range nodes {
		tag := int32(r) + 1 // ws.slot[v] belongs to this row while ws.mark[v] == tag
		for _, e := range g.outInst[g.outStart[u]:g.outStart[u+1]] {
			v, w := g.dst[e], scale*p[e]
			if value {
				s.c[r] += p[e] * g.rew[e]
				if g.kind[v] != kindState {
					s.c[r] += w * ws.V[v]
					continue
				}
				if g.dist[v] < 0 {
					continue
				}
			}
			switch {
			case v == u:
				s.self[r] += w
			case ws.mark[v] == tag:
				s.w[ws.slot[v]] += w
			default:
				ws.mark[v], ws.slot[v] = tag, int32(len(s.to))
				s.to = append(s.to, v)
				s.w = append(s.w, w)
			}
		}
		s.start = append(s.start, int32(len(s.to)))
	}
}

// gaussSeidel solves x(u) = c + self·x(u) + Σ w·x(v) for the rows of s in place, in row order,
// each row solved exactly for its own node, x(u) = (c + Σ w·x(v))/(1 − self): Gauss–Seidel on the
// linear system (I − γP̂)V = b. That converges faster than in-place value iteration on the
// self-loops invalid actions create, to the same fixed point. It first divides every row by its
// diagonal 1 − self, in place, so that a sweep multiplies and adds only. It stops after the first
// sweep whose max|ΔV| < tol, or after limit sweeps, and returns the sweeps done and the final
// Bellman residual max_u |c + self·V(u) + Σ w·V(v) − V(u)|. A sweep is a γ-contraction in the
// max norm (a row's weights sum to at most γ after the division), so stopping at max|ΔV| < tol
// leaves V within γ/(1−γ)·tol of the fixed point, not within tol (TestGaussSeidelErrorBound).
func gaussSeidel(s *system, V []float64, tol float64, limit int) (sweeps int, residual float64) {
	if len(s.nodes) == 0 {
		return 0, 0
	}
	for r := range s.nodes {
		inv := 1 / (1 - s.self[r])
		s.c[r] *= inv
		for j := s.start[r]; j < s.start[r+1]; j++ {
			s.w[j] *= inv
		}
	}
	for sweeps < limit {
		sweeps++
		var dmax float64
		for r, u := range s.nodes {
			v := s.c[r]
			for j := s.start[r]; j < s.start[r+1]; j++ {
				v += s.w[j] * V[s.to[j]]
			}
			dmax = max(dmax, math.Abs(v-V[u]))
			V[u] = v
		}
		if dmax < tol {
			break
		}
	}
	for r, u := range s.nodes {
		v := s.c[r]
		for j := s.start[r]; j < s.start[r+1]; j++ {
			v += s.w[j] * V[s.to[j]]
		}
		residual = max(residual, (1-s.self[r])*math.Abs(v-V[u])) // undo the division
	}
	return sweeps, residual
}

// graphGAE fills ws.G(v) = Σ_{k≥1} (γλ)^k·Ā_k(v) for every node, where Ā_k(v) is the mean TD
// advantage of the edge instances taken at hop k by a walk that enters v and then follows the
// empirical transition counts: Ā_1(v) = m(v), the instance mean of δ out of v, and
// Ā_{k+1}(v) = Σ_{e out of v} Ā_k(dst_e)/N(v). "Reachable in exactly k hops" is thus read as the
// k-hop distribution of the count-weighted walk, each instance weighted by its probability. A walk
// that has entered a sink (or a state nobody left) stops contributing, as GAE stops at the end of
// an episode; Ā is not renormalised by the surviving mass. The weights are the instance counts
// whatever the policy weighting, as the paper's "mean over edge instances" says; so with count
// weighting and a converged V every m(v) is 0 and the mode equals td. Hops stop when
// (γλ)^k·max|Ā_k| < tol, the frontier is empty, or after limit hops; it returns the hops done.
func (ws *workspace) graphGAE(gl, tol float64, limit int) (hops int) {
	g := ws.g
	n := g.nodes()
	ws.G = grpo.Zeroed(ws.G, n)
	if gl == 0 {
		return 0
	}
	ws.h = grpo.Zeroed(ws.h, n)
	ws.h2 = grpo.Zeroed(ws.h2, n)
	live := ws.liveNodes()
	for _, u := range live {
		inst := g.outInst[g.outStart[u]:g.outStart[u+1]]
		var m float64
		for _, e := range inst {
			m += ws.delta[e]
		}
		ws.h[u] = m / float64(len(inst)) // Ā_1(u) = m(u)
	}
	ws.p = grpo.Zeroed(ws.p, len(g.src))
	for e, u := range g.src {
		ws.p[e] = 1 / float64(g.outDegree(u))
	}
	ws.prop.assemble(ws, live, ws.p, 1, false)
	coef := 1.0
	for hops < limit {
		hops++
		coef *= gl
		var hmax float64
		for _, u := range live {
			ws.G[u] += coef * ws.h[u]
			hmax = max(hmax, math.Abs(ws.h[u]))
		}
		if coef*hmax < tol {
			break
		}
		// One hop back: Ā_{k+1}(u) = Σ_e Ā_k(dst_e)/N(u) (Jacobi, so that hops never mix).
		s := &ws.prop
		for r, u := range s.nodes {
			v := s.self[r] * ws.h[u]
			for j := s.start[r]; j < s.start[r+1]; j++ {
				v += s.w[j] * ws.h[s.to[j]]
			}
			ws.h2[u] = v
		}
		ws.h, ws.h2 = ws.h2, ws.h
	}
	return hops
}

// liveNodes lists the state nodes that have outgoing edge instances: the only nodes with a mean
// advantage to propagate.
func (ws *workspace) liveNodes() []int32 {
	g := ws.g
	ws.live = ws.live[:0]
	for u := 0; u < g.nodes(); u++ {
		if g.kind[u] == kindState && g.outDegree(int32(u)) > 0 {
			ws.live = append(ws.live, int32(u))
		}
	}
	return ws.live
}
