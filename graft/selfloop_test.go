package graft

import (
	"math"
	"testing"

	"github.com/graftrl/graftrl/advantage"
	"github.com/graftrl/graftrl/grpo"
	"github.com/graftrl/graftrl/rollout"
)

// Idle steps. The maze's idle action look changes nothing but spends a turn (step reward 0): the
// state key stays the same, so an idle step is a self-loop φ(s_t) = φ(s_{t+1}) of the task's
// trajectory graph. The tests below pin down, on one hand-built group, what every estimator gives
// such steps, with each expected value worked out from ALGORITHMS.md by hand.
//
// Defaults used (ALGORITHMS.md): GRPO sample std, score return, ε 1e-6; GiGPO γ 0.95, ω 1;
// GraphGPO γ_g 0.1, episode and step weights 1 : 1; GRAFT γ 0.99, λ 0.95, mode path, count
// weighting, per-node normalisation with population σ and ε 1e-6, episode weight 0. The episode
// and step terms of GiGPO and GraphGPO and GRAFT's episode term divide by the sample std (n − 1
// over a group of n), as GRPO does (docs/ALGORITHMS.md §1); `std: population` (`episode_std`
// for GRAFT) divides by n.

// idleBatch is one task rolled out three times on the states A (start), B, C; G is the goal and
// X a trap:
//
//	T1 success, idles twice:  A →look→ A → B →look→ B → G   (steps 0 and 2 are self-loops)
//	T2 success, straight:     A → B → G
//	T3 failure:               A → C → X
//
// Steps leaving each node (GRAFT's Eq. 11 groups and GiGPO's and GraphGPO's anchor groups alike):
// A: T1[0] (look), T1[1], T2[0], T3[0]; B: T1[2] (look), T1[3], T2[1]; C: T3[1] alone.
func idleBatch() *rollout.Batch {
	idle := act(act(ep(0, 1, "A", "A", "B", "B", "G"), 0, "look"), 2, "look")
	return batch(1, idle, ep(0, 1, "A", "B", "G"), ep(0, 0, "A", "C", "X"))
}

// costBatch is idleBatch with a per-step reward of −0.1 on each of T1's two looks: what a
// per-step cost on idling would do (the maze's look itself costs nothing).
func costBatch() *rollout.Batch {
	b := idleBatch()
	b.Trajs[0] = pen(pen(b.Trajs[0], 0, -0.1), 2, -0.1)
	return b
}

// Hand values of idleBatch (and costBatch, whose looks pay r) under GRAFT with count weighting.
// C's only edge goes to ⊥(0), so V(C) = γ·0 = 0. B is left three times: its look (r + γV(B)) and
// twice into ⊥(1) (γ·1 each); A is left four times: its look (r + γV(A)), twice to B, once to C:
//
//	V(B) = (r + γV(B) + 2γ)/3           ⇒  V(B) = (r + 2γ)/(3 − γ)
//	V(A) = (r + γV(A) + 2γV(B) + 0)/4   ⇒  V(A) = (r + 2γV(B))/(4 − γ)
//
// γ 0.99, r 0: V(B) = 1.98/2.01 = 66/67 ≈ 0.985075, V(A) = 1.98·V(B)/3.01 ≈ 0.647989.
// γ 0.9,  r 0: V(B) = 1.8/2.1 = 6/7, V(A) = 1.8·(6/7)/3.1 = 108/217 ≈ 0.497696.
func idleValues(gamma, r float64) (vA, vB float64) {
	vB = (r + 2*gamma) / (3 - gamma)
	vA = (r + 2*gamma*vB) / (4 - gamma)
	return vA, vB
}

// idleTD is the one-step TD advantage δ_t = r_t + γV(s_{t+1}) − V(s_t) of every step of idleBatch
// (Eq. 8), the sinks standing for the last states: a look at u gives r + γV(u) − V(u) =
// r − (1−γ)V(u); A → B gives γV(B) − V(A); B → ⊥(1) gives γ − V(B); A → C gives γ·0 − V(A) = −V(A);
// C → ⊥(0) gives 0 − 0.
func idleTD(gamma, r float64) [][]float64 {
	vA, vB := idleValues(gamma, r)
	lookA, lookB := r-(1-gamma)*vA, r-(1-gamma)*vB
	ab, bg := gamma*vB-vA, gamma-vB
	return [][]float64{{lookA, ab, lookB, bg}, {ab, bg}, {-vA, 0}}
}

// idlePath is the default path mode on idleBatch: A_t = δ_t + γλ·A_{t+1} backwards along each
// trajectory's own steps (GAE with graph values), from the TD advantages td.
func idlePath(td [][]float64, gl float64) [][]float64 {
	out := make([][]float64, len(td))
	for i, row := range td {
		out[i] = make([]float64, len(row))
		next := 0.0
		for k := len(row) - 1; k >= 0; k-- {
			next = row[k] + gl*next
			out[i][k] = next
		}
	}
	return out
}

// znorm is the group normalisation written out: (x − μ)/(σ + ε) with μ the mean and σ the std of
// xs in the form std: √(Σ(x − μ)²/n) for population (GRAFT's Eq. 11), √(Σ(x − μ)²/(n − 1)) for
// sample (GiGPO's and GraphGPO's step groups by default).
func znorm(eps float64, std grpo.Std, xs ...float64) []float64 {
	var mu, ss float64
	for _, x := range xs {
		mu += x
	}
	mu /= float64(len(xs))
	for _, x := range xs {
		ss += (x - mu) * (x - mu)
	}
	n := float64(len(xs))
	if std == grpo.StdSample {
		n--
	}
	sigma := math.Sqrt(ss / n)
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = (x - mu) / (sigma + eps)
	}
	return out
}

// perNode normalises advantages laid out like idleBatch within the groups of steps leaving A and
// B, with the std form std; C's lone step gets alone(its value). plus is added to each
// trajectory's steps afterwards (the episode term; nil for none).
func perNode(raw [][]float64, std grpo.Std, alone func(float64) float64, plus []float64) [][]float64 {
	a := znorm(1e-6, std, raw[0][0], raw[0][1], raw[1][0], raw[2][0])
	b := znorm(1e-6, std, raw[0][2], raw[0][3], raw[1][1])
	out := [][]float64{{a[0], a[1], b[0], b[1]}, {a[2], b[2]}, {a[3], alone(raw[2][1])}}
	for i := range out {
		for k := range out[i] {
			if plus != nil {
				out[i][k] += plus[i]
			}
		}
	}
	return out
}

// zeroAlone is the rule of GiGPO's and GraphGPO's step groups: a lone step gets 0.
func zeroAlone(float64) float64 { return 0 }

// signAlone is GRAFT's Eq. 11 rule for a lone step: sign(A), and 0 where |A| ≤ ε.
func signAlone(x float64) float64 {
	switch {
	case x > 1e-6:
		return 1
	case x < -1e-6:
		return -1
	}
	return 0
}

// episodePop is A^E of idleBatch with the population std: R = [1, 1, 0], μ = 2/3, σ =
// √((1/9 + 1/9 + 4/9)/3) = √2/3, so A^E = (1/3)/(√2/3 + ε) ≈ 1/√2 ≈ 0.707105 for the successes
// and (−2/3)/(√2/3 + ε) ≈ −√2 ≈ −1.414211 for the failure.
func episodePop() []float64 {
	s := math.Sqrt2/3 + 1e-6
	return []float64{(1.0 / 3) / s, (1.0 / 3) / s, (-2.0 / 3) / s}
}

// episodeSample is A^E of idleBatch with the sample std (the default): σ = √((1/9 + 1/9 +
// 4/9)/2) = 1/√3, so A^E = (1/3)/(1/√3 + ε) ≈ 1/√3 ≈ 0.577349 for the successes and
// (−2/3)/(1/√3 + ε) ≈ −2/√3 ≈ −1.154699 for the failure: GRPO's advantages of idleBatch.
func episodeSample() []float64 {
	s := 1/math.Sqrt(3) + 1e-6
	return []float64{(1.0 / 3) / s, (1.0 / 3) / s, (-2.0 / 3) / s}
}

// selfLoopCase is one estimator configuration on a hand-built batch: want is every step's
// advantage (formula-derived, checked to 1e-9), looks the advantages of T1's look at A and at B
// rounded to 6 decimals (checked to 1e-6), so the self-loop values stand in the test as numbers.
type selfLoopCase struct {
	name  string
	est   string
	opts  map[string]any
	b     *rollout.Batch
	want  [][]float64
	looks [2]float64
}

func runSelfLoop(t *testing.T, cases []selfLoopCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x, err := advantage.New(c.est, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			adv, _ := x.Estimate(c.b)
			checkAdv(t, adv, c.want, 1e-9)
			for k, step := range []int{0, 2} {
				if !near(adv[0][step], c.looks[k], 1e-6) {
					t.Errorf("look at %s (T1 step %d) = %.7f, want %.6f", "AB"[k:k+1], step, adv[0][step], c.looks[k])
				}
			}
		})
	}
}

// TestSelfLoopGRAFTValues checks the graph values of idleBatch against the closed forms of
// idleValues: a self-loop enters V(u) as one more instance of γV(u), solved exactly.
func TestSelfLoopGRAFTValues(t *testing.T) {
	cases := []struct {
		name     string
		b        *rollout.Batch
		mod      func(*Options)
		gamma, r float64
	}{
		{"defaults γ 0.99", idleBatch(), nil, 0.99, 0},
		{"γ 0.9", idleBatch(), func(o *Options) { o.Gamma = 0.9 }, 0.9, 0},
		// Looks paying −0.1: V(B) = (−0.1 + 1.98)/2.01 ≈ 0.935323, V(A) = (−0.1 + 1.98·V(B))/3.01 ≈ 0.582040.
		{"look cost −0.1", costBatch(), nil, 0.99, -0.1},
		// use_step_rewards false drops the cost: back to the r = 0 values.
		{"look cost ignored", costBatch(), func(o *Options) { o.UseStepRewards = false }, 0.99, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := DefaultOptions()
			if c.mod != nil {
				c.mod(&o)
			}
			vA, vB := idleValues(c.gamma, c.r)
			checkValues(t, values(t, c.b, o), map[string]float64{"A": vA, "B": vB, "C": 0, "⊥(1)": 1, "⊥(0)": 0}, 1e-9)
		})
	}
	// The numbers of the comments, as numbers.
	vA, vB := idleValues(0.99, 0)
	if !near(vB, 66.0/67, 1e-15) || !near(vA, 0.647989, 1e-6) {
		t.Errorf("γ 0.99: V(A) = %g, V(B) = %g; want ≈ 0.647989 and 66/67", vA, vB)
	}
	vA, vB = idleValues(0.9, 0)
	if !near(vB, 6.0/7, 1e-15) || !near(vA, 108.0/217, 1e-15) {
		t.Errorf("γ 0.9: V(A) = %g, V(B) = %g; want 108/217 and 6/7", vA, vB)
	}
}

// TestSelfLoopGRPO checks that GRPO gives each look exactly its trajectory's advantage: with the
// defaults the idle steps of T1 get the same positive A as T2's useful steps. A per-step cost on
// the looks lowers T1's score (score return) but leaves its looks positive; with score outcome
// the cost is invisible.
func TestSelfLoopGRPO(t *testing.T) {
	// Defaults: R = [1, 1, 0], μ = 2/3, sample std √((1/9 + 1/9 + 4/9)/2) = 1/√3:
	// successes (1/3)/(1/√3 + ε) ≈ 0.577349, failure (−2/3)/(1/√3 + ε) ≈ −1.154699.
	s := 1/math.Sqrt(3) + 1e-6
	win, loss := (1.0/3)/s, (-2.0/3)/s
	// std population: σ = √2/3, so ≈ ±(1/√2, √2) (episodePop).
	pop := episodePop()
	// Look cost, score return: R = [1 − 0.2, 1, 0], μ 0.6, deviations 0.2, 0.4, −0.6, sample std
	// √((0.04 + 0.16 + 0.36)/2) = √0.28 ≈ 0.529150: T1 0.2/(√0.28 + ε) ≈ 0.377964, T2 ≈ 0.755928,
	// T3 ≈ −1.133891.
	c := math.Sqrt(0.28) + 1e-6
	t1, t2, t3 := 0.2/c, 0.4/c, -0.6/c
	runSelfLoop(t, []selfLoopCase{
		{"grpo defaults", "grpo", nil, idleBatch(),
			[][]float64{{win, win, win, win}, {win, win}, {loss, loss}}, [2]float64{0.577349, 0.577349}},
		{"grpo std population", "grpo", map[string]any{"std": "population"}, idleBatch(),
			[][]float64{{pop[0], pop[0], pop[0], pop[0]}, {pop[1], pop[1]}, {pop[2], pop[2]}}, [2]float64{0.707105, 0.707105}},
		// Dr.GRPO: R − μ = 1/3 and −2/3, no division.
		{"drgrpo", "drgrpo", nil, idleBatch(),
			[][]float64{{1.0 / 3, 1.0 / 3, 1.0 / 3, 1.0 / 3}, {1.0 / 3, 1.0 / 3}, {-2.0 / 3, -2.0 / 3}}, [2]float64{0.333333, 0.333333}},
		{"grpo look cost, score return", "grpo", nil, costBatch(),
			[][]float64{{t1, t1, t1, t1}, {t2, t2}, {t3, t3}}, [2]float64{0.377964, 0.377964}},
		{"grpo look cost, score outcome", "grpo", map[string]any{"score": "outcome"}, costBatch(),
			[][]float64{{win, win, win, win}, {win, win}, {loss, loss}}, [2]float64{0.577349, 0.577349}},
	})
}

// TestSelfLoopGRAFT checks GRAFT's advantages of idleBatch in its modes and options. Raw (no
// normalisation) the TD advantage of a look at u is −(1−γ)V(u) < 0 (and r − (1−γ)V(u) with a step
// cost r): V(s') − V(s) = 0 minus the discount. Per-node normalisation turns the look at B, where
// every other step goes straight to the goal, into −√2 whatever γ, and leaves the look at A a
// small negative number beside the failure's −1.63. The default path mode (λ 0.95) passes the
// advantage of the steps after the look at A back onto it: +0.53 there, nearly the +0.59/+0.61 of
// the moves A → B; the look at B stays ≈ −√2.
func TestSelfLoopGRAFT(t *testing.T) {
	td := idleTD(0.99, 0)
	// td at γ 0.99: T1 [−0.01·V(A) ≈ −0.006480, γV(B) − V(A) ≈ 0.327235, −0.01·V(B) ≈ −0.009851,
	// 0.99 − V(B) ≈ 0.004925], T2 [0.327235, 0.004925], T3 [−V(A) ≈ −0.647989, 0].
	// Normalised: A {−0.006480, 0.327235, 0.327235, −0.647989}: μ 0 (the Bellman equation of A),
	// σ ≈ 0.398151 → {−0.016275, 0.821883, 0.821883, −1.627492}. B {−2c, c, c} with c = 0.99 − V(B)
	// (look: −(1−γ)·2γ/(3−γ) = −2·γ(1−γ)/(3−γ)): μ 0, σ = c√2 → {−√2, 1/√2, 1/√2} up to ε
	// (≈ −1.414011, 0.707005). C: δ = 0 alone → 0.
	tdNorm := perNode(td, grpo.StdPopulation, signAlone, nil)
	// Path, γλ = 0.9405, backwards: T1 a3 = 0.004925, a2 = −0.009851 + 0.9405·a3 ≈ −0.005218,
	// a1 = 0.327235 + 0.9405·a2 ≈ 0.322327, a0 = −0.006480 + 0.9405·a1 ≈ 0.296668; T2 b1 = 0.004925,
	// b0 = 0.327235 + 0.9405·b1 ≈ 0.331867; T3 [−0.647989, 0].
	path := idlePath(td, 0.99*0.95)
	// Normalised: A {0.296668, 0.322327, 0.331867, −0.647989}: μ ≈ 0.075718, σ ≈ 0.418031 →
	// {0.528549, 0.589927, 0.612749, −1.731225}. B {−0.005218, 0.004925, 0.004925}: μ ≈ 0.001544,
	// σ ≈ 0.004782 → {−1.413918, 0.706959, 0.706959}.
	pathNorm := perNode(path, grpo.StdPopulation, signAlone, nil)
	// γ 0.9, td: A {−0.049770, 0.273733, 0.273733, −0.497696}, σ ≈ 0.316243 →
	// {−0.157377, 0.865576, 0.865576, −1.573774}; B {−0.6/7, 0.3/7, 0.3/7} → {−√2, 1/√2, 1/√2}
	// (≈ −1.414190).
	td9 := perNode(idleTD(0.9, 0), grpo.StdPopulation, signAlone, nil)
	// episode_weight 1 adds A^E with the default sample std (episodeSample, ≈ +0.577349 on T1
	// and T2, −1.154699 on T3): look at A −0.016275 + 0.577349 ≈ 0.561074, look at B
	// −1.414011 + 0.577349 ≈ −0.836661. Eq. 11 stays population whatever episode_std says.
	tdEp := perNode(td, grpo.StdPopulation, signAlone, episodeSample())
	// episode_std population (episodePop, ≈ +0.707105, −1.414211), the previous convention:
	// look at A −0.016275 + 0.707105 ≈ 0.690830, look at B −1.414011 + 0.707105 ≈ −0.706905.
	tdEpPop := perNode(td, grpo.StdPopulation, signAlone, episodePop())
	// Uniform weighting averages over distinct actions: at A {look, to B, to C}, at B {look, to G}.
	// V(B) = (γV(B) + γ)/2 ⇒ γ/(2 − γ) = 0.99/1.01 ≈ 0.980198; V(A) = (γV(A) + γV(B) + 0)/3 ⇒
	// γV(B)/(3 − γ) ≈ 0.482784. Raw δ: look at A −0.01·V(A) ≈ −0.004828, A → B γV(B) − V(A) ≈
	// 0.487612, A → C −V(A); look at B −0.01·V(B) ≈ −0.009802, B → ⊥(1) 0.99 − V(B) ≈ 0.009802.
	g := 0.99
	uB := g / (2 - g)
	uA := g * uB / (3 - g)
	uni := [][]float64{{-(1 - g) * uA, g*uB - uA, -(1 - g) * uB, g - uB}, {g*uB - uA, g - uB}, {-uA, 0}}
	// Look cost −0.1 (costBatch), raw td: V(A) ≈ 0.582040, V(B) ≈ 0.935323 (idleValues); looks
	// −0.1 − 0.01·V(A) ≈ −0.105820 and −0.1 − 0.01·V(B) ≈ −0.109353.
	cost := idleTD(0.99, -0.1)

	runSelfLoop(t, []selfLoopCase{
		{"defaults (path, λ 0.95, normalised)", "graft", nil, idleBatch(), pathNorm, [2]float64{0.528549, -1.413918}},
		// Without Eq. 11 the look at A keeps a positive path advantage.
		{"path, normalize false", "graft", map[string]any{"normalize": false}, idleBatch(), path, [2]float64{0.296668, -0.005218}},
		// λ = 0 is td.
		{"path λ 0", "graft", map[string]any{"lambda": 0}, idleBatch(), tdNorm, [2]float64{-0.016275, -1.414011}},
		{"td", "graft", map[string]any{"mode": "td"}, idleBatch(), tdNorm, [2]float64{-0.016275, -1.414011}},
		// Count weighting: every node's mean TD advantage is 0 (A and B above), so paper = td.
		{"paper", "graft", map[string]any{"mode": "paper"}, idleBatch(), tdNorm, [2]float64{-0.016275, -1.414011}},
		{"td, normalize false", "graft", map[string]any{"mode": "td", "normalize": false}, idleBatch(), td, [2]float64{-0.006480, -0.009851}},
		// A smaller γ makes the look at A cost more relative to its alternatives; B stays −√2.
		{"td γ 0.9", "graft", map[string]any{"mode": "td", "gamma": 0.9}, idleBatch(), td9, [2]float64{-0.157377, -1.414190}},
		{"td episode_weight 1", "graft", map[string]any{"mode": "td", "episode_weight": 1}, idleBatch(), tdEp, [2]float64{0.561074, -0.836661}},
		{"td episode_weight 1, episode_std population", "graft", map[string]any{"mode": "td", "episode_weight": 1, "episode_std": "population"},
			idleBatch(), tdEpPop, [2]float64{0.690830, -0.706905}},
		{"td uniform, normalize false", "graft", map[string]any{"mode": "td", "normalize": false, "policy_weighting": "uniform"},
			idleBatch(), uni, [2]float64{-0.004828, -0.009802}},
		{"td look cost, normalize false", "graft", map[string]any{"mode": "td", "normalize": false}, costBatch(), cost, [2]float64{-0.105820, -0.109353}},
		// use_step_rewards false drops the cost from V and δ: the r = 0 numbers.
		{"td look cost ignored, normalize false", "graft", map[string]any{"mode": "td", "normalize": false, "use_step_rewards": false},
			costBatch(), td, [2]float64{-0.006480, -0.009851}},
	})
}

// TestSelfLoopGraphGPO checks GraphGPO on idleBatch. A look at u steps to u itself, so its step
// return is 10·γ_g^{d(u)}: one hop further from the goal than the move it delays. At B that is
// −2/√3 (normalised with the default sample std) against the forward steps' 1/√3; at A it is
// below the moves to B and above the move into the trap. The episode term (weight 1 by default)
// adds ≈ 1/√3 to every step of a success, which makes the look at A ≈ −0.204 and the look at B
// ≈ −0.577.
func TestSelfLoopGraphGPO(t *testing.T) {
	// Successes' last steps go to GOAL. Reverse BFS: d(GOAL) = 0, d(B) = 1, d(A) = 2; C and X never
	// reach GOAL: d_max + 1 = 3. g_t = 10·0.1^{d(s_{t+1})}:
	// T1 [A→A 10·0.1² = 0.1, A→B 1, B→B 1, B→GOAL 10], T2 [1, 10], T3 [A→C 0.01, C→X 0.01].
	gt := [][]float64{{0.1, 1, 1, 10}, {1, 10}, {0.01, 0.01}}
	// Step groups, sample std: A {0.1, 1, 1, 0.01}: μ 0.5275, deviations −0.4275, 0.4725, 0.4725,
	// −0.5175, Σd² = 0.897075, σ = √(0.897075/3) = √0.299025 ≈ 0.546832 → {−0.781775, 0.864067,
	// 0.864067, −0.946359}. B {1, 10, 10}: μ 7, deviations −6, 3, 3, Σd² = 54, σ = √(54/2) = 3√3
	// → {−2/√3, 1/√3, 1/√3} ≈ {−1.154700, 0.577350, 0.577350}. C alone → 0.
	steps := perNode(gt, grpo.StdSample, zeroAlone, nil)
	// Plus A^E (episodeSample, ≈ +0.577349, −1.154699): T1 [−0.204425, 1.441416, −0.577351,
	// 1.154699], T2 [1.441416, 1.154699], T3 [−2.101057, −1.154699].
	both := perNode(gt, grpo.StdSample, zeroAlone, episodeSample())
	// std population, the previous convention: A σ = √(0.897075/4) ≈ 0.473570 → look −0.902715;
	// B σ = √(54/3) = 3√2 → {−√2, 1/√2, 1/√2}. Plus A^E (episodePop): T1 [−0.195610, 1.704843,
	// −0.707108, 1.414212], T2 [1.704843, 1.414212], T3 [−2.506971, −1.414211].
	bothPop := perNode(gt, grpo.StdPopulation, zeroAlone, episodePop())
	// mean_norm divides by 1: A^S is the deviation itself (A: −0.4275 …, B: −6, 3, 3).
	meanNorm := [][]float64{{-0.4275, 0.4725, -6, 3}, {0.4725, 3}, {-0.5175, 0}}
	runSelfLoop(t, []selfLoopCase{
		{"defaults (episode_weight 1)", "graphgpo", nil, idleBatch(), both, [2]float64{-0.204425, -0.577351}},
		{"std population", "graphgpo", map[string]any{"std": "population"}, idleBatch(), bothPop, [2]float64{-0.195610, -0.707108}},
		{"episode_weight 0", "graphgpo", map[string]any{"episode_weight": 0}, idleBatch(), steps, [2]float64{-0.781775, -1.154700}},
		// normalize_distance: 10·0.1^{d(s_{t+1}) − d(s_t) + 1}. A self-loop's exponent is 1 at every
		// node: g = 1; A → B and B → GOAL 10; A → C 10·0.1^{3−2+1} = 0.1; C → X 10·0.1^1 = 1. Group
		// A {1, 10, 10, 0.1} is group A of the default ×10 (sample σ ≈ 5.468318; the same advantages
		// up to ε: look −4.275/(σ + ε) ≈ −0.781776), B {1, 10, 10} is unchanged, C alone → 0.
		{"normalize_distance, episode_weight 0", "graphgpo", map[string]any{"normalize_distance": true, "episode_weight": 0},
			idleBatch(), perNode([][]float64{{1, 10, 1, 10}, {10, 10}, {0.1, 1}}, grpo.StdSample, zeroAlone, nil), [2]float64{-0.781776, -1.154700}},
		{"mean_norm, episode_weight 0", "graphgpo", map[string]any{"norm": "mean_norm", "episode_weight": 0},
			idleBatch(), meanNorm, [2]float64{-0.4275, -6}},
	})
}

// TestSelfLoopGiGPO checks GiGPO on idleBatch. Its step return discounts the outcome by the
// steps still to go, so the look at B (R^S = γ) ranks below B's forward steps (R^S = 1): −2/√3
// against 1/√3 with the default sample std; the look at A still beats the failure in its anchor
// group and gets a positive A^S. With γ = 1 a look costs nothing: B's group is all equal and its
// look gets A^S = 0.
func TestSelfLoopGiGPO(t *testing.T) {
	// R^S = Σ γ^k r (the outcome on the last step), γ 0.95: T1 [0.95³ = 0.857375, 0.9025, 0.95, 1],
	// T2 [0.95, 1], T3 [0, 0].
	rs := [][]float64{{0.857375, 0.9025, 0.95, 1}, {0.95, 1}, {0, 0}}
	// Sample std. A {0.857375, 0.9025, 0.95, 0}: μ 0.67746875, deviations 0.17990625, 0.22503125,
	// 0.27253125, −0.67746875, σ = √(Σd²/3) ≈ 0.453226 → {0.396945, 0.496508, 0.601312,
	// −1.494766}; B {0.95, 1, 1}: μ 0.983333, deviations −1/30, 1/60, 1/60, Σd² = 1/600,
	// σ = √(1/1200) = (0.05/3)·√3 ≈ 0.028868 → {−1.154661, 0.577330, 0.577330} (−2/√3, 1/√3 up to
	// ε); C alone → 0. Plus A^E (episodeSample, ≈ +0.577349): look at A ≈ 0.396945 + 0.577349 =
	// 0.974294, look at B ≈ −1.154661 + 0.577349 = −0.577311.
	def := perNode(rs, grpo.StdSample, zeroAlone, episodeSample())
	// std population, the previous convention: A σ ≈ 0.392506 → {0.458352, 0.573318, 0.694335,
	// −1.726006}; B σ = (0.05/3)·√2 ≈ 0.023570 → {−1.414154, 0.707077, 0.707077}. Plus A^E
	// (episodePop): look at A ≈ 1.165457, look at B ≈ −0.707048.
	defPop := perNode(rs, grpo.StdPopulation, zeroAlone, episodePop())
	// γ 1: T1 [1, 1, 1, 1], T2 [1, 1], T3 [0, 0]. A {1, 1, 1, 0}: μ 0.75, Σd² = 3·0.0625 + 0.5625
	// = 0.75, σ = √(0.75/3) = 0.5 → 0.25/(0.5 + ε) ≈ 0.499999 and −0.75/(0.5 + ε) ≈ −1.499997;
	// B {1, 1, 1} all equal → 0. Plus A^E: look at A ≈ 0.499999 + 0.577349 = 1.077348, at B
	// 0 + 0.577349.
	one := perNode([][]float64{{1, 1, 1, 1}, {1, 1}, {0, 0}}, grpo.StdSample, zeroAlone, episodeSample())
	runSelfLoop(t, []selfLoopCase{
		{"defaults", "gigpo", nil, idleBatch(), def, [2]float64{0.974294, -0.577311}},
		{"std population", "gigpo", map[string]any{"std": "population"}, idleBatch(), defPop, [2]float64{1.165457, -0.707048}},
		{"γ 1", "gigpo", map[string]any{"gamma": 1}, idleBatch(), one, [2]float64{1.077348, 0.577349}},
	})
}
