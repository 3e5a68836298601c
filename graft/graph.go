// Package graft implements graftrl's graph-based step-level advantage estimators: GRAFT, the
// Bellman expectation on each task's trajectory graph (ALGORITHMS.md §4), and GraphGPO, the
// shortest path to the goal on the same graph (§3); plus the export of a task's graph as DOT or
// JSON for inspection.
//
// A graph is built per task from the N rollouts of its group, never across tasks. Its nodes are
// state keys φ(s) and virtual nodes (GRAFT's outcome sinks ⊥(R), GraphGPO's GOAL); every step is
// one edge instance φ(s_t) → φ(s_{t+1}) carrying its per-step reward r_t.
package graft

import (
	"github.com/graftrl/graftrl/grpo"
	"github.com/graftrl/graftrl/rollout"
)

// Node kinds.
const (
	kindState uint8 = iota // φ(s) of an environment state
	kindSink               // ⊥(R): absorbing, V = R
	kindGoal               // GraphGPO's GOAL: d = 0
)

// routing says where the last transition of a trajectory goes.
type routing struct {
	// goal: GraphGPO. A successful trajectory's last transition goes to GOAL; every other ends at
	// its real next node. Without goal (GRAFT), every trajectory ends in the sink ⊥(R_i).
	goal bool
	// bootstrap: GRAFT's truncation option. A truncated trajectory's last transition goes to its
	// real next node, whose graph value then stands in for the unseen future, and adds no sink.
	bootstrap bool
	// rewards keeps the per-step rewards on the edges; without it every r_e is 0.
	rewards bool
	// actions interns the action texts (uniform policy weighting and the export need them).
	actions bool
}

// graph is the directed multigraph of one task. All storage is flat and reused from task to task
// by the same estimator call, so building a graph allocates only while the buffers still grow.
type graph struct {
	ids   map[string]int32  // φ(s) → node id (hash-consing), cleared per task
	sinks map[float64]int32 // R → id of ⊥(R)
	acts  map[string]int32  // action text → action id
	goal  int32             // id of GOAL, -1 when no transition reached it

	// Per node.
	key   []string  // φ(s); "" for virtual nodes
	kind  []uint8   // kindState, kindSink or kindGoal
	fixed []float64 // V of a sink (R); 0 otherwise
	real  int       // number of kindState nodes

	// Per edge instance, in the order of the group's valid trajectories and their steps.
	src, dst []int32
	rew      []float64
	act      []int32 // action ids; only with routing.actions

	// trajs are the group's trajectories without an error (indices into Batch.Trajs) and
	// first[j] the first edge instance of trajs[j]; first has one more entry, the total.
	trajs, first []int32

	// CSR adjacency over edge instances: the instances leaving node u are
	// outInst[outStart[u]:outStart[u+1]], those entering it inInst[inStart[u]:inStart[u+1]].
	outStart, outInst []int32
	inStart, inInst   []int32

	// Scratch for breadth-first search: hop distance (-1 unreached) and the visiting order.
	dist, order []int32
}

func newGraph() *graph {
	return &graph{
		ids:   make(map[string]int32),
		sinks: make(map[float64]int32),
		acts:  make(map[string]int32),
	}
}

// truncated reports whether the step cap ended t. A success on the last allowed turn is a success.
func truncated(t *rollout.Trajectory) bool { return t.Truncated && !t.Success }

// build replaces the graph with the one of a task's group. Trajectories with Err != "" are left
// out; a trajectory without steps adds nothing but keeps its place in trajs.
func (g *graph) build(b *rollout.Batch, group []int, r routing) {
	clear(g.ids)
	clear(g.sinks)
	clear(g.acts)
	g.goal = -1
	g.key, g.kind, g.fixed, g.real = g.key[:0], g.kind[:0], g.fixed[:0], 0
	g.src, g.dst, g.rew, g.act = g.src[:0], g.dst[:0], g.rew[:0], g.act[:0]
	g.trajs, g.first = g.trajs[:0], g.first[:0]
	for _, i := range group {
		t := &b.Trajs[i]
		if t.Err != "" {
			continue
		}
		g.trajs = append(g.trajs, int32(i))
		g.first = append(g.first, int32(len(g.src)))
		last := len(t.Steps) - 1
		var v int32
		for k := range t.Steps {
			s := &t.Steps[k]
			u := v // φ(s_t) is almost always the previous φ(s_{t+1}): one hash per step, not two
			if k == 0 || s.Key != t.Steps[k-1].NextKey {
				u = g.node(s.Key)
			}
			if k == last {
				v = g.terminal(t, s, r)
			} else {
				v = g.node(s.NextKey)
			}
			re := 0.0
			if r.rewards {
				re = s.Reward
			}
			g.src = append(g.src, u)
			g.dst = append(g.dst, v)
			g.rew = append(g.rew, re)
			if r.actions {
				g.act = append(g.act, g.action(s.Action))
			}
		}
	}
	g.first = append(g.first, int32(len(g.src)))
	g.index()
}

// terminal returns the node the last transition of t leads to.
func (g *graph) terminal(t *rollout.Trajectory, s *rollout.Step, r routing) int32 {
	switch {
	case r.goal && t.Success:
		if g.goal < 0 {
			g.goal = g.virtual(kindGoal, 0)
		}
		return g.goal
	case r.goal, r.bootstrap && truncated(t):
		return g.node(s.NextKey)
	}
	R := t.Outcome
	if truncated(t) {
		R = 0 // ⊥(0): a truncated rollout is a failure
	}
	id, ok := g.sinks[R]
	if !ok {
		id = g.virtual(kindSink, R)
		g.sinks[R] = id
	}
	return id
}

func (g *graph) node(k string) int32 {
	if id, ok := g.ids[k]; ok {
		return id
	}
	id := int32(len(g.kind))
	g.ids[k] = id
	g.key = append(g.key, k)
	g.kind = append(g.kind, kindState)
	g.fixed = append(g.fixed, 0)
	g.real++
	return id
}

func (g *graph) virtual(kind uint8, value float64) int32 {
	id := int32(len(g.kind))
	g.key = append(g.key, "")
	g.kind = append(g.kind, kind)
	g.fixed = append(g.fixed, value)
	return id
}

func (g *graph) action(a string) int32 {
	id, ok := g.acts[a]
	if !ok {
		id = int32(len(g.acts))
		g.acts[a] = id
	}
	return id
}

// nodes is the number of nodes, virtual ones included.
func (g *graph) nodes() int { return len(g.kind) }

// index builds the out- and in-adjacency of the edge instances by counting sort.
func (g *graph) index() {
	g.outStart, g.outInst = csr(g.nodes(), g.src, g.outStart, g.outInst)
	g.inStart, g.inInst = csr(g.nodes(), g.dst, g.inStart, g.inInst)
}

// csr groups the indices of by by their value in [0, n): idx[start[u]:start[u+1]] are the e with
// by[e] == u, in increasing order.
func csr(n int, by []int32, start, idx []int32) ([]int32, []int32) {
	start = grpo.Zeroed(start, n+1)
	idx = grpo.Zeroed(idx, len(by))
	for _, u := range by {
		start[u+1]++
	}
	for u := 1; u <= n; u++ {
		start[u] += start[u-1]
	}
	for e, u := range by {
		idx[start[u]] = int32(e)
		start[u]++
	}
	// start[u] now holds the end of u, which is the start of u+1.
	copy(start[1:], start[:n])
	start[0] = 0
	return start, idx
}

// reverseBFS sets g.dist to the number of hops from every node to the nearest source along the
// edges (unit weights, -1 when no source is reachable) and g.order to the reached nodes, nearest
// first; sources have distance 0 and come first.
func (g *graph) reverseBFS(isSource func(u int32) bool) {
	n := g.nodes()
	g.dist = grpo.Zeroed(g.dist, n)
	g.order = g.order[:0]
	for u := range g.dist {
		g.dist[u] = -1
		if isSource(int32(u)) {
			g.dist[u] = 0
			g.order = append(g.order, int32(u))
		}
	}
	for head := 0; head < len(g.order); head++ {
		v := g.order[head]
		for _, e := range g.inInst[g.inStart[v]:g.inStart[v+1]] {
			if u := g.src[e]; g.dist[u] < 0 {
				g.dist[u] = g.dist[v] + 1
				g.order = append(g.order, u)
			}
		}
	}
}

// distinctEdges counts the distinct (u, v) pairs among the edge instances, using mark (resized to
// the node count) as scratch.
func (g *graph) distinctEdges(mark []int32) (int, []int32) {
	mark = grpo.Zeroed(mark, g.nodes())
	n := 0
	for u := 0; u < g.nodes(); u++ {
		for _, e := range g.outInst[g.outStart[u]:g.outStart[u+1]] {
			if v := g.dst[e]; mark[v] != int32(u)+1 {
				mark[v] = int32(u) + 1
				n++
			}
		}
	}
	return n, mark
}

// outDegree is N(u), the number of edge instances leaving u.
func (g *graph) outDegree(u int32) int32 { return g.outStart[u+1] - g.outStart[u] }
