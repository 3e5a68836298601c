package graft

import (
	"github.com/graftrl/graftrl/grpo"
	"github.com/graftrl/graftrl/rollout"
)

// relevanceTol is the spread of successor values below which a node's actions count as equal.
const relevanceTol = 1e-9

// DecisionShare measures where step-level credit can differ from trajectory-level credit at all:
// the share of a batch's steps that leave a graph node whose outgoing edge instances lead to
// different values, Q_e = r_e + γ·V(v) with V GRAFT's Bellman expectation under opts (count
// weighting, sinks ⊥(R) worth R). At a node whose every instance leads to the same value, every
// step-level method gives the same credit to all of them; a node left by one step alone never
// counts. It returns the share and the steps counted (episodes with an env fault are left out).
func DecisionShare(b *rollout.Batch, opts Options) (share float64, steps int, err error) {
	x, err := New(opts)
	if err != nil {
		return 0, 0, err
	}
	ws := newWorkspace()
	adv := rollout.NewAdvantages(b)
	relevant := 0
	var lo, hi []float64
	for _, group := range b.Groups() {
		x.estimateTask(ws, b, group, adv)
		g := ws.g
		n := g.nodes()
		lo, hi = grpo.Zeroed(lo, n), grpo.Zeroed(hi, n)
		for u := range n {
			lo[u], hi[u] = 1e300, -1e300
		}
		for e := range g.src {
			q := g.rew[e] + opts.Gamma*ws.V[g.dst[e]]
			u := g.src[e]
			lo[u], hi[u] = min(lo[u], q), max(hi[u], q)
		}
		for e := range g.src {
			if u := g.src[e]; hi[u]-lo[u] > relevanceTol {
				relevant++
			}
		}
		steps += len(g.src)
	}
	return rollout.Ratio(relevant, steps), steps, nil
}
