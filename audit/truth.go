package audit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/rollout"
)

// stepTruth is the Monte Carlo estimate of one audited step.
type stepTruth struct {
	q, qse, v, vse float64
	nq, nv         int
	logp           float64 // log π(a_t | context_t)
}

// mcResult is the outcome of monteCarlo.
type mcResult struct {
	steps         []stepTruth
	stats         rollout.Stats
	continuations int
	dropped       int
}

// startsPerChunk bounds the continuations run per Continue call (in multiples of the slots), so
// that progress can be reported and memory stays small.
const startsPerChunk = 8

// ReturnToGo is the return of a continued episode from step t on: Σ_{k≥t} γ^{k−t}·r_k plus
// γ^{T−t}·R, T its number of steps and R its outcome (0 when it failed or was truncated). It is
// the return GRAFT's graph values discount the same way (V(⊥(R)) = R, one γ per edge).
func ReturnToGo(tr *rollout.Trajectory, t int, gamma float64) float64 {
	g, disc := 0.0, 1.0
	for _, s := range tr.Steps[t:] {
		g += disc * s.Reward
		disc *= gamma
	}
	return g + disc*tr.Outcome
}

// monteCarlo estimates Q and V of every selected step. For step t of trajectory i it runs MC
// continuations that replay a_0 … a_{t−1} and then force a_t (Q), and MC that replay a_0 …
// a_{t−1} and let the policy choose from there (V); each continuation's return-to-go from t is
// one sample. Every replayed step must reproduce the recorded one (state keys, rewards,
// distances); a continuation ended by an env fault is dropped.
func monteCarlo(coll *rollout.Collector, dec rollout.Decoder, b *rollout.Batch, epSeeds []int64, sel Selection,
	o Options, reseed bool, rng *rand.Rand) (mcResult, error) {
	res := mcResult{steps: make([]stepTruth, len(sel.Steps))}
	actions := make(map[int][][]int32)
	perStep := 2 * o.MC
	chunk := max(1, startsPerChunk*o.Slots/perStep)
	t0 := time.Now()
	for lo := 0; lo < len(sel.Steps); lo += chunk {
		hi := min(lo+chunk, len(sel.Steps))
		var starts []rollout.Start
		for _, ref := range sel.Steps[lo:hi] {
			acts, ok := actions[ref.Traj]
			if !ok {
				acts = rollout.ActionTokens(&b.Trajs[ref.Traj])
				actions[ref.Traj] = acts
			}
			for j := range perStep {
				s := rollout.Start{TaskSeed: b.Trajs[ref.Traj].TaskSeed, EpisodeSeed: epSeeds[ref.Traj], History: acts[:ref.T]}
				if j < o.MC {
					s.First = acts[ref.T]
				}
				if reseed {
					k := rng.Int64()
					s.Branch = func(e envs.Env) { e.(slipReseeder).ReseedSlips(k) }
				}
				starts = append(starts, s)
			}
		}
		out, st, err := coll.Continue(dec, starts, rng)
		if err != nil {
			return res, fmt.Errorf("audit: continuations: %w", err)
		}
		res.stats.DecodeCalls += st.DecodeCalls
		res.stats.SampledTokens += st.SampledTokens
		res.continuations += len(starts)
		for k, ref := range sel.Steps[lo:hi] {
			rec := &b.Trajs[ref.Traj]
			var qs, vs []float64
			m := &res.steps[lo+k]
			m.logp = math.NaN()
			for j := range perStep {
				c := &out.Trajs[k*perStep+j]
				if c.Err != "" {
					res.dropped++
					continue
				}
				check := ref.T
				if j < o.MC && !reseed {
					check++ // a deterministic env also reproduces the forced step
				}
				if err := sameSteps(rec, c, check); err != nil {
					return res, fmt.Errorf("audit: replay of trajectory %d (task seed %d) to step %d: %w", ref.Traj, rec.TaskSeed, ref.T, err)
				}
				g := ReturnToGo(c, ref.T, o.Gamma)
				if j < o.MC {
					qs = append(qs, g)
					if math.IsNaN(m.logp) {
						m.logp = stepLogProb(c, ref.T)
					}
				} else {
					vs = append(vs, g)
				}
			}
			m.q, m.qse = meanSE(qs)
			m.v, m.vse = meanSE(vs)
			m.nq, m.nv = len(qs), len(vs)
		}
		fmt.Fprintf(o.Log, "audit: %d/%d steps, %d continuations (%.1fs)\n", hi, len(sel.Steps), res.continuations, time.Since(t0).Seconds())
	}
	return res, nil
}

// sameSteps checks that the continuation c reproduced the first n steps of the recorded
// trajectory rec.
func sameSteps(rec, c *rollout.Trajectory, n int) error {
	if len(c.Steps) < n {
		return fmt.Errorf("the continuation has %d steps, the replay needs %d", len(c.Steps), n)
	}
	for t := range n {
		if c.Steps[t] != rec.Steps[t] {
			return fmt.Errorf("step %d differs: recorded %+v, replayed %+v (the env is not deterministic given its task and episode seeds and the actions)", t, rec.Steps[t], c.Steps[t])
		}
	}
	return nil
}

// stepLogProb is the log-probability of step t's action tokens in a trajectory's rows.
func stepLogProb(tr *rollout.Trajectory, t int) float64 {
	lp := 0.0
	for _, r := range tr.Rows {
		for i, k := range r.StepOf {
			if int(k) == t {
				lp += float64(r.LogProb[i])
			}
		}
	}
	return lp
}
