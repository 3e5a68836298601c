package policy

import (
	"math"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/graftrl/graftrl/policy/spec"
)

// evalTokenLoss runs tokenLoss on explicit per-token values (a 1×n batch).
func evalTokenLoss(t *testing.T, l LossConfig, logp, entropy, old, adv, weight, ref []float32) []float32 {
	t.Helper()
	n := len(logp)
	exec := graph.MustNewExec(backendT(t), func(in []*graph.Node) []*graph.Node {
		var refN *graph.Node
		if len(in) > 5 {
			refN = in[5]
		}
		r := tokenLoss(l, in[0], in[1], in[2], in[3], in[4], refN)
		return []*graph.Node{r.total, r.pg, r.entropy, r.kl, r.approxKL, r.clipFrac}
	})
	args := []any{}
	for _, v := range [][]float32{logp, entropy, old, adv, weight} {
		args = append(args, tensors.FromFlatDataAndDimensions(v, 1, n))
	}
	if ref != nil {
		args = append(args, tensors.FromFlatDataAndDimensions(ref, 1, n))
	}
	out := exec.MustExec(args...)
	res := make([]float32, len(out))
	for i, o := range out {
		res[i] = tensors.ToScalar[float32](o)
	}
	return res
}

// The clipped surrogate against hand-computed values. Tokens (log ρ, Â):
//
//	ρ = e^0.5 ≈ 1.6487, Â = +1: min(1.6487, 1.2) = 1.2          → ℓ = −1.2 (clipped)
//	ρ = e^−0.5 ≈ 0.6065, Â = +1: min(0.6065, 0.8) = 0.6065       → ℓ = −0.6065
//	ρ = e^0.5, Â = −1: min(−1.6487, −1.2) = −1.6487              → ℓ = 1.6487
//	ρ = e^−0.5, Â = −1: min(−0.6065, −0.8) = −0.8                → ℓ = 0.8 (clipped)
//	ρ = 1, Â = 2: ℓ = −2
//	a context token (weight 0) with a huge log ratio must not count (nor turn the loss into NaN).
func TestClippedSurrogateHandComputed(t *testing.T) {
	e5, em5 := math.Exp(0.5), math.Exp(-0.5)
	old := []float32{0, 0, 0, 0, 0, 0}
	logp := []float32{0.5, -0.5, 0.5, -0.5, 0, 90}
	adv := []float32{1, 1, -1, -1, 2, 5}
	mask := []bool{true, true, true, true, true, false}
	ent := []float32{1, 2, 3, 4, 5, 100}
	perTok := []float64{-1.2, -em5, e5, 0.8, -2}
	w := spec.AggregationWeights(spec.AggTokenMean, mask, 1, 6, 0)
	l := spec.DefaultLossConfig()
	res := evalTokenLoss(t, l, logp, ent, old, adv, w, nil)
	wantPG := (perTok[0] + perTok[1] + perTok[2] + perTok[3] + perTok[4]) / 5
	approx(t, "pg (token-mean)", res[1], wantPG)
	approx(t, "entropy", res[2], 3)
	approx(t, "clip fraction", res[5], 4.0/5) // tokens 0–3 have ρ outside [0.8, 1.2]
	// approx KL = mean((ρ−1) − log ρ)
	wantKL := ((e5-1-0.5)*2 + (em5-1+0.5)*2 + 0) / 5
	approx(t, "approx kl", res[4], wantKL)

	// Entropy bonus: total = pg − c·H.
	l.EntropyCoef = 0.05
	res = evalTokenLoss(t, l, logp, ent, old, adv, w, nil)
	approx(t, "total with entropy bonus", res[0], wantPG-0.05*3)

	// Clip-higher (ε_high = 0.28): token 0 becomes min(1.6487, 1.28) = 1.28.
	l = spec.DefaultLossConfig()
	l.ClipHigh = 0.28
	res = evalTokenLoss(t, l, logp, ent, old, adv, w, nil)
	approx(t, "pg with clip-higher", res[1], (-1.28+perTok[1]+perTok[2]+perTok[3]+perTok[4])/5)

	// Dual clip c = 1.5 bounds ℓ by −c·Â = 1.5 for Â = −1: token 2's 1.6487 becomes 1.5.
	l = spec.DefaultLossConfig()
	l.DualClip = 1.5
	res = evalTokenLoss(t, l, logp, ent, old, adv, w, nil)
	approx(t, "pg with dual clip", res[1], (perTok[0]+perTok[1]+1.5+perTok[3]+perTok[4])/5)
}

// KL penalties against the reference: x = log π − log π_ref.
func TestKLPenaltyHandComputed(t *testing.T) {
	logp := []float32{-1, -2, -0.5}
	ref := []float32{-1.5, -1, -0.5}
	old := logp
	adv := []float32{0, 0, 0}
	ent := []float32{0, 0, 0}
	w := spec.AggregationWeights(spec.AggTokenMean, []bool{true, true, true}, 1, 3, 0)
	xs := []float64{0.5, -1, 0}
	for _, tc := range []struct {
		kind string
		f    func(x float64) float64
	}{
		{spec.KLk1, func(x float64) float64 { return x }},
		{spec.KLk2, func(x float64) float64 { return x * x / 2 }},
		{spec.KLk3, func(x float64) float64 { return math.Exp(-x) + x - 1 }},
	} {
		l := spec.DefaultLossConfig()
		l.KL, l.KLCoef = tc.kind, 0.01
		res := evalTokenLoss(t, l, logp, ent, old, adv, w, ref)
		want := (tc.f(xs[0]) + tc.f(xs[1]) + tc.f(xs[2])) / 3
		approx(t, tc.kind, res[3], want)
		approx(t, tc.kind+" in total", res[0], 0.01*want)
	}
}

// The three aggregations against hand-computed weights: two rows with 3 and 1 action tokens.
func TestAggregationWeights(t *testing.T) {
	mask := []bool{true, true, true, false, true, false, false, false, false, false, false, false}
	// rows=3 (the third is padding), len=4
	tm := spec.AggregationWeights(spec.AggTokenMean, mask, 3, 4, 0)
	sm := spec.AggregationWeights(spec.AggSeqMeanTokenMean, mask, 3, 4, 0)
	dr := spec.AggregationWeights(spec.AggSeqMeanTokenSumNrm, mask, 3, 4, 10)
	for i, m := range mask {
		wantTM, wantSM, wantDR := 0.0, 0.0, 0.0
		if m {
			wantTM = 1.0 / 4
			wantDR = 1.0 / (2 * 10) // two non-empty rows, constant 10
			if i < 4 {
				wantSM = 1.0 / (2 * 3)
			} else {
				wantSM = 1.0 / (2 * 1)
			}
		}
		approx(t, "token-mean", tm[i], wantTM)
		approx(t, "seq-mean-token-mean", sm[i], wantSM)
		approx(t, "seq-mean-token-sum-norm", dr[i], wantDR)
	}
	if got := spec.AggregationWeights(spec.AggTokenMean, make([]bool, 4), 1, 4, 0); got[0] != 0 {
		t.Fatalf("an empty mask must give zero weights, got %v", got)
	}
}

// The step-level GRPO-C objective: per step the ratio is the geometric mean of the step's token
// ratios. Step 0 has tokens with log ρ 0.3 and 0.1 (w = e^0.2 ≈ 1.2214 → clipped to 1.2 for
// Â = 1: ℓ = −1.2); step 1 has one token with log ρ −0.1 (w = 0.9048, Â = −2: min(−1.8097, −1.8)
// = −1.8097 → ℓ = 1.8097). Averaged over the 2 steps.
func TestStepObjectiveHandComputed(t *testing.T) {
	exec := graph.MustNewExec(backendT(t), func(in []*graph.Node) []*graph.Node {
		r := stepLoss(spec.DefaultLossConfig(), in[0], in[1], in[2], in[3], nil, in[4], in[5], in[6])
		return []*graph.Node{r.pg, r.clipFrac}
	})
	f := func(v []float32, d ...int) *tensors.Tensor { return tensors.FromFlatDataAndDimensions(v, d...) }
	logp := []float32{0.3, 0.1, 0, -0.1}
	zero := []float32{0, 0, 0, 0}
	w := []float32{1, 1, 0, 1}
	stepOf := []int32{0, 0, -1, 1}
	out := exec.MustExec(f(logp, 1, 4), f(zero, 1, 4), f(zero, 1, 4), f(w, 1, 4),
		tensors.FromFlatDataAndDimensions(stepOf, 1, 4), f([]float32{1, -2}, 1, 2), f([]float32{0.5, 0.5}, 1, 2))
	want := (-1.2 + 2*math.Exp(-0.1)) / 2
	approx(t, "GRPO-C loss", tensors.ToScalar[float32](out[0]), want)
	approx(t, "GRPO-C clip fraction", tensors.ToScalar[float32](out[1]), 0.5)
}

func approx(t *testing.T, what string, got float32, want float64) {
	t.Helper()
	if math.Abs(float64(got)-want) > 1e-5*(1+math.Abs(want)) {
		t.Errorf("%s = %.7g, want %.7g", what, got, want)
	}
}
