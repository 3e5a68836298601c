package graft

import (
	"math"
	"testing"

	"github.com/graftrl/graftrl/grpo"
	"github.com/graftrl/graftrl/rollout"
)

// goalBatch: T1 = S → A → B → GOAL (success), T2 = S → C → D (failure, ends at its real state D),
// T3 = S → A → C (failure). Reverse BFS from GOAL: d(B) = 1, d(A) = 2, d(S) = 3; C and D never
// reach GOAL and get d_max + 1 = 4.
func goalBatch() *rollout.Batch {
	return batch(1, ep(0, 1, "S", "A", "B", "G"), ep(0, 0, "S", "C", "D"), ep(0, 0, "S", "A", "C"))
}

func mustGraphGPO(t testing.TB, mod func(*GraphGPOOptions)) *GraphGPO {
	t.Helper()
	o := DefaultGraphGPOOptions()
	o.Eps = 1e-12
	if mod != nil {
		mod(&o)
	}
	x, err := NewGraphGPO(o)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestGraphGPODistances(t *testing.T) {
	g := newGraph()
	b := goalBatch()
	g.build(b, b.Groups()[0], routing{goal: true})
	g.reverseBFS(func(u int32) bool { return u == g.goal })
	want := map[string]int32{"S": 3, "A": 2, "B": 1, "C": -1, "D": -1}
	for k, d := range want {
		if got := g.dist[g.ids[k]]; got != d {
			t.Errorf("d(%s) = %d, want %d", k, got, d)
		}
	}
	if g.dist[g.goal] != 0 {
		t.Errorf("d(GOAL) = %d", g.dist[g.goal])
	}
	if _, ok := g.ids["G"]; ok {
		t.Error("the success's last state G is a node; its transition should go to GOAL")
	}
}

func TestGraphGPOHandComputed(t *testing.T) {
	r2, r3 := math.Sqrt2, math.Sqrt(3)
	cases := []struct {
		name string
		b    *rollout.Batch
		mod  func(*GraphGPOOptions)
		want [][]float64
	}{{
		// g_t = 10·0.1^{d(s_{t+1})}: T1 [0.1, 1, 10], T2 [0.001, 0.001], T3 [0.1, 0.001].
		// Step groups, sample std (n − 1): S {0.1, 0.001, 0.1}: μ 0.067, deviations 0.033·(1, −2, 1),
		// Σd² = 6·0.033², σ = 0.033·√(6/2) = 0.033·√3 → [1/√3, −2/√3, 1/√3]; A {1, 0.001}: μ 0.5005,
		// deviations ±0.4995, σ = 0.4995·√(2/1) → [1/√2, −1/√2]; B, C alone → 0.
		// A^E: R = [1, 0, 0], μ 1/3, Σd² = 6/9, σ = √((6/9)/2) = 1/√3 → [2/√3, −1/√3, −1/√3].
		// T1 [2/√3 + 1/√3, 2/√3 + 1/√2, 2/√3], T2 [−1/√3 − 2/√3, −1/√3], T3 [−1/√3 + 1/√3, −1/√3 − 1/√2].
		name: "defaults",
		b:    goalBatch(),
		want: [][]float64{{r3, 2/r3 + 1/r2, 2 / r3}, {-r3, -1 / r3}, {0, -1/r3 - 1/r2}},
	}, {
		// std population, the previous convention: S σ = 0.033·√(6/3) → [1/√2, −√2, 1/√2];
		// A σ = 0.4995 → [1, −1]; A^E σ = √((6/9)/3) = √2/3 → [√2, −1/√2, −1/√2].
		name: "std population",
		b:    goalBatch(),
		mod:  func(o *GraphGPOOptions) { o.Std = grpo.StdPopulation },
		want: [][]float64{{r2 + 1/r2, r2 + 1, r2}, {-1/r2 - r2, -1 / r2}, {0, -1/r2 - 1}},
	}, {
		// The step term alone, sample std: the S and A groups above.
		name: "step only",
		b:    goalBatch(),
		mod:  func(o *GraphGPOOptions) { o.EpisodeWeight = 0 },
		want: [][]float64{{1 / r3, 1 / r2, 0}, {-2 / r3, 0}, {1 / r3, -1 / r2}},
	}, {
		// Only the step term, unnormalised: S mean (0.1 + 0.001 + 0.1)/3 = 0.067; A mean 0.5005.
		name: "mean_norm step only",
		b:    goalBatch(),
		mod:  func(o *GraphGPOOptions) { o.Norm, o.EpisodeWeight = grpo.MeanNorm, 0 },
		want: [][]float64{{0.033, 0.4995, 0}, {-0.066, 0}, {0.033, -0.4995}},
	}, {
		// normalize_distance: exponent d(s_{t+1}) − d(s_t) + 1. T1: 0, 0, 0 → [10, 10, 10];
		// T2: 4−3+1 = 2, 4−4+1 = 1 → [0.1, 1]; T3: 0, 4−2+1 = 3 → [10, 0.01].
		// S {10, 0.1, 10}: mean 6.7; A {10, 0.01}: mean 5.005.
		name: "normalize_distance",
		b:    goalBatch(),
		mod:  func(o *GraphGPOOptions) { o.Norm, o.EpisodeWeight, o.NormalizeDistance = grpo.MeanNorm, 0, true },
		want: [][]float64{{3.3, 4.995, 0}, {-6.6, 0}, {3.3, -4.995}},
	}, {
		// γ_g = 0.5: T1 [10·0.25, 10·0.5, 10], T2 [10/16, 10/16], T3 [2.5, 0.625].
		name: "gamma_g",
		b:    goalBatch(),
		mod:  func(o *GraphGPOOptions) { o.Norm, o.EpisodeWeight, o.GammaG = grpo.MeanNorm, 0, 0.5 },
		want: [][]float64{{2.5 - 5.625/3, 5 - 2.8125, 0}, {0.625 - 5.625/3, 0}, {2.5 - 5.625/3, 0.625 - 2.8125}},
	}, {
		// No rollout succeeded: every d = 1, every g_t = 1, every step group is uniform → 0; and
		// every A^E is 0.
		name: "no success",
		b:    batch(1, ep(0, 0, "S", "A", "B"), ep(0, 0, "S", "C", "S", "A"), cut(ep(0, 0, "S", "S"))),
		want: [][]float64{{0, 0}, {0, 0, 0}, {0}},
	}, {
		name: "no success, normalize_distance",
		b:    batch(1, ep(0, 0, "S", "A", "B"), ep(0, 0, "S", "C", "S", "A"), cut(ep(0, 0, "S", "S"))),
		mod:  func(o *GraphGPOOptions) { o.NormalizeDistance = true },
		want: [][]float64{{0, 0}, {0, 0, 0}, {0}},
	}, {
		// All succeed, one detour: d(A) = 1, d(B) = 2 (B → A), d(S) = 2. g: T1 [1, 10], T2 [0.1, 1, 10].
		// S {1, 0.1}: ±0.45; A {10, 10} → 0; B alone → 0. A^E: all equal → 0.
		name: "all succeed",
		b:    batch(1, ep(0, 1, "S", "A", "G"), ep(0, 1, "S", "B", "A", "G")),
		mod:  func(o *GraphGPOOptions) { o.Norm = grpo.MeanNorm },
		want: [][]float64{{0.45, 0}, {-0.45, 0, 0}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			adv, _ := mustGraphGPO(t, c.mod).Estimate(c.b)
			checkAdv(t, adv, c.want, 1e-9)
		})
	}
}

func TestGraphGPODiagnostics(t *testing.T) {
	b := goalBatch()
	b.Tasks = 2
	b.Trajs = append(b.Trajs, ep(1, 0, "S", "A"), ep(1, 0, "S", "B"))
	_, d := mustGraphGPO(t, nil).Estimate(b)
	// Task 0: nodes S, A, B, C, D; C, D cannot reach GOAL. Edges S→A, A→B, B→GOAL, S→C, C→D, A→C.
	// Task 1: nodes S, A, B, no success. Steps 7 + 2; alone in their φ(s_t) group: B, C (task 0),
	// and the two S steps of task 1 share S.
	want := map[string]float64{"nodes": 8, "edges": 8, "edge_instances": 9, "merge_ratio": 9.0 / 8,
		"singleton_share": 2.0 / 9, "groups_no_success": 0.5, "unreachable_share": 0.4, "groups_all_equal": 0.5}
	for k, v := range want {
		if !near(d[k], v, 1e-12) {
			t.Errorf("%s = %g, want %g", k, d[k], v)
		}
	}
}

func TestGraphGPOErroredIgnored(t *testing.T) {
	clean, _ := mustGraphGPO(t, nil).Estimate(goalBatch())
	b := goalBatch()
	bad := ep(0, 1, "S", "C", "G") // would put C at distance 1
	bad.Err = "crash"
	b.Trajs = append(b.Trajs, bad)
	adv, _ := mustGraphGPO(t, nil).Estimate(b)
	checkAdv(t, adv, append(clean, []float64{0, 0}), 0)
}
