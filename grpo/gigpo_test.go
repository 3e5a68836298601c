package grpo

import (
	"math"
	"testing"

	"github.com/graftrl/graftrl/rollout"
)

func mustGiGPO(t *testing.T, mod func(*GiGPOOptions)) *GiGPO {
	t.Helper()
	o := DefaultGiGPOOptions()
	o.Eps = 1e-12
	if mod != nil {
		mod(&o)
	}
	g, err := NewGiGPO(o)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Three rollouts, γ = 0.5:
//
//	T1  S → A → G  success R = 1   R^S = [0.5, 1]
//	T2  S → B      failure         R^S = [0]
//	T3  S → A → C  failure         R^S = [0, 0]
//
// Anchor groups: S = {0.5, 0, 0}, A = {1, 0}. Episode scores R = [1, 0, 0].
func anchorBatch() *rollout.Batch {
	return batch(1, ep(0, 1, "S", "A", "G"), ep(0, 0, "S", "B"), ep(0, 0, "S", "A", "C"))
}

func TestGiGPOAnchorGroups(t *testing.T) {
	r2, r3 := math.Sqrt2, math.Sqrt(3)
	cases := []struct {
		name string
		mod  func(*GiGPOOptions)
		want [][]float64
	}{{
		// The default sample std (n − 1). A^E: R = [1, 0, 0], μ 1/3, deviations 2/3, −1/3, −1/3,
		// Σd² = 6/9, σ = √((6/9)/2) = 1/√3 → [2/√3, −1/√3, −1/√3]. A^S at S (a step group of 3):
		// {0.5, 0, 0}, μ 1/6, deviations 1/3, −1/6, −1/6, Σd² = 1/6, σ = √((1/6)/2) = 1/(2√3) →
		// [2/√3, −1/√3, −1/√3]; at A (a step group of 2): {1, 0}, μ 0.5, Σd² = 0.5, σ = √(0.5/1)
		// = 1/√2 → [1/√2, −1/√2]. T1 = [2/√3 + 2/√3, 2/√3 + 1/√2], T2 = [−1/√3 − 1/√3],
		// T3 = [−1/√3 − 1/√3, −1/√3 − 1/√2].
		name: "mean_std_norm",
		mod:  func(o *GiGPOOptions) { o.Gamma = 0.5 },
		want: [][]float64{{4 / r3, 2/r3 + 1/r2}, {-2 / r3}, {-2 / r3, -1/r3 - 1/r2}},
	}, {
		// std population (n): the previous convention. A^E: σ = √((6/9)/3) = √2/3 →
		// [√2, −1/√2, −1/√2]. A^S at S: σ = √((1/6)/3) = 1/√18 → [√2, −1/√2, −1/√2]; at A:
		// σ = √(0.5/2) = 0.5 → [1, −1].
		name: "mean_std_norm, std population",
		mod:  func(o *GiGPOOptions) { o.Gamma = 0.5; o.Std = StdPopulation },
		want: [][]float64{{2 * r2, r2 + 1}, {-r2}, {-r2, -1/r2 - 1}},
	}, {
		// mean_norm divides by 1, so the std form changes nothing.
		name: "mean_norm, std population",
		mod:  func(o *GiGPOOptions) { o.Gamma = 0.5; o.Norm = MeanNorm; o.Std = StdPopulation },
		want: [][]float64{{1, 2.0/3 + 0.5}, {-0.5}, {-0.5, -1.0/3 - 0.5}},
	}, {
		// A^E: [2/3, −1/3, −1/3]. A^S at S: [1/3, −1/6, −1/6]; at A: [0.5, −0.5].
		name: "mean_norm",
		mod:  func(o *GiGPOOptions) { o.Gamma = 0.5; o.Norm = MeanNorm },
		want: [][]float64{{1, 2.0/3 + 0.5}, {-0.5}, {-0.5, -1.0/3 - 0.5}},
	}, {
		name: "omega weights the step term",
		mod:  func(o *GiGPOOptions) { o.Gamma = 0.5; o.Norm = MeanNorm; o.Omega = 0 },
		want: [][]float64{{2.0 / 3, 2.0 / 3}, {-1.0 / 3}, {-1.0 / 3, -1.0 / 3}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			adv, d := mustGiGPO(t, c.mod).Estimate(anchorBatch())
			checkAdv(t, adv, c.want, 1e-9)
			// Anchors S, A (the final next states B, C, G are not anchors); 5 steps, none alone.
			want := rollout.Diagnostics{"nodes": 2, "edges": 4, "edge_instances": 5, "merge_ratio": 2.5, "singleton_share": 0}
			for k, v := range want {
				if d[k] != v {
					t.Errorf("%s = %g, want %g", k, d[k], v)
				}
			}
		})
	}
}

// A step alone in its anchor group gets A^S = 0, and the step return carries the per-step
// reward and the discounted outcome.
func TestGiGPOSingletonAndStepReturn(t *testing.T) {
	// γ = 0.95, mean_norm. T1 = S →(−0.1) S → A → G success, T2 = S → A failure.
	// R^S(T1) = [−0.1 + 0.95², 0.95, 1] = [0.8025, 0.95, 1]; R^S(T2) = [0].
	// S group {0.8025, 0.95, 0}: μ 0.584166…; A group {1}: alone → 0 (T2's only step is at S).
	// A^E with score return: R = [0.9, 0] → ±0.45.
	t1 := ep(0, 1, "S", "S", "A", "G")
	t1.Steps[0].Reward = -0.1
	b := batch(1, t1, ep(0, 0, "S", "A"))
	adv, d := mustGiGPO(t, func(o *GiGPOOptions) { o.Norm = MeanNorm }).Estimate(b)
	mu := (0.8025 + 0.95 + 0) / 3
	checkAdv(t, adv, [][]float64{{0.45 + 0.8025 - mu, 0.45 + 0.95 - mu, 0.45}, {-0.45 - mu}}, 1e-12)
	if !near(d["singleton_share"], 0.25, 1e-12) {
		t.Errorf("singleton_share = %g, want 0.25", d["singleton_share"])
	}
}

// Every estimator gives A ≡ 0 when every rollout failed (and no step reward differs).
func TestGiGPOAllFailed(t *testing.T) {
	tr := ep(0, 0, "S", "A", "A", "B")
	tr.Truncated = true
	b := batch(1, ep(0, 0, "S", "A", "C"), ep(0, 0, "S", "B"), tr)
	for _, norm := range []Norm{MeanStdNorm, MeanNorm} {
		adv, d := mustGiGPO(t, func(o *GiGPOOptions) { o.Norm = norm }).Estimate(b)
		checkAdv(t, adv, [][]float64{{0, 0}, {0}, {0, 0, 0}}, 0)
		if d["adv_zero_share"] != 1 || d["groups_all_equal"] != 1 {
			t.Errorf("%s: diagnostics %v", norm, d)
		}
	}
}

// Groups never mix tasks: the same key in two tasks is two anchor groups.
func TestGiGPOPerTask(t *testing.T) {
	b := batch(2, ep(0, 1, "S", "G"), ep(1, 0, "S", "X"), ep(0, 0, "S", "Y"), ep(1, 0, "S", "X"))
	adv, _ := mustGiGPO(t, func(o *GiGPOOptions) { o.Norm = MeanNorm }).Estimate(b)
	checkAdv(t, adv, [][]float64{{1}, {0}, {-1}, {0}}, 1e-12)
}

func TestGiGPOErroredIgnored(t *testing.T) {
	bad := ep(0, 1, "S", "A", "G")
	bad.Err = "timeout"
	clean, _ := mustGiGPO(t, func(o *GiGPOOptions) { o.Gamma = 0.5 }).Estimate(anchorBatch())
	b := anchorBatch()
	b.Trajs = append(b.Trajs[:1], append([]rollout.Trajectory{bad}, b.Trajs[1:]...)...)
	adv, d := mustGiGPO(t, func(o *GiGPOOptions) { o.Gamma = 0.5 }).Estimate(b)
	checkAdv(t, adv, [][]float64{clean[0], {0, 0}, clean[1], clean[2]}, 1e-12)
	if d["edge_instances"] != 5 {
		t.Errorf("edge_instances = %g, want 5 (errored steps are not counted)", d["edge_instances"])
	}
}
