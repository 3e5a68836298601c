package audit

import (
	"math/rand/v2"
	"slices"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/rollout"
)

// Strata of audited steps: the trajectory's result crossed with the step's half of it.
const (
	// StratumFailureEarly holds the steps t < T/2 of failed (or truncated) trajectories.
	StratumFailureEarly = "failure/early"
	// StratumFailureLate holds the steps t ≥ T/2 of failed trajectories.
	StratumFailureLate = "failure/late"
	// StratumSuccessEarly holds the steps t < T/2 of successful trajectories.
	StratumSuccessEarly = "success/early"
	// StratumSuccessLate holds the steps t ≥ T/2 of successful trajectories.
	StratumSuccessLate = "success/late"
)

// NumStrata is the number of strata.
const NumStrata = 4

// StratumName returns the name of stratum h (0 ≤ h < NumStrata), in table order: failure/early,
// failure/late, success/early, success/late.
func StratumName(h int) string {
	return [NumStrata]string{StratumFailureEarly, StratumFailureLate, StratumSuccessEarly, StratumSuccessLate}[h]
}

// stratumOf is the stratum index of step t of a trajectory of T steps: early when t < T/2.
func stratumOf(success bool, t, T int) int {
	s := 0
	if success {
		s = 2
	}
	if 2*t >= T {
		s++
	}
	return s
}

// StepRef names a step of a batch: trajectory Traj, step T.
type StepRef struct {
	Traj, T int
}

// Selection is a stratified sample of a batch's steps.
type Selection struct {
	// Steps are the sampled steps, stratum by stratum, each stratum in batch order.
	Steps []StepRef
	// Stratum[i] is the stratum index (see StratumName) of Steps[i].
	Stratum []int
	// Weight[i] is N_h/n_h for Steps[i]'s stratum h: the batch steps it stands for.
	Weight []float64
	// Population[h] and Sampled[h] are N_h, the batch's steps in stratum h, and n_h.
	Population, Sampled [NumStrata]int
}

// Select draws n steps of the batch without replacement, stratified by trajectory result
// (success, failure) × position (early: t < T/2, late), with equal allocation: each non-empty
// stratum gets an equal share of n, a stratum with fewer steps gives all of them and its unused
// share goes to the others. Within a stratum the draw is uniform. Trajectories with Err set are
// skipped. Equal allocation keeps rare strata (early steps of successful trajectories when
// success is rare, …) in the audit; the weights N_h/n_h undo it in every statistic.
func Select(b *rollout.Batch, n int, rng *rand.Rand) Selection {
	var pool [NumStrata][]StepRef
	for i := range b.Trajs {
		tr := &b.Trajs[i]
		if tr.Err != "" {
			continue
		}
		for t := range tr.Steps {
			h := stratumOf(tr.Success, t, len(tr.Steps))
			pool[h] = append(pool[h], StepRef{i, t})
		}
	}
	var sel Selection
	var take [NumStrata]int
	left := n
	for left > 0 {
		var open []int
		for h := range pool {
			if take[h] < len(pool[h]) {
				open = append(open, h)
			}
		}
		if len(open) == 0 {
			break
		}
		share, extra := left/len(open), left%len(open)
		for k, h := range open {
			want := share
			if k < extra {
				want++
			}
			got := min(want, len(pool[h])-take[h])
			take[h] += got
			left -= got
		}
	}
	for h := range pool {
		sel.Population[h], sel.Sampled[h] = len(pool[h]), take[h]
		if take[h] == 0 {
			continue
		}
		perm := rng.Perm(len(pool[h]))[:take[h]]
		slices.Sort(perm)
		w := float64(len(pool[h])) / float64(take[h])
		for _, j := range perm {
			sel.Steps = append(sel.Steps, pool[h][j])
			sel.Stratum = append(sel.Stratum, h)
			sel.Weight = append(sel.Weight, w)
		}
	}
	return sel
}

// Progress values: whether a step brought the env closer to success.
const (
	// ProgressUnknown: a distance is envs.DistUnknown.
	ProgressUnknown = -1
	// NoProgress: the distance did not fall (or a state is a dead end).
	NoProgress = 0
	// MadeProgress: the distance to success fell.
	MadeProgress = 1
)

// Progress classifies a step by the env's distance to success before (d(s_t)) and after
// (d(s_{t+1})) it: MadeProgress when both are known, neither is envs.DistDead and the distance
// fell; NoProgress when both are known otherwise (standing still, moving away, entering or
// staying in a dead state); ProgressUnknown when either is envs.DistUnknown.
func Progress(before, after int) int {
	switch {
	case before == envs.DistUnknown || after == envs.DistUnknown:
		return ProgressUnknown
	case before >= 0 && after >= 0 && after < before:
		return MadeProgress
	}
	return NoProgress
}

// Shares are the diagnostic slice shares of a batch, over all its steps (GraphGPO reports 22 %
// and 65 % on ALFWorld).
type Shares struct {
	// FailedSteps are the steps of failed trajectories whose progress is known; FailedProgress
	// the share of them that made progress.
	FailedSteps    int     `json:"failed_steps"`
	FailedProgress float64 `json:"failed_progress_share"`
	// SuccessSteps are the steps of successful trajectories whose progress is known;
	// SuccessNoProgress the share of them that made none.
	SuccessSteps      int     `json:"success_steps"`
	SuccessNoProgress float64 `json:"success_no_progress_share"`
	// Unknown counts steps whose progress is unknown (the env reports no distance).
	Unknown int `json:"unknown_steps"`
}

// BatchShares computes the slice shares from per-step progress values (progress[i][t]).
func BatchShares(b *rollout.Batch, progress [][]int) Shares {
	var s Shares
	var fp, snp int
	for i := range b.Trajs {
		tr := &b.Trajs[i]
		if tr.Err != "" {
			continue
		}
		for t := range tr.Steps {
			p := progress[i][t]
			switch {
			case p == ProgressUnknown:
				s.Unknown++
			case tr.Success:
				s.SuccessSteps++
				if p == NoProgress {
					snp++
				}
			default:
				s.FailedSteps++
				if p == MadeProgress {
					fp++
				}
			}
		}
	}
	s.FailedProgress = rollout.Ratio(fp, s.FailedSteps)
	s.SuccessNoProgress = rollout.Ratio(snp, s.SuccessSteps)
	return s
}
