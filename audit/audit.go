package audit

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"time"

	"github.com/graftrl/graftrl/advantage"
	_ "github.com/graftrl/graftrl/advantage/all"
	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/rollout"
)

// Variant is one estimator configuration the audit compares: a registered estimator
// (advantage.Names) with options, under a label.
type Variant struct {
	// Label names the variant in tables and plots (unique within an audit).
	Label string
	// Name is the registered estimator.
	Name string
	// Options are the estimator's options (nil: its defaults).
	Options map[string]any
}

// DefaultVariants are the estimators an audit compares, each with its ALGORITHMS.md defaults:
// grpo, drgrpo, gigpo, graphgpo, graft in its three modes (graft-path, the default, graft-td and
// graft-paper), and graft-td-raw — GRAFT's td advantage without the per-node normalisation of
// Eq. 11, the graph's own estimate of Q − V on the truth's scale.
func DefaultVariants() []Variant {
	return []Variant{
		{Label: "grpo", Name: "grpo"},
		{Label: "drgrpo", Name: "drgrpo"},
		{Label: "gigpo", Name: "gigpo"},
		{Label: "graphgpo", Name: "graphgpo"},
		{Label: "graft-path", Name: "graft", Options: map[string]any{"mode": "path"}},
		{Label: "graft-td", Name: "graft", Options: map[string]any{"mode": "td"}},
		{Label: "graft-paper", Name: "graft", Options: map[string]any{"mode": "paper"}},
		{Label: "graft-td-raw", Name: "graft", Options: map[string]any{"mode": "td", "normalize": false}},
	}
}

// Defaults of Options. Steps and MC are sized so that an audit of the maze and sokoban runs
// measured in docs/audit.md (section "Measured: the maze and sokoban") takes under a minute on
// one core.
const (
	// DefaultSteps is the number of audited steps.
	DefaultSteps = 400
	// DefaultMC is the number of continuations behind each Q and each V.
	DefaultMC = 24
	// DefaultGamma is the discount of the true return: none.
	DefaultGamma = 1.0
	// DefaultSlots is the number of episodes decoded at once.
	DefaultSlots = 256
	// DefaultZ is the standard errors a true advantage needs for its sign to count.
	DefaultZ = 2.0
)

// Options configure an audit.
type Options struct {
	// Steps is the number of steps audited (default DefaultSteps).
	Steps int
	// MC is the number of Monte Carlo continuations behind each Q and each V (default DefaultMC).
	MC int
	// Gamma discounts the true return-to-go (default 1: the undiscounted return the training
	// maximises); must be in (0, 1].
	Gamma float64
	// Seed drives the batch, the selection of steps and the continuations.
	Seed uint64
	// Slots is the number of episodes run at once, the decoder's batch (default DefaultSlots).
	Slots int
	// Z is how many standard errors from 0 a true advantage must be for its sign to count in
	// the sign agreement (default DefaultZ).
	Z float64
	// Bootstrap is the number of bootstrap resamples behind each correlation's standard error
	// (default DefaultBootstrap; Metrics.PearsonSE), drawn with Seed.
	Bootstrap int
	// Variants are the estimators compared (default DefaultVariants).
	Variants []Variant
	// Log receives progress lines (nil: none).
	Log io.Writer
}

func (o Options) withDefaults() (Options, error) {
	if o.Steps == 0 {
		o.Steps = DefaultSteps
	}
	if o.MC == 0 {
		o.MC = DefaultMC
	}
	if o.Gamma == 0 {
		o.Gamma = DefaultGamma
	}
	if o.Slots == 0 {
		o.Slots = DefaultSlots
	}
	if o.Z == 0 {
		o.Z = DefaultZ
	}
	if o.Bootstrap == 0 {
		o.Bootstrap = DefaultBootstrap
	}
	if o.Variants == nil {
		o.Variants = DefaultVariants()
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	switch {
	case o.Steps < 1:
		return o, fmt.Errorf("audit: steps = %d: must be ≥ 1", o.Steps)
	case o.MC < 2:
		return o, fmt.Errorf("audit: mc = %d: must be ≥ 2 (standard errors need two continuations)", o.MC)
	case !(o.Gamma > 0 && o.Gamma <= 1):
		return o, fmt.Errorf("audit: gamma = %g: must be in (0, 1]", o.Gamma)
	case o.Slots < 1:
		return o, fmt.Errorf("audit: slots = %d: must be ≥ 1", o.Slots)
	case !(o.Z > 0):
		return o, fmt.Errorf("audit: z = %g: must be > 0", o.Z)
	case o.Bootstrap < 2:
		return o, fmt.Errorf("audit: bootstrap = %d: must be ≥ 2", o.Bootstrap)
	}
	return o, nil
}

// Setup is what an audit runs on: the environment, the token layout and the policy's sampler,
// and the tasks of the fresh batch. Source.Setup builds one from a training run and a checkpoint.
type Setup struct {
	// Env is the environment's name (for the report).
	Env string
	// NewEnv builds one environment instance.
	NewEnv func() (envs.Env, error)
	// Format lays episodes out as the policy's tokens (rollout.Words for graftrl's transformer).
	Format rollout.Format
	// Rollout is the token layout and action masking the policy was trained with.
	Rollout rollout.Config
	// NewDecoder returns a decoder of the audited policy for batch rows.
	NewDecoder func(batch int) rollout.Decoder
	// Tasks are the task seeds of the fresh batch, each rolled out Group times.
	Tasks []int64
	Group int
}

// slipReseeder is implemented by stochastic environments whose random stream can be reseeded
// mid-episode (frozenlake): continuations from one step branch on independent streams.
type slipReseeder interface {
	ReseedSlips(k int64)
}

// Run audits the policy of s: it rolls out a fresh batch (Tasks × Group episodes), runs every
// estimator variant on it, selects Options.Steps steps (Select), estimates each selected step's
// Q^π(s_t, a_t), V^π(s_t) and A = Q − V by Monte Carlo continuations from its exact context
// (rollout.Collector.Continue) and compares the estimators with that truth (see the package
// documentation for the definitions).
func Run(s Setup, o Options) (*Result, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if len(s.Tasks) == 0 || s.Group < 1 {
		return nil, errors.New("audit: the setup has no tasks")
	}
	t0 := time.Now()
	probe, err := s.NewEnv()
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	defer envs.Close(probe)
	_, seeded := probe.(envs.EpisodeSeeder)
	_, reseedable := probe.(slipReseeder)
	if seeded && !reseedable {
		return nil, fmt.Errorf("audit: env %s is stochastic (it takes episode seeds) but cannot reseed its random stream mid-episode (ReseedSlips): continuations from one step would all draw the same randomness", s.Env)
	}
	estimators, err := newEstimators(o.Variants)
	if err != nil {
		return nil, err
	}
	coll, err := rollout.NewCollector(s.Rollout, s.Format, s.NewEnv, o.Slots)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	defer coll.Close()
	dec := s.NewDecoder(o.Slots)
	rng := rand.New(rand.NewPCG(o.Seed, 0xa0d17))
	res := &Result{Env: s.Env, Settings: Settings{Steps: o.Steps, MC: o.MC, Gamma: o.Gamma, Seed: o.Seed, Slots: o.Slots, Z: o.Z, Bootstrap: o.Bootstrap}}

	batch, epSeeds, err := freshBatch(coll, dec, s, rng, res)
	if err != nil {
		return nil, err
	}
	res.Timing.Batch = time.Since(t0).Seconds()
	fmt.Fprintf(o.Log, "audit: batch of %d episodes (%d tasks × %d), success %.3f, %d steps (%.1fs)\n",
		res.Batch.Episodes, len(s.Tasks), s.Group, res.Batch.Success, res.Batch.Steps, res.Timing.Batch)
	if len(batch.Trajs) == 0 {
		return nil, errors.New("audit: every episode of the batch ended in an env error")
	}

	// Every estimator on the same batch.
	t1 := time.Now()
	adv := make([]rollout.Advantages, len(estimators))
	for k, e := range estimators {
		adv[k], _ = e.Estimate(batch)
		res.Estimators = append(res.Estimators, o.Variants[k].Label)
	}
	res.Timing.Estimators = time.Since(t1).Seconds()

	before, progress, err := stepProgress(probe, s.Tasks, batch)
	if err != nil {
		return nil, err
	}
	res.Shares = BatchShares(batch, progress)

	// The audited steps and their truth.
	sel := Select(batch, o.Steps, rng)
	for h := range NumStrata {
		res.Strata = append(res.Strata, StratumInfo{Name: StratumName(h), Population: sel.Population[h], Audited: sel.Sampled[h]})
	}
	t2 := time.Now()
	tr, err := monteCarlo(coll, dec, batch, epSeeds, sel, o, reseedable, rng)
	if err != nil {
		return nil, err
	}
	res.Timing.MonteCarlo = time.Since(t2).Seconds()
	res.Timing.Continuations = tr.continuations
	res.Timing.DecodeCalls += tr.stats.DecodeCalls
	res.Timing.SampledTokens += tr.stats.SampledTokens

	res.Steps = stepResults(batch, sel, tr, adv, before, progress)
	res.Truth, res.Metrics = compareAll(res.Steps, res.Estimators, o.Z, o.Bootstrap, o.Seed)
	res.Truth.Dropped = tr.dropped
	res.Timing.Total = time.Since(t0).Seconds()
	return res, nil
}

// newEstimators builds every variant's estimator; labels must be non-empty and distinct.
func newEstimators(variants []Variant) ([]advantage.Estimator, error) {
	estimators := make([]advantage.Estimator, len(variants))
	labels := map[string]bool{}
	for k, v := range variants {
		if labels[v.Label] || v.Label == "" {
			return nil, fmt.Errorf("audit: estimator label %q is empty or repeated", v.Label)
		}
		labels[v.Label] = true
		var err error
		if estimators[k], err = advantage.New(v.Name, v.Options); err != nil {
			return nil, fmt.Errorf("audit: %s: %w", v.Label, err)
		}
	}
	return estimators, nil
}

// freshBatch rolls out s.Tasks × s.Group episodes and returns the batch of those that ended
// without an env error, with their episode seeds; it records the batch in res.Batch and its
// decoding work in res.Timing. The episodes go through Continue with empty histories (Collect
// with known episode seeds), so that a stochastic env's episodes can be replayed.
func freshBatch(coll *rollout.Collector, dec rollout.Decoder, s Setup, rng *rand.Rand, res *Result) (*rollout.Batch, []int64, error) {
	starts := make([]rollout.Start, 0, len(s.Tasks)*s.Group)
	for _, seed := range s.Tasks {
		for range s.Group {
			starts = append(starts, rollout.Start{TaskSeed: seed, EpisodeSeed: rng.Int64()})
		}
	}
	raw, bst, err := coll.Continue(dec, starts, rng)
	if err != nil {
		return nil, nil, fmt.Errorf("audit: batch: %w", err)
	}
	batch := &rollout.Batch{Tasks: len(s.Tasks)}
	var epSeeds []int64
	succ, errs := 0, 0
	for i := range raw.Trajs {
		tr := raw.Trajs[i]
		tr.Task = i / s.Group
		if tr.Err != "" {
			errs++
			continue
		}
		if tr.Success {
			succ++
		}
		batch.Trajs = append(batch.Trajs, tr)
		epSeeds = append(epSeeds, starts[i].EpisodeSeed)
	}
	res.Batch = BatchInfo{Tasks: len(s.Tasks), Group: s.Group, Episodes: len(raw.Trajs), Errors: errs,
		Steps: batch.NumSteps(), Success: rollout.Ratio(succ, len(batch.Trajs))}
	res.Timing.DecodeCalls += bst.DecodeCalls
	res.Timing.SampledTokens += bst.SampledTokens
	return batch, epSeeds, nil
}

// stepProgress gives every step of the batch its distance to the goal before it and its
// progress: d(s_0) from a reset of the task, then the distances the steps recorded.
func stepProgress(probe envs.Env, tasks []int64, batch *rollout.Batch) (before, progress [][]int, err error) {
	dist0 := map[int64]int{}
	for _, seed := range tasks {
		if _, ok := dist0[seed]; ok {
			continue
		}
		_, obs, err := probe.Reset(seed)
		if err != nil {
			return nil, nil, fmt.Errorf("audit: reset task %d: %w", seed, err)
		}
		dist0[seed] = obs.Info.Distance
	}
	progress = make([][]int, len(batch.Trajs))
	before = make([][]int, len(batch.Trajs))
	for i := range batch.Trajs {
		tr := &batch.Trajs[i]
		d := dist0[tr.TaskSeed]
		for _, st := range tr.Steps {
			before[i] = append(before[i], d)
			progress[i] = append(progress[i], Progress(d, st.Distance))
			d = st.Distance
		}
	}
	return before, progress, nil
}

// stepResults is every audited step with its truth (tr, in sel.Steps order) and each
// estimator's advantage.
func stepResults(batch *rollout.Batch, sel Selection, tr mcResult, adv []rollout.Advantages, before, progress [][]int) []StepResult {
	var out []StepResult
	for k, ref := range sel.Steps {
		traj := &batch.Trajs[ref.Traj]
		st := traj.Steps[ref.T]
		m := tr.steps[k]
		sr := StepResult{Traj: ref.Traj, Task: traj.Task, TaskSeed: traj.TaskSeed, T: ref.T, Len: len(traj.Steps),
			Success: traj.Success, Stratum: StratumName(sel.Stratum[k]), Weight: sel.Weight[k],
			Key: st.Key, Action: st.Action, DistBefore: before[ref.Traj][ref.T], DistAfter: st.Distance,
			Progress: progress[ref.Traj][ref.T], LogPAction: Num(m.logp),
			Q: Num(m.q), QSE: Num(m.qse), V: Num(m.v), VSE: Num(m.vse), A: Num(m.q - m.v),
			ASE: Num(math.Sqrt(m.qse*m.qse + m.vse*m.vse)), NQ: m.nq, NV: m.nv}
		for e := range adv {
			sr.Est = append(sr.Est, adv[e][ref.Traj][ref.T])
		}
		out = append(out, sr)
	}
	return out
}
