package audit

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/rollout"
)

func trajOf(n int, success bool, errText string) rollout.Trajectory {
	return rollout.Trajectory{Steps: make([]rollout.Step, n), Success: success, Err: errText}
}

// A: success, 4 steps (early t 0–1, late 2–3); B: failure, 3 steps (early 0–1, late 2);
// C: failure, 10 steps (early 0–4, late 5–9); D: errored, left out.
func strataBatch() *rollout.Batch {
	return &rollout.Batch{Tasks: 1, Trajs: []rollout.Trajectory{
		trajOf(4, true, ""), trajOf(3, false, ""), trajOf(10, false, ""), trajOf(5, true, "boom"),
	}}
}

func TestSelectEqualAllocation(t *testing.T) {
	b := strataBatch()
	sel := Select(b, 12, rand.New(rand.NewPCG(1, 2)))
	// Populations: failure/early 2+5, failure/late 1+5, success/early 2, success/late 2. Shares of
	// 3 each; the success strata give 2, and the 2 left go one to each failure stratum.
	if sel.Population != [NumStrata]int{7, 6, 2, 2} || sel.Sampled != [NumStrata]int{4, 4, 2, 2} {
		t.Fatalf("population %v sampled %v", sel.Population, sel.Sampled)
	}
	wantW := [NumStrata]float64{7.0 / 4, 6.0 / 4, 1, 1}
	seen := map[StepRef]bool{}
	for i, ref := range sel.Steps {
		tr := &b.Trajs[ref.Traj]
		h := sel.Stratum[i]
		if tr.Err != "" || stratumOf(tr.Success, ref.T, len(tr.Steps)) != h || seen[ref] || sel.Weight[i] != wantW[h] {
			t.Errorf("step %+v in stratum %s with weight %g", ref, StratumName(h), sel.Weight[i])
		}
		seen[ref] = true
	}
	// The weights add up to the batch's steps: every statistic is an estimate over all of them.
	total := 0.0
	for _, w := range sel.Weight {
		total += w
	}
	if total != 17 {
		t.Errorf("weights sum to %g, want the 17 valid steps", total)
	}
	// Asking for more than there is takes every step once, with weight 1.
	all := Select(b, 100, rand.New(rand.NewPCG(1, 2)))
	if len(all.Steps) != 17 || all.Weight[0] != 1 || all.Weight[16] != 1 {
		t.Errorf("%d steps, weights %v", len(all.Steps), all.Weight)
	}
}

func TestProgress(t *testing.T) {
	for _, c := range []struct{ before, after, want int }{
		{5, 4, MadeProgress}, {1, 0, MadeProgress}, {5, 5, NoProgress}, {4, 5, NoProgress},
		{3, envs.DistDead, NoProgress}, {envs.DistDead, envs.DistDead, NoProgress}, {envs.DistDead, 3, NoProgress},
		{envs.DistUnknown, 3, ProgressUnknown}, {3, envs.DistUnknown, ProgressUnknown},
	} {
		if got := Progress(c.before, c.after); got != c.want {
			t.Errorf("Progress(%d, %d) = %d, want %d", c.before, c.after, got, c.want)
		}
	}
}

func TestBatchShares(t *testing.T) {
	b := strataBatch()
	progress := [][]int{
		{MadeProgress, NoProgress, MadeProgress, MadeProgress}, // success: 1 of 4 without
		{NoProgress, MadeProgress, ProgressUnknown},            // failure
		{MadeProgress, NoProgress, NoProgress, NoProgress, NoProgress, NoProgress, NoProgress, NoProgress, NoProgress, NoProgress},
		{MadeProgress, MadeProgress, MadeProgress, MadeProgress, MadeProgress}, // errored: ignored
	}
	s := BatchShares(b, progress)
	want := Shares{FailedSteps: 12, FailedProgress: 2.0 / 12, SuccessSteps: 4, SuccessNoProgress: 0.25, Unknown: 1}
	if s != want {
		t.Errorf("shares %+v, want %+v", s, want)
	}
}

// compareAll weights each step by its stratum weight and measures the slices on scale-matched
// estimates.
func TestCompareAllSlices(t *testing.T) {
	steps := []StepResult{
		{Success: false, Progress: MadeProgress, Stratum: StratumFailureEarly, Weight: 2, A: 0.3, ASE: 0.05, Est: []float64{-1}},
		{Success: false, Progress: NoProgress, Stratum: StratumFailureLate, Weight: 1, A: -0.4, ASE: 0.05, Est: []float64{-1}},
		{Success: true, Progress: NoProgress, Stratum: StratumSuccessEarly, Weight: 1, A: -0.2, ASE: 0.05, Est: []float64{1}},
		{Success: true, Progress: MadeProgress, Stratum: StratumSuccessLate, Weight: 1, A: 0.1, ASE: 0.05, Est: []float64{1}},
		{Success: true, Progress: MadeProgress, Stratum: StratumSuccessLate, Weight: 1, A: Num(math.NaN()), ASE: 0.05, Est: []float64{1}},
	}
	ts, ms := compareAll(steps, []string{"grpo-like"}, 2, DefaultBootstrap, 1)
	// Weighted A: (0.6 − 0.4 − 0.2 + 0.1)/5 = 0.02. c = Σ w·Â·A / Σ w·Â² = (−0.6 + 0.4 − 0.2 + 0.1)/5 = −0.06.
	m := ms[0]
	if !near(float64(ts.Mean), 0.02, 1e-12) || !near(float64(m.Scale), -0.06, 1e-12) {
		t.Fatalf("truth mean %g, scale %g", ts.Mean, m.Scale)
	}
	// failed+progress: the first step; c·Â = 0.06 against A = 0.3: bias −0.24.
	fp, snp := m.Slices[0], m.Slices[1]
	if fp.Name != SliceFailedProgress || fp.N != 1 || !near(float64(fp.Bias), 0.06-0.3, 1e-12) || fp.Positive != 1 || fp.TruthPositive != 1 {
		t.Errorf("failed+progress %+v", fp)
	}
	// success+no-progress: the third step; c·Â = −0.06 against A = −0.2: bias 0.14.
	if snp.Name != SliceSuccessNoProgress || snp.N != 1 || !near(float64(snp.Bias), -0.06+0.2, 1e-12) || snp.Positive != 0 {
		t.Errorf("success+no-progress %+v", snp)
	}
	// Every truth is resolved (|A| ≥ 2·0.05); the estimate's sign agrees on steps 2 and 4: (1 + 1)/5.
	if !near(float64(m.Sign), 0.4, 1e-12) || ts.Resolved != 1 {
		t.Errorf("sign %g resolved %g", m.Sign, ts.Resolved)
	}
}
