package grpo

import (
	"math"

	"github.com/graftrl/graftrl/rollout"
)

// Score selects the scalar R_i that ranks a trajectory within its group.
type Score string

const (
	// ScoreReturn is the outcome plus the undiscounted sum of the per-step rewards
	// (rollout.Trajectory.Return). The invalid-action penalty is part of the reward the environment
	// emits, so among equally successful rollouts the one that wasted turns on unparsable actions
	// ranks lower. This is the default.
	ScoreReturn Score = "return"
	// ScoreOutcome is the episode outcome R_i alone (0 when truncated), as the papers write it.
	ScoreOutcome Score = "outcome"
)

// Valid reports whether s is one of the defined scores.
func (s Score) Valid() bool { return s == ScoreReturn || s == ScoreOutcome }

// Of returns the score of trajectory t.
func (s Score) Of(t *rollout.Trajectory) float64 {
	if s == ScoreOutcome {
		return t.Outcome
	}
	return t.Return()
}

// Norm is GiGPO's F_norm: the denominator of a group-relative advantage.
type Norm string

const (
	// MeanStdNorm divides by the group's standard deviation plus ε, in the form (a Std) the caller
	// passes to EpisodeAdvantages and GroupNormalizer.Normalize.
	MeanStdNorm Norm = "mean_std_norm"
	// MeanNorm divides by 1 (only the group mean is subtracted), as Dr.GRPO does.
	MeanNorm Norm = "mean_norm"
)

// Valid reports whether n is one of the defined norms.
func (n Norm) Valid() bool { return n == MeanStdNorm || n == MeanNorm }

// Std selects the standard deviation a group-relative advantage divides by: over the n members
// of a group (the valid scores of an episode group, the steps of a step group), the sample form
// √(Σ(x−μ)²/(n−1)) or the population form √(Σ(x−μ)²/n).
type Std string

const (
	// StdSample is the N−1 (Bessel-corrected) form: what torch.std computes by default
	// (unbiased=True), and so what TRL's and verl's GRPO divide by. The default of every
	// group-normalising estimator: GRPO, GiGPO's and GraphGPO's episode and step terms, and
	// GRAFT's episode term (ALGORITHMS.md §1).
	StdSample Std = "sample"
	// StdPopulation is the N form: GRAFT's per-node normalisation (Eq. 11 writes the population
	// σ), and the option `std: population` of GRPO, GiGPO and GraphGPO (`episode_std:
	// population` for GRAFT's episode term).
	StdPopulation Std = "population"
)

// Valid reports whether s is one of the defined forms.
func (s Std) Valid() bool { return s == StdSample || s == StdPopulation }

// divisor is the denominator of the variance over n ≥ 2 values: n − 1 or n.
func (s Std) divisor(n int) float64 {
	if s == StdSample {
		return float64(n - 1)
	}
	return float64(n)
}

// Singleton says what a group with a single member gets, where a mean and a spread mean nothing.
type Singleton uint8

const (
	// SingletonZero gives a lone member 0 (GiGPO's and GraphGPO's step groups).
	SingletonZero Singleton = iota
	// SingletonSign gives a lone member sign(x) (GRAFT's per-node normalisation, Eq. 11), and 0
	// when |x| ≤ eps: a lone TD advantage is the Bellman residual of its node, zero up to the
	// solver's tolerance, and the sign of that rounding noise must not become a full ±1.
	SingletonSign
)

// GroupNormalizer normalises values within groups. It keeps its buffers between calls so that a
// batch of thousands of groups allocates once; the zero value is ready to use and it is not safe
// for concurrent use.
type GroupNormalizer struct {
	n     []int32
	mean  []float64
	m2    []float64
	first []float64
	same  []bool
}

// Normalize writes out[i] = (x[i] − μ_g)/F_norm for g = group[i] in [0, groups), where μ_g is the
// mean of the group's members and F_norm is σ_g + eps for MeanStdNorm (σ_g the standard deviation
// of the group in the form std: n − 1 or n for n ≥ 2 members) or 1 for MeanNorm. A group with one
// member gets the Singleton rule. A group whose members are all exactly equal gets 0 exactly (the
// formula's value, without the rounding noise of x − μ), and so does a group whose σ_g ≤ flat
// (flat 0: no group beyond the exactly equal ones; σ_g is computed for flat > 0 under either
// norm). It returns how many members were singletons. Preconditions: len(out) ≥ len(x) =
// len(group), eps > 0, flat ≥ 0.
func (z *GroupNormalizer) Normalize(x []float64, group []int32, groups int, norm Norm, std Std, eps, flat float64, single Singleton, out []float64) (singletons int) {
	z.n = Zeroed(z.n, groups)
	z.mean = Zeroed(z.mean, groups)
	z.m2 = Zeroed(z.m2, groups)
	z.first = Zeroed(z.first, groups)
	z.same = Zeroed(z.same, groups)
	for i, g := range group {
		if z.n[g] == 0 {
			z.first[g], z.same[g] = x[i], true
		} else if x[i] != z.first[g] {
			z.same[g] = false
		}
		z.n[g]++
		z.mean[g] += x[i]
	}
	for g := range z.mean {
		if z.n[g] > 0 {
			z.mean[g] /= float64(z.n[g])
		}
	}
	if norm == MeanStdNorm || flat > 0 {
		// Two passes: Σ(x − μ)² does not cancel catastrophically the way Σx² − nμ² does.
		for i, g := range group {
			d := x[i] - z.mean[g]
			z.m2[g] += d * d
		}
		for g := range z.m2 {
			if z.n[g] > 1 {
				z.m2[g] = math.Sqrt(z.m2[g] / std.divisor(int(z.n[g]))) // now σ_g
			}
		}
	}
	for i, g := range group {
		switch {
		case z.n[g] == 1:
			singletons++
			out[i] = 0
			if single == SingletonSign && math.Abs(x[i]) > eps {
				out[i] = Sign(x[i])
			}
		case z.same[g] || flat > 0 && z.m2[g] <= flat:
			out[i] = 0
		case norm == MeanStdNorm:
			out[i] = (x[i] - z.mean[g]) / (z.m2[g] + eps)
		default:
			out[i] = x[i] - z.mean[g]
		}
	}
	return singletons
}

// EpisodeAdvantages writes the episode advantage of every trajectory of one group into out
// (indexed like group): A^E_i = (R_i − mean_j R_j)/F_norm with R the score, statistics over the
// group's trajectories without an error, F_norm = std_j R_j + eps in the form std (MeanStdNorm) or
// 1 (MeanNorm). This is GRPO's A_i (MeanStdNorm), Dr.GRPO's (MeanNorm) and GiGPO's A^E. Errored
// trajectories get 0. uniform reports that the valid scores are all equal (including groups with
// fewer than two valid trajectories, so the sample form never divides by zero): every A^E is then
// exactly 0.
func EpisodeAdvantages(b *rollout.Batch, group []int, score Score, norm Norm, std Std, eps float64, out []float64) (uniform bool, valid int) {
	var sum float64
	uniform = true
	var first float64
	for k, i := range group {
		out[k] = 0
		t := &b.Trajs[i]
		if t.Err != "" {
			continue
		}
		r := score.Of(t)
		if valid == 0 {
			first = r
		} else if r != first {
			uniform = false
		}
		valid++
		sum += r
	}
	if uniform {
		return true, valid
	}
	mean := sum / float64(valid)
	fnorm := 1.0
	if norm == MeanStdNorm {
		var m2 float64
		for _, i := range group {
			if t := &b.Trajs[i]; t.Err == "" {
				d := score.Of(t) - mean
				m2 += d * d
			}
		}
		fnorm = math.Sqrt(m2/std.divisor(valid)) + eps // std_j R_j + ε
	}
	for k, i := range group {
		if t := &b.Trajs[i]; t.Err == "" {
			out[k] = (score.Of(t) - mean) / fnorm
		}
	}
	return false, valid
}

// Sign is sign(x): 1, −1 or 0 (0 for NaN too), what SingletonSign gives a lone member (Eq. 11).
func Sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// Zeroed returns s resized to n with every element zero, reusing its storage when it can: the
// estimators' per-batch scratch, reused across iterations without allocating.
func Zeroed[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
