package graft

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/graftrl/graftrl/grpo"
	"github.com/graftrl/graftrl/rollout"
)

// The hand-computed graphs of the tests below (γ = 0.9 unless said otherwise).

// chain: two rollouts walk S → B → C; one ends in success, one in failure.
// V(C) = γ·(1 + 0)/2 = 0.45, V(B) = 0.405, V(S) = 0.3645.
func chain() *rollout.Batch {
	return batch(1, ep(0, 1, "S", "B", "C", "G"), ep(0, 0, "S", "B", "C", "X"))
}

// diamond: S → A → M and S → B → M share the middle state M, which decides.
// V(M) = γ·2/3 = 0.6, V(A) = V(B) = 0.54, V(S) = 0.486: the choice A or B is worth nothing.
func diamond() *rollout.Batch {
	return batch(1, ep(0, 1, "S", "A", "M", "G"), ep(0, 0, "S", "B", "M", "X"), ep(0, 1, "S", "B", "M", "G"))
}

// trap: good prefix, fatal suffix. T2 makes T1's progress S → P, then falls.
// V(P) = γ/2 = 0.45, V(Q) = 0, V(S) = (0.405 + 0.405 + 0)/3 = 0.27.
func trap() *rollout.Batch {
	return batch(1, ep(0, 1, "S", "P", "G"), ep(0, 0, "S", "P", "T"), cut(ep(0, 0, "S", "Q", "Q")))
}

// allWon: every rollout succeeds; T2 detours through B, T3 waits once on a self-loop.
// V(A) = 0.9, V(C) = 0.9, V(B) = 0.81,
// V(S) = (γV(A)·2 + γV(B) + γV(S))/4 → V(S) = (1.62 + 0.729)/(4 − 0.9) = 0.58725/0.775.
func allWon() *rollout.Batch {
	return batch(1, ep(0, 1, "S", "A", "G"), ep(0, 1, "S", "B", "C", "G"), act(ep(0, 1, "S", "S", "A", "G"), 0, "wait"))
}

const vAllWon = 0.58725 / 0.775

func TestGRAFTHandComputed(t *testing.T) {
	sq2, sq3 := math.Sqrt2, math.Sqrt(3)
	cases := []struct {
		name string
		b    *rollout.Batch
		mod  func(*Options)
		want [][]float64
	}{
		// chain. TD: 0 along the shared path; at C, γR − V(C) = ±0.45.
		{"chain td", chain(), nil, [][]float64{{0, 0, 0.45}, {0, 0, -0.45}}},
		// Path GAE, λ = 0.5 (γλ = 0.45): 0.45, 0.45·0.45, 0.45³ backwards.
		{"chain path λ=0.5", chain(), func(o *Options) { o.Mode, o.Lambda = ModePath, 0.5 },
			[][]float64{{0.091125, 0.2025, 0.45}, {-0.091125, -0.2025, -0.45}}},
		// λ = 1: discounted return γ^{T−t}·R minus V(s_t): 0.729 − 0.3645, 0.81 − 0.405, 0.9 − 0.45.
		{"chain path λ=1", chain(), func(o *Options) { o.Mode, o.Lambda = ModePath, 1 },
			[][]float64{{0.3645, 0.405, 0.45}, {-0.3645, -0.405, -0.45}}},
		// Normalised: S and B see two equal advantages → 0; C sees ±0.45, σ 0.45 → ±1.
		{"chain td normalised", chain(), func(o *Options) { o.Normalize = true },
			[][]float64{{0, 0, 1}, {0, 0, -1}}},

		// diamond. Only M's choice carries credit: γR − V(M) = 0.9 − 0.6 or −0.6.
		{"diamond td", diamond(), nil, [][]float64{{0, 0, 0.3}, {0, 0, -0.6}, {0, 0, 0.3}}},
		// Normalised at M: {0.3, −0.6, 0.3}, σ = √0.18 → 1/√2, −√2.
		{"diamond td normalised", diamond(), func(o *Options) { o.Normalize = true },
			[][]float64{{0, 0, 1 / sq2}, {0, 0, -sq2}, {0, 0, 1 / sq2}}},
		{"diamond path λ=1", diamond(), func(o *Options) { o.Mode, o.Lambda = ModePath, 1 },
			[][]float64{{0.243, 0.27, 0.3}, {-0.486, -0.54, -0.6}, {0.243, 0.27, 0.3}}},

		// trap. S → P is good in both rollouts that took it (0.405 − 0.27 = 0.135), the fall is bad
		// (−0.45), the wander is bad (−0.27); Q's only step is worth exactly what Q is (0).
		{"trap td", trap(), nil, [][]float64{{0.135, 0.45}, {0.135, -0.45}, {-0.27, 0}}},
		// S: {0.135, 0.135, −0.27}, μ 0, σ √0.03645 → 1/√2, 1/√2, −√2. Q alone: sign(0) = 0.
		{"trap td normalised", trap(), func(o *Options) { o.Normalize = true },
			[][]float64{{1 / sq2, 1}, {1 / sq2, -1}, {-sq2, 0}}},
		// Plus A^E with the default sample std: R = [1, 0, 0], μ 1/3, deviations 2/3, −1/3, −1/3,
		// Σd² = 6/9, σ = √((6/9)/2) = 1/√3 → [2/√3, −1/√3, −1/√3]; Eq. 11 stays population.
		{"trap episode_weight 1", trap(), func(o *Options) { o.Normalize, o.EpisodeWeight = true, 1 },
			[][]float64{{1/sq2 + 2/sq3, 1 + 2/sq3}, {1/sq2 - 1/sq3, -1 - 1/sq3}, {-sq2 - 1/sq3, -1 / sq3}}},
		// episode_std population, the previous convention: σ = √((6/9)/3) = √2/3 → [√2, −1/√2, −1/√2].
		{"trap episode_weight 1, episode_std population", trap(), func(o *Options) {
			o.Normalize, o.EpisodeWeight, o.EpisodeStd = true, 1, grpo.StdPopulation
		}, [][]float64{{1/sq2 + sq2, 1 + sq2}, {0, -1 - 1/sq2}, {-sq2 - 1/sq2, -1 / sq2}}},

		// allWon. TD at S: direct γV(A) − V(S) > 0, detour γV(B) − V(S) < 0, self-loop −(1−γ)V(S).
		{"all succeed td", allWon(), nil, [][]float64{
			{0.81 - vAllWon, 0}, {0.729 - vAllWon, 0, 0}, {-(1 - 0.9) * vAllWon, 0.81 - vAllWon, 0}}},

		// Per-step rewards on the edges, in V and in δ: T1 pays 0.1 for an invalid action at S.
		// V(S) = (−0.1 + γV(S) + 2·0.81)/3 → V(S) = 1.52/2.1.
		{"step rewards", penalty(), nil, [][]float64{
			{-0.1 + 0.9*(1.52/2.1) - 1.52/2.1, 0.81 - 1.52/2.1, 0}, {0.81 - 1.52/2.1, 0}}},
		// Without them: V(S) = (γV(S) + 1.62)/3 → V(S) = 0.54/0.7; the self-loop costs −(1−γ)V(S).
		{"step rewards off", penalty(), func(o *Options) { o.UseStepRewards = false }, [][]float64{
			{-0.1 * (0.54 / 0.7), 0.81 - 0.54/0.7, 0}, {0.81 - 0.54/0.7, 0}}},

		// Truncation. T2 = S → B → A cut by the step cap.
		// sink_zero: B → ⊥(0), V(B) = 0, V(S) = (0.81 + 0)/2 = 0.405.
		{"truncation sink_zero", truncation(), nil, [][]float64{{0.405, 0}, {-0.405, 0}}},
		// bootstrap: B → A, V(B) = γV(A) = 0.81, V(S) = (0.81 + 0.729)/2 = 0.7695.
		{"truncation bootstrap", truncation(), func(o *Options) { o.Truncation = TruncBootstrap },
			[][]float64{{0.0405, 0}, {-0.0405, 0}}},
		// bootstrap into a state nobody left: Z reaches no sink, nor does B: both keep V = 0.
		{"truncation bootstrap dead end", batch(1, ep(0, 1, "S", "A", "G"), cut(ep(0, 0, "S", "B", "Z"))),
			func(o *Options) { o.Truncation = TruncBootstrap }, [][]float64{{0.405, 0}, {-0.405, 0}}},

		// Weighting. At S, action left went once to A (→ ⊥(1)) and once to B (→ ⊥(0)), right once
		// to A. count: V(S) = (0.81 + 0 + 0.81)/3 = 0.54.
		{"count weighting", weighting(), nil, [][]float64{{0.27, 0}, {-0.54, 0}, {0.27, 0}}},
		// uniform: Q(left) = (0.81 + 0)/2, Q(right) = 0.81, V(S) = (0.405 + 0.81)/2 = 0.6075.
		{"uniform weighting", weighting(), func(o *Options) { o.PolicyWeighting = WeightUniform },
			[][]float64{{0.2025, 0}, {-0.6075, 0}, {0.2025, 0}}},

		// Paper Graph GAE with count weighting equals td: every node's mean TD advantage is 0.
		{"paper count = td", prefixed("R"), func(o *Options) { o.Mode, o.Lambda = ModePaper, 0.5 },
			[][]float64{{0, 0.27, 0}, {0, -0.54, 0}, {0, 0.27, 0}}},
		// With uniform weighting S's instance mean is m(S) = (0.2025 − 0.6075 + 0.2025)/3 = −0.0675,
		// so R → S gets δ + γλ·m(S) + (γλ)²·(⅔m(A) + ⅓m(B)) = 0 + 0.45·(−0.0675) + 0.
		{"paper uniform, one hop", prefixed("R"), func(o *Options) {
			o.Mode, o.Lambda, o.PolicyWeighting = ModePaper, 0.5, WeightUniform
		}, [][]float64{{-0.030375, 0.2025, 0}, {-0.030375, -0.6075, 0}, {-0.030375, 0.2025, 0}}},
		// Q → R → S: the non-zero mean is two hops away: (γλ)²·m(S) = 0.2025·(−0.0675).
		{"paper uniform, two hops", prefixed("Q", "R"), func(o *Options) {
			o.Mode, o.Lambda, o.PolicyWeighting = ModePaper, 0.5, WeightUniform
		}, [][]float64{{-0.01366875, -0.030375, 0.2025, 0}, {-0.01366875, -0.030375, -0.6075, 0}, {-0.01366875, -0.030375, 0.2025, 0}}},
		// λ = 0 makes every mode td.
		{"paper λ=0", prefixed("Q", "R"), func(o *Options) {
			o.Mode, o.Lambda, o.PolicyWeighting = ModePaper, 0, WeightUniform
		}, [][]float64{{0, 0, 0.2025, 0}, {0, 0, -0.6075, 0}, {0, 0, 0.2025, 0}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			adv, d := mustGRAFT(t, handOpts(c.mod)).Estimate(c.b)
			checkAdv(t, adv, c.want, 1e-9)
			if d["residual"] > 1e-12 {
				t.Errorf("residual %g", d["residual"])
			}
		})
	}
}

// penalty: T1 = S →(invalid, −0.1) S → A → ⊥(1), T2 = S → A → ⊥(1).
func penalty() *rollout.Batch {
	return batch(1, pen(act(ep(0, 1, "S", "S", "A", "G"), 0, "fly"), 0, -0.1), ep(0, 1, "S", "A", "G"))
}

// truncation: T1 = S → A → ⊥(1), T2 = S → B → A truncated.
func truncation() *rollout.Batch {
	return batch(1, ep(0, 1, "S", "A", "G"), cut(ep(0, 0, "S", "B", "A")))
}

// weighting: at S the action "left" leads to A once and to B once, "right" to A once.
func weighting() *rollout.Batch {
	return batch(1, act(ep(0, 1, "S", "A", "G"), 0, "left"), act(ep(0, 0, "S", "B", "X"), 0, "left"),
		act(ep(0, 1, "S", "A", "G"), 0, "right"))
}

// prefixed is weighting() with the given states walked before S.
func prefixed(pre ...string) *rollout.Batch {
	b := weighting()
	for i := range b.Trajs {
		t := &b.Trajs[i]
		var steps []rollout.Step
		for k, p := range pre {
			next := "S"
			if k+1 < len(pre) {
				next = pre[k+1]
			}
			steps = append(steps, rollout.Step{Key: p, NextKey: next, Action: "to " + next})
		}
		t.Steps = append(steps, t.Steps...)
	}
	return b
}

func TestGRAFTValues(t *testing.T) {
	cases := []struct {
		name string
		b    *rollout.Batch
		mod  func(*Options)
		want map[string]float64
	}{
		{"chain", chain(), nil, map[string]float64{"C": 0.45, "B": 0.405, "S": 0.3645, "⊥(1)": 1, "⊥(0)": 0}},
		{"diamond", diamond(), nil, map[string]float64{"M": 0.6, "A": 0.54, "B": 0.54, "S": 0.486}},
		{"trap", trap(), nil, map[string]float64{"P": 0.45, "Q": 0, "S": 0.27}},
		{"all succeed", allWon(), nil, map[string]float64{"A": 0.9, "B": 0.81, "C": 0.9, "S": vAllWon}},
		{"uniform", weighting(), func(o *Options) { o.PolicyWeighting = WeightUniform }, map[string]float64{"S": 0.6075, "A": 0.9, "B": 0}},
		{"bootstrap", truncation(), func(o *Options) { o.Truncation = TruncBootstrap }, map[string]float64{"A": 0.9, "B": 0.81, "S": 0.7695}},
		{"bootstrap dead end", batch(1, ep(0, 1, "S", "A", "G"), cut(ep(0, 0, "S", "B", "Z"))),
			func(o *Options) { o.Truncation = TruncBootstrap }, map[string]float64{"A": 0.9, "B": 0, "Z": 0, "S": 0.405}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkValues(t, values(t, c.b, handOpts(c.mod)), c.want, 1e-10)
		})
	}
}

// A cycle converges to the closed form. T = A → B → A → B → C → ⊥(1): edges A→B twice, B→A and
// B→C once each, C→⊥(1) once. With count weighting
//
//	V(C) = γ,  V(A) = γ·V(B),  V(B) = ½(γV(A) + γV(C)) = ½(γ²V(B) + γ²)
//	⇒ V(B) = γ²/(2 − γ²),  V(A) = γ³/(2 − γ²).
//
// TD: A→B: γV(B) − V(A) = 0; B→A: γV(A) − V(B) = γ²(γ² − 1)/(2 − γ²); B→C: γ² − V(B) = γ²(1 − γ²)/(2 − γ²).
func TestGRAFTCycle(t *testing.T) {
	b := batch(1, ep(0, 1, "A", "B", "A", "B", "C", "G"))
	for _, gamma := range []float64{0.9, 0.99} {
		g2 := gamma * gamma
		vB, vA := g2/(2-g2), gamma*g2/(2-g2)
		o := handOpts(func(o *Options) { o.Gamma = gamma })
		checkValues(t, values(t, b, o), map[string]float64{"A": vA, "B": vB, "C": gamma}, 1e-10)
		adv, d := mustGRAFT(t, o).Estimate(b)
		back := g2 * (g2 - 1) / (2 - g2)
		checkAdv(t, adv, [][]float64{{0, back, 0, -back, 0}}, 1e-10)
		if d["sweeps"] >= float64(o.sweepCap()) || d["residual"] > 1e-13 {
			t.Errorf("γ=%g: %g sweeps (cap %d), residual %g", gamma, d["sweeps"], o.sweepCap(), d["residual"])
		}
	}
	// With the default tolerance the answer is good to well below any advantage that matters.
	o := DefaultOptions()
	o.Mode, o.Normalize = ModeTD, false
	g2 := 0.99 * 0.99
	checkValues(t, values(t, b, o), map[string]float64{"B": g2 / (2 - g2), "A": 0.99 * g2 / (2 - g2)}, 1e-7)
}

// All rollouts succeed: GRPO has nothing to say, GRAFT still ranks by path length.
func TestGRAFTAllSucceeded(t *testing.T) {
	b := allWon()
	adv, _ := mustGRAFT(t, DefaultOptions()).Estimate(b) // path, normalised
	direct, detour, wait := adv[0][0], adv[1][0], adv[2][0]
	if !(direct > 0 && detour < 0 && wait < 0 && direct > detour) {
		t.Errorf("first steps: direct %g, detour %g, self-loop %g; want direct > 0 > detour, self-loop", direct, detour, wait)
	}
	td, _ := mustGRAFT(t, handOpts(func(o *Options) { o.Gamma = 0.99 })).Estimate(b)
	vs := values(t, b, handOpts(func(o *Options) { o.Gamma = 0.99 }))["S"]
	if !near(td[2][0], -(1-0.99)*vs, 1e-12) || td[2][0] >= 0 {
		t.Errorf("self-loop A = %g, want −(1−γ)V(S) = %g", td[2][0], -(1-0.99)*vs)
	}
	g, _ := grpo.New(grpo.DefaultOptions())
	ga, _ := g.Estimate(b)
	for i := range ga {
		for _, a := range ga[i] {
			if a != 0 {
				t.Fatalf("GRPO gives %g on an all-success group, want 0", a)
			}
		}
	}
}

// The trap: GRPO blames the good prefix of the failed rollout; GRAFT's td and paper modes credit
// it. (The default path mode with λ = 0.95 is close to return − V(s_t) and, like any GAE with
// λ → 1, passes most of the fall back to the prefix: −0.30 after normalisation here.)
func TestGRAFTTrapVersusGRPO(t *testing.T) {
	b := trap()
	g, _ := grpo.New(grpo.DefaultOptions())
	ga, _ := g.Estimate(b)
	for _, mode := range []Mode{ModeTD, ModePaper} {
		o := DefaultOptions()
		o.Mode = mode
		adv, _ := mustGRAFT(t, o).Estimate(b)
		if !(ga[1][0] < 0 && adv[1][0] > 0 && adv[1][1] < 0) {
			t.Errorf("%s: T2 = S → P → fall: GRPO %v, GRAFT %v; want GRPO < 0 and GRAFT > 0 then < 0", mode, ga[1], adv[1])
		}
	}
}

// A node left once has nothing to normalise against: Â = sign(A). T1 = X → M → ⊥(1) and
// T2 = Y → M → ⊥(0). In path mode (λ = 0.5) X's step inherits γλ·(γ − V(M)) = 0.2025 > 0.
func TestGRAFTSingletonSign(t *testing.T) {
	b := batch(1, ep(0, 1, "X", "M", "G"), ep(0, 0, "Y", "M", "H"))
	path, d := mustGRAFT(t, handOpts(func(o *Options) { o.Mode, o.Lambda, o.Normalize = ModePath, 0.5, true })).Estimate(b)
	checkAdv(t, path, [][]float64{{1, 1}, {-1, -1}}, 1e-9)
	if d["singleton_share"] != 0.5 {
		t.Errorf("singleton_share = %g, want 0.5", d["singleton_share"])
	}
	// In td mode a lone TD advantage is its node's Bellman residual: 0, not the sign of noise.
	o := DefaultOptions()
	o.Mode = ModeTD
	td, _ := mustGRAFT(t, o).Estimate(b)
	checkAdv(t, td, [][]float64{{0, 1}, {0, -1}}, 1e-5)
}

// A node whose advantages agree to σ_u ≤ 1e-9 gets Â = 0 (Eq. 11). T1 and T2 both go S → ⊥(1);
// T2's step pays a reward d. V(S) = (γ + (d + γ))/2 = γ + d/2, so δ = γ − V(S) = −d/2 and
// d + γ − V(S) = +d/2: μ_S 0, population σ_S = d/2. d = 2e-12 gives σ 1e-12 ≤ 1e-9: both 0
// (dividing would give ∓1e-12/(1e-12 + 1e-6) ≈ ∓1e-6, and ∓1/2 with ε 1e-12). d = 2e-8 gives
// σ 1e-8 > 1e-9: ∓1e-8/(1e-8 + ε). Path mode gives the same (one step each).
func TestGRAFTFlatNode(t *testing.T) {
	flat := func(d float64) *rollout.Batch {
		return batch(1, ep(0, 1, "S", "G"), pen(ep(0, 1, "S", "G"), 0, d))
	}
	for _, mode := range []Mode{ModeTD, ModePath} {
		for _, eps := range []float64{1e-6, 1e-12} {
			o := DefaultOptions()
			o.Mode, o.Eps = mode, eps
			adv, _ := mustGRAFT(t, o).Estimate(flat(2e-12))
			if adv[0][0] != 0 || adv[1][0] != 0 {
				t.Errorf("%s, ε %g: σ 1e-12 gives %g, %g; want 0, 0", mode, eps, adv[0][0], adv[1][0])
			}
			a := 1e-8 / (1e-8 + eps)
			adv, _ = mustGRAFT(t, o).Estimate(flat(2e-8))
			checkAdv(t, adv, [][]float64{{-a}, {a}}, 1e-6*a)
		}
	}
}

func TestGRAFTDiagnostics(t *testing.T) {
	_, d := mustGRAFT(t, DefaultOptions()).Estimate(trap())
	// Nodes S, P, Q (T2's fall and T3's last step go to sinks); sinks ⊥(1), ⊥(0); distinct edges
	// S→P, S→Q, P→⊥(1), P→⊥(0), Q→⊥(0); 6 instances; Q's is alone.
	want := map[string]float64{"nodes": 3, "sinks": 2, "edges": 5, "edge_instances": 6, "merge_ratio": 2,
		"singleton_share": 1.0 / 6, "unreachable_share": 0}
	for k, v := range want {
		if !near(d[k], v, 1e-12) {
			t.Errorf("%s = %g, want %g", k, d[k], v)
		}
	}
	for _, k := range []string{"sweeps", "residual", "adv_mean", "adv_std", "adv_zero_share"} {
		if _, ok := d[k]; !ok {
			t.Errorf("diagnostic %s missing", k)
		}
	}
	_, d = mustGRAFT(t, handOpts(func(o *Options) { o.Truncation = TruncBootstrap })).Estimate(
		batch(1, ep(0, 1, "S", "A", "G"), cut(ep(0, 0, "S", "B", "Z"))))
	if d["unreachable_share"] != 0.5 || d["sinks"] != 1 {
		t.Errorf("bootstrap dead end: unreachable_share %g, sinks %g; want 0.5 (B, Z of S, A, B, Z), 1", d["unreachable_share"], d["sinks"])
	}
}

// Errored trajectories are left out of the graph and get 0; an empty one adds nothing.
func TestGRAFTErroredAndEmpty(t *testing.T) {
	clean, _ := mustGRAFT(t, DefaultOptions()).Estimate(trap())
	b := trap()
	bad := ep(0, 1, "S", "Q", "G") // would make Q valuable
	bad.Err = "env fault"
	b.Trajs = append(b.Trajs, bad, ep(0, 0, "S"))
	adv, d := mustGRAFT(t, DefaultOptions()).Estimate(b)
	checkAdv(t, adv, append(clean, []float64{0, 0}, []float64{}), 0)
	if d["edge_instances"] != 6 {
		t.Errorf("edge_instances = %g, want 6", d["edge_instances"])
	}
}

// Graphs are per task: the same keys in another task are other nodes.
func TestGRAFTPerTask(t *testing.T) {
	b := batch(2, ep(0, 1, "S", "A", "G"), ep(1, 0, "S", "A", "X"), ep(0, 0, "S", "B", "X"), ep(1, 0, "S", "B", "X"))
	adv, _ := mustGRAFT(t, handOpts(nil)).Estimate(b)
	// Task 0: V(A) = 0.9, V(B) = 0, V(S) = 0.405; task 1: everything 0.
	checkAdv(t, adv, [][]float64{{0.405, 0}, {0, 0}, {-0.405, 0}, {0, 0}}, 1e-10)
}

// Every estimator gives A ≡ 0 when every rollout failed.
func TestAllFailedAllEstimators(t *testing.T) {
	b := batch(2,
		ep(0, 0, "S", "A", "B", "A", "X"), ep(0, 0, "S", "B", "Y"), cut(ep(0, 0, "S", "S", "A", "A")),
		ep(1, 0, "S", "C"), cut(ep(1, 0, "S", "D", "S")))
	for name, est := range allEstimators(t) {
		adv, d := est.Estimate(b)
		for i := range adv {
			for k, a := range adv[i] {
				if a != 0 {
					t.Errorf("%s: A[%d][%d] = %g, want 0", name, i, k, a)
				}
			}
		}
		if d["adv_zero_share"] != 1 {
			t.Errorf("%s: adv_zero_share = %g", name, d["adv_zero_share"])
		}
	}
}

type estimator interface {
	Estimate(*rollout.Batch) (rollout.Advantages, rollout.Diagnostics)
}

// allEstimators is every estimator in every mode worth telling apart.
func allEstimators(t testing.TB) map[string]estimator {
	t.Helper()
	m := map[string]estimator{}
	add := func(name string, e estimator, err error) {
		if err != nil {
			t.Fatal(name, err)
		}
		m[name] = e
	}
	g, err := grpo.New(grpo.DefaultOptions())
	add("grpo", g, err)
	dr, err := grpo.NewDrGRPO(grpo.DefaultOptions())
	add("drgrpo", dr, err)
	for _, norm := range []grpo.Norm{grpo.MeanStdNorm, grpo.MeanNorm} {
		o := grpo.DefaultGiGPOOptions()
		o.Norm = norm
		gi, err := grpo.NewGiGPO(o)
		add("gigpo/"+string(norm), gi, err)
		go2 := DefaultGraphGPOOptions()
		go2.Norm = norm
		gg, err := NewGraphGPO(go2)
		add("graphgpo/"+string(norm), gg, err)
	}
	o := DefaultGraphGPOOptions()
	o.NormalizeDistance = true
	gg, err := NewGraphGPO(o)
	add("graphgpo/normalize_distance", gg, err)
	for _, mode := range []Mode{ModePath, ModeTD, ModePaper} {
		for _, w := range []Weighting{WeightCount, WeightUniform} {
			for _, tr := range []Truncation{TruncSinkZero, TruncBootstrap} {
				for _, norm := range []bool{true, false} {
					o := DefaultOptions()
					o.Mode, o.PolicyWeighting, o.Truncation, o.Normalize = mode, w, tr, norm
					o.EpisodeWeight = 0.5
					x, err := New(o)
					add("graft/"+string(mode)+"/"+string(w)+"/"+string(tr)+"/"+map[bool]string{true: "norm", false: "raw"}[norm], x, err)
				}
			}
		}
	}
	return m
}

func TestOptionsValidate(t *testing.T) {
	bad := []struct {
		mod  func(*Options)
		want string
	}{
		{func(o *Options) { o.Gamma = 1 }, `key "gamma": value 1 is out of range (allowed (0, 1))`},
		{func(o *Options) { o.Gamma = 0 }, `key "gamma": value 0 `},
		{func(o *Options) { o.Lambda = -0.1 }, `key "lambda": value -0.1 is out of range (allowed [0, 1])`},
		{func(o *Options) { o.Mode = "gae" }, `key "mode": value "gae" is not allowed (allowed path, td, paper)`},
		{func(o *Options) { o.PolicyWeighting = "softmax" }, `key "policy_weighting": value "softmax" `},
		{func(o *Options) { o.Truncation = "drop" }, `key "truncation": value "drop" `},
		{func(o *Options) { o.Eps = 0 }, `key "eps": value 0 `},
		{func(o *Options) { o.Tol = math.NaN() }, `key "tol": value NaN `},
		{func(o *Options) { o.EpisodeWeight = math.Inf(-1) }, `key "episode_weight": value -Inf `},
		{func(o *Options) { o.EpisodeNorm = "x" }, `key "episode_norm": value "x" `},
		{func(o *Options) { o.EpisodeStd = "unbiased" }, `key "episode_std": value "unbiased" is not allowed (allowed sample, population)`},
		{func(o *Options) { o.EpisodeStd = "" }, `key "episode_std": value "" is not allowed (allowed sample, population)`},
		{func(o *Options) { o.Score = "x" }, `key "score": value "x" `},
	}
	for _, c := range bad {
		o := DefaultOptions()
		c.mod(&o)
		if _, err := New(o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want it to contain %q", err, c.want)
		}
	}
	badG := []struct {
		mod  func(*GraphGPOOptions)
		want string
	}{
		{func(o *GraphGPOOptions) { o.GammaG = 0 }, `key "gamma_g": value 0 is out of range (allowed (0, 1])`},
		{func(o *GraphGPOOptions) { o.Norm = "z" }, `key "norm": value "z" `},
		{func(o *GraphGPOOptions) { o.Std = "bessel" }, `key "std": value "bessel" is not allowed (allowed sample, population)`},
		{func(o *GraphGPOOptions) { o.Std = "" }, `key "std": value "" is not allowed (allowed sample, population)`},
		{func(o *GraphGPOOptions) { o.Eps = -1 }, `key "eps": value -1 `},
		{func(o *GraphGPOOptions) { o.EpisodeWeight = math.NaN() }, `key "episode_weight": value NaN `},
		{func(o *GraphGPOOptions) { o.StepWeight = math.Inf(1) }, `key "step_weight": value +Inf `},
		{func(o *GraphGPOOptions) { o.Score = "" }, `key "score": value "" `},
	}
	for _, c := range badG {
		o := DefaultGraphGPOOptions()
		c.mod(&o)
		if _, err := NewGraphGPO(o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want it to contain %q", err, c.want)
		}
	}
	if err := DefaultOptions().Validate(); err != nil {
		t.Error(err)
	}
	if err := DefaultGraphGPOOptions().Validate(); err != nil {
		t.Error(err)
	}
	// ⌈log 1e-8 / log 0.99⌉ + 50 = 1833 + 50.
	if c := DefaultOptions().sweepCap(); c != 1883 {
		t.Errorf("sweep cap %d, want 1883", c)
	}
}

// Options decode from a config's snake_case keys onto the defaults; omitted booleans stay true.
func TestOptionsYAML(t *testing.T) {
	o := DefaultOptions()
	dec := yaml.NewDecoder(bytes.NewReader([]byte(
		"gamma: 0.95\nlambda: 1\nmode: paper\npolicy_weighting: uniform\ntruncation: bootstrap\n" +
			"episode_weight: 0.5\nepisode_norm: mean_norm\nepisode_std: population\nscore: outcome\ntol: 1e-10\neps: 1e-5\n")))
	dec.KnownFields(true)
	if err := dec.Decode(&o); err != nil {
		t.Fatal(err)
	}
	want := Options{Gamma: 0.95, Lambda: 1, Mode: ModePaper, PolicyWeighting: WeightUniform,
		Truncation: TruncBootstrap, UseStepRewards: true, Normalize: true, Eps: 1e-5, Tol: 1e-10,
		EpisodeWeight: 0.5, EpisodeNorm: grpo.MeanNorm, EpisodeStd: grpo.StdPopulation, Score: grpo.ScoreOutcome}
	if o != want {
		t.Errorf("decoded %+v\nwant    %+v", o, want)
	}
	if err := o.Validate(); err != nil {
		t.Error(err)
	}
	g := DefaultGraphGPOOptions()
	if err := yaml.Unmarshal([]byte("gamma_g: 0.5\nnormalize_distance: true\nstep_weight: 2\n"), &g); err != nil {
		t.Fatal(err)
	}
	if g.GammaG != 0.5 || !g.NormalizeDistance || g.StepWeight != 2 || g.EpisodeWeight != 1 || g.Std != grpo.StdSample {
		t.Errorf("decoded %+v", g)
	}
	if err := yaml.Unmarshal([]byte("std: population\n"), &g); err != nil || g.Std != grpo.StdPopulation {
		t.Errorf("std: population decoded %+v, %v", g, err)
	}
	if d := DefaultOptions(); d.EpisodeStd != grpo.StdSample {
		t.Errorf("default episode_std %q, want sample", d.EpisodeStd)
	}
}
