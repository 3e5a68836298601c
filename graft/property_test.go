package graft

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/graftrl/graftrl/rollout"
)

// randomBatch draws a one-task batch of random walks over a few keys: random lengths (0 included),
// outcomes, truncations and per-step rewards, so that graphs have cycles, self-loops, parallel
// edges and nodes that are final for one rollout and intermediate for another.
func randomBatch(rng *rand.Rand) *rollout.Batch {
	keys := 2 + rng.IntN(8)
	b := &rollout.Batch{Tasks: 1}
	for n := 1 + rng.IntN(10); n > 0; n-- {
		t := rollout.Trajectory{}
		k := "k" + strconv.Itoa(rng.IntN(keys))
		for steps := rng.IntN(15); steps > 0; steps-- {
			next := "k" + strconv.Itoa(rng.IntN(keys))
			s := rollout.Step{Key: k, NextKey: next, Action: "a" + strconv.Itoa(rng.IntN(3))}
			if rng.IntN(4) == 0 {
				s.Reward = []float64{-0.1, 0.25, -1}[rng.IntN(3)]
			}
			t.Steps = append(t.Steps, s)
			k = next
		}
		switch rng.IntN(4) {
		case 0:
			t.Truncated = true
		case 1:
			t.Outcome, t.Success = 1, true
		case 2:
			t.Outcome = []float64{0.5, -1, 2}[rng.IntN(3)]
			t.Success = t.Outcome > 0
		}
		b.Trajs = append(b.Trajs, t)
	}
	return b
}

func propOpts(rng *rand.Rand) Options {
	o := DefaultOptions()
	o.Gamma = 0.5 + 0.49*rng.Float64()
	o.Lambda = rng.Float64()
	o.Normalize, o.Tol = false, 1e-13
	if rng.IntN(2) == 0 {
		o.Truncation = TruncBootstrap
	}
	return o
}

// At the fixed point the π̂-weighted mean TD advantage out of every node that reaches a sink is 0:
// Σ_e p_e·(r_e + γV(v_e)) − V(u) = 0 is the Bellman equation itself. For count weighting p_e is
// 1/N(u), the plain mean over the edge instances.
func TestPropertyMeanTDIsZero(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 500; iter++ {
		b := randomBatch(rng)
		o := propOpts(rng)
		o.Mode = ModeTD
		if iter%2 == 1 {
			o.PolicyWeighting = WeightUniform
		}
		ws, st := solved(t, b, 0, o)
		if st.residual > 1e-11 {
			t.Fatalf("iter %d: residual %g", iter, st.residual)
		}
		ws.policyWeights(o.PolicyWeighting)
		g := ws.g
		for u := 0; u < g.nodes(); u++ {
			if g.kind[u] != kindState || g.dist[u] < 0 || g.outDegree(int32(u)) == 0 {
				continue
			}
			var m float64
			for _, e := range g.outInst[g.outStart[u]:g.outStart[u+1]] {
				m += ws.p[e] * ws.delta[e]
			}
			if math.Abs(m) > 1e-10 {
				t.Fatalf("iter %d (%s): mean TD advantage out of %s = %g", iter, o.PolicyWeighting, g.key[u], m)
			}
		}
	}
}

// With count weighting and a converged V the paper's Graph GAE equals the TD form, at any λ.
// The identity needs the Bellman equation at every node a frontier can reach, so it is tested
// with sink_zero truncation, where every node reaches a sink: under bootstrap a node that reaches
// none keeps V = 0 by definition and its edges' TD advantage is their reward, which need not
// average to 0.
func TestPropertyPaperEqualsTD(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 500; iter++ {
		b := randomBatch(rng)
		o := propOpts(rng)
		o.Mode, o.Truncation = ModeTD, TruncSinkZero
		td, _ := mustGRAFT(t, o).Estimate(b)
		o.Mode = ModePaper
		paper, _ := mustGRAFT(t, o).Estimate(b)
		checkAdvQuiet(t, iter, paper, td, 1e-9)
		// The identity also survives the per-node normalisation (up to noise/ε).
		o.Normalize = true
		o.Mode = ModeTD
		tdn, _ := mustGRAFT(t, o).Estimate(b)
		o.Mode = ModePaper
		papern, _ := mustGRAFT(t, o).Estimate(b)
		checkAdvQuiet(t, iter, papern, tdn, 1e-3)
	}
}

// Path mode with λ = 1 is the discounted return from t (step rewards, then the terminal value:
// R on ⊥(R), or V of the real last state under bootstrap) minus V(s_t); with λ = 0 it is td.
func TestPropertyPathLambdaOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for iter := 0; iter < 500; iter++ {
		b := randomBatch(rng)
		o := propOpts(rng)
		o.Mode, o.Lambda = ModePath, 1
		ws, _ := solved(t, b, 0, o)
		adv, _ := mustGRAFT(t, o).Estimate(b)
		g := ws.g
		V := func(k string) float64 { return ws.V[g.ids[k]] }
		for i, tr := range b.Trajs {
			T := len(tr.Steps)
			if T == 0 {
				continue
			}
			terminal := tr.Outcome
			if tr.Truncated && !tr.Success {
				terminal = 0
				if o.Truncation == TruncBootstrap {
					terminal = V(tr.Steps[T-1].NextKey)
				}
			}
			for s := 0; s < T; s++ {
				G := math.Pow(o.Gamma, float64(T-s)) * terminal
				for k := s; k < T; k++ {
					G += math.Pow(o.Gamma, float64(k-s)) * tr.Steps[k].Reward
				}
				if want := G - V(tr.Steps[s].Key); !near(adv[i][s], want, 1e-9) {
					t.Fatalf("iter %d: A[%d][%d] = %.12g, want return − V = %.12g", iter, i, s, adv[i][s], want)
				}
			}
		}
		o.Lambda = 0
		path0, _ := mustGRAFT(t, o).Estimate(b)
		o.Mode = ModeTD
		td, _ := mustGRAFT(t, o).Estimate(b)
		checkAdvQuiet(t, iter, path0, td, 0)
	}
}

// Gauss–Seidel agrees with a dense direct solve of (I − γP̂)V = b on the nodes that reach a sink.
func TestPropertyValuesMatchDirectSolve(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for iter := 0; iter < 300; iter++ {
		b := randomBatch(rng)
		o := propOpts(rng)
		if iter%2 == 1 {
			o.PolicyWeighting = WeightUniform
		}
		ws, _ := solved(t, b, 0, o)
		ws.policyWeights(o.PolicyWeighting)
		g := ws.g
		idx := map[int32]int{}
		for _, u := range ws.reach {
			idx[u] = len(idx)
		}
		n := len(idx)
		A := make([][]float64, n)
		rhs := make([]float64, n)
		for r, u := range ws.reach {
			A[r] = make([]float64, n)
			A[r][r] = 1
			for _, e := range g.outInst[g.outStart[u]:g.outStart[u+1]] {
				v := g.dst[e]
				rhs[r] += ws.p[e] * g.rew[e]
				if c, ok := idx[v]; ok {
					A[r][c] -= o.Gamma * ws.p[e]
				} else {
					rhs[r] += o.Gamma * ws.p[e] * g.fixed[v] // a sink, or a state that reaches none (0)
				}
			}
		}
		x := solveDense(A, rhs)
		for r, u := range ws.reach {
			if !near(ws.V[u], x[r], 1e-9) {
				t.Fatalf("iter %d: V(%s) = %.12g, direct solve %.12g", iter, g.key[u], ws.V[u], x[r])
			}
		}
	}
}

// solveDense solves A x = b by Gaussian elimination with partial pivoting.
func solveDense(A [][]float64, b []float64) []float64 {
	n := len(b)
	for c := 0; c < n; c++ {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(A[r][c]) > math.Abs(A[p][c]) {
				p = r
			}
		}
		A[c], A[p] = A[p], A[c]
		b[c], b[p] = b[p], b[c]
		for r := c + 1; r < n; r++ {
			f := A[r][c] / A[c][c]
			for k := c; k < n; k++ {
				A[r][k] -= f * A[c][k]
			}
			b[r] -= f * b[c]
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := b[r]
		for k := r + 1; k < n; k++ {
			s -= A[r][k] * x[k]
		}
		x[r] = s / A[r][r]
	}
	return x
}

func checkAdvQuiet(t *testing.T, iter int, got, want rollout.Advantages, tol float64) {
	t.Helper()
	for i := range want {
		for k := range want[i] {
			if !near(got[i][k], want[i][k], tol) {
				t.Fatalf("iter %d: A[%d][%d] = %.12g, want %.12g", iter, i, k, got[i][k], want[i][k])
			}
		}
	}
}
