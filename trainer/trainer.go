// Package trainer runs graftrl's training loop: collect rollouts → estimate advantages → clipped
// policy-gradient update (epochs × minibatches) → evaluate on the fixed panels → log
// metrics.jsonl → checkpoint. Same config and seed, same metrics.
package trainer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/graftrl/graftrl/advantage"
	_ "github.com/graftrl/graftrl/advantage/all"
	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/policy"
	"github.com/graftrl/graftrl/policy/spec"
	"github.com/graftrl/graftrl/rollout"
	"github.com/graftrl/graftrl/rundir"
	"github.com/graftrl/graftrl/tokens"
)

// RNG streams of a run: each concern draws from its own generator so that, for example,
// evaluating more often does not change the training trajectory.
const (
	streamSample  = 1 // training rollouts
	streamTasks   = 2 // task order
	streamShuffle = 3 // minibatch shuffles
	streamEval    = 4 // sampled evaluation
	streamInit    = 5 // initial weights
	streamSFT     = 6 // demonstrations: task seeds and exploration noise
	streamSFTRows = 7 // the order of demonstration rows in supervised steps
)

// Trainer holds a run in progress.
type Trainer struct {
	cfg   config.Config
	dir   string
	out   io.Writer
	vocab *tokens.Vocab // nil for a pretrained policy
	info  EnvInfo
	pol   *policy.Policy
	host  Sampler
	coll  *rollout.Collector
	est   advantage.Estimator

	dec        rollout.Decoder
	maxSteps   int
	trainTasks []int64
	evalTasks  []int64

	rngSample, rngTasks, rngShuffle, rngEval *rand.Rand
	pcgs                                     map[string]*rand.PCG // the sources above, by name, for checkpoints
	order                                    []int                // shuffled training-panel indices
	cursor                                   int
	skipRun                                  int // consecutive skipped (non-finite) updates
	resumed                                  string
	// evalStart is the evaluation stream's state when the evaluation after iteration
	// evalStartIter started (see trainerState.EvalRNG).
	evalStart     []byte
	evalStartIter int
	// evalEpisodes and evalErrors count the episodes of the latest evaluation and those that
	// failed with an error (evalFirstErr is the first failure's message).
	evalEpisodes, evalErrors int
	evalFirstErr             string

	iter     int
	envSteps int64
	tokens   int64
	metrics  *os.File
	timing   *os.File
	progress progress
	quiet    bool
	resume   bool
	// initPath and initSHA are the directory the initial weights came from (policy.init or the
	// warm start) and the SHA-256 of its checkpoint; empty for random initial weights.
	initPath, initSHA string
	// creditWarned says a credit_diagnostics failure has been logged (it is logged once).
	creditWarned bool
	// afterIteration is a test hook run after each iteration's checkpoint.
	afterIteration func()

	// What New decided about the run directory (claim): release unlocks it; made lists the
	// directories New created for it (mkdirAllMade); resumeFrom is the checkpoint a resumed run
	// continues from and resumeState its trainer state; recorded is the config the run was
	// recorded with; finished says the run already reached its length, and finishedAs is its
	// summary.json when New found it finished as it is, without taking the lock (finishedAsIs).
	release     func()
	made        []string
	resumeFrom  string
	resumeState trainerState
	recorded    *config.Config
	finished    bool
	finishedAs  *Summary
}

// Options are run-time choices that are not part of the experiment's config.
type Options struct {
	// Out receives log lines (nil: os.Stderr).
	Out io.Writer
	// Progress shows a progress bar instead of log lines (for terminals).
	Progress bool
	// Quiet suppresses per-iteration log lines.
	Quiet bool
	// InstallPlugin lets GoMLX download a missing PJRT plugin for an xla backend (needs internet).
	InstallPlugin bool
	// Resume continues the run in the run directory from its newest valid checkpoint (as the
	// config's resume: auto does).
	Resume bool
}

func rngFor(seed uint64, stream uint64) *rand.Rand {
	return rand.New(pcgFor(seed, stream))
}

func pcgFor(seed uint64, stream uint64) *rand.PCG {
	return rand.NewPCG(seed, stream*0x9e3779b97f4a7c15+1)
}

// New prepares a run: the run directory, the env instances, the vocabulary and the policy. It
// first takes the run directory for this process (its lock) and decides from the directory
// alone whether the run may start or continue there, then checks what the environment tells
// (ProbeEnv: a remote env's server must answer here, and policy.max_len must hold the env's
// first turn) and that the directory can be written, all before the warm start or any other
// work; a refusal leaves no file behind, and no directory that New created. A resumed run that
// already reached its length does nothing more (Finished); when its summary.json is written,
// New reads the directory only, without taking the lock, so that it writes nothing. The
// trainer owns the env instances it builds and the run directory's lock until Run returns;
// Close releases both.
func New(cfg config.Config, opts Options) (*Trainer, error) {
	return newTrainer(cfg, opts, false)
}

// newTrainer is New; forEval builds the trainer that EvaluateRun restores a checkpoint into: it
// takes no lock, writes nothing and needs no initial weights (no warm start, no policy.init).
func newTrainer(cfg config.Config, opts Options, forEval bool) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, &config.Error{Msg: err.Error()}
	}
	t := &Trainer{cfg: cfg, out: opts.Out, dir: filepath.Join(cfg.OutDir, cfg.Name), quiet: opts.Quiet,
		resume: opts.Resume || cfg.Resume == "auto"}
	if t.out == nil {
		t.out = os.Stderr
	}
	if !forEval {
		if err := t.claim(); err != nil {
			return nil, err
		}
		if t.finished {
			return t, nil
		}
	}
	if err := t.build(opts, forEval); err != nil {
		t.abandon()
		t.Close()
		return nil, err
	}
	return t, nil
}

// build makes what a run needs once its directory is claimed: the env probe, the policy (from
// the warm start or policy.init unless forEval), the estimator, the collector and the sampler.
func (t *Trainer) build(opts Options, forEval bool) error {
	cfg := t.cfg
	info, err := ProbeEnv(&cfg)
	if err != nil {
		return err
	}
	t.vocab, t.maxSteps, t.info = info.Vocab, info.MaxTurns, info
	po := PolicyOptions(&cfg, info)
	if info.Model == nil {
		t.cfg.Policy.Config = po.Model
	} else {
		// The architecture is the model's; config.yaml keeps the section as given.
		t.cfg.Policy.Vocab = po.Model.Vocab
	}
	if !forEval {
		if err := checkWritable(t.dir, po.Model.NumParams()); err != nil {
			return &DirError{Dir: t.dir, Msg: err.Error()}
		}
	}
	if t.initPath = cfg.Policy.Init; t.initPath == "" && cfg.SFT.Enabled() && !forEval {
		if t.initPath, err = EnsureWarmStart(cfg, opts); err != nil {
			return err
		}
	}
	if t.initPath != "" && !forEval {
		if po.Init, t.initSHA, err = loadInit(t.initPath, po, info); err != nil {
			return err
		}
	}
	if t.pol, err = newPolicy(&cfg, po, opts.InstallPlugin); err != nil {
		return err
	}
	t.est, err = advantage.New(cfg.Estimator.Name, cfg.Estimator.Options)
	if err != nil {
		return &config.Error{Msg: err.Error()}
	}
	slots := cfg.Tasks.PerIter * cfg.Tasks.GroupSize
	if t.coll, err = newCollector(&t.cfg, t.pol, info.Format, slots); err != nil {
		return err
	}
	if err := t.setupSampler(slots); err != nil {
		return err
	}
	t.trainTasks = envs.TaskSeeds(envs.Train, cfg.Tasks.Train.Size, cfg.Tasks.PanelSeed) // empty when open
	t.evalTasks = envs.TaskSeeds(envs.Eval, cfg.Tasks.Eval, cfg.Tasks.PanelSeed)
	t.pcgs = map[string]*rand.PCG{}
	for name, stream := range map[string]uint64{"sample": streamSample, "tasks": streamTasks, "shuffle": streamShuffle, "eval": streamEval} {
		t.pcgs[name] = pcgFor(cfg.Seed, stream)
	}
	t.rngSample = rand.New(t.pcgs["sample"])
	t.rngTasks = rand.New(t.pcgs["tasks"])
	t.rngShuffle = rand.New(t.pcgs["shuffle"])
	t.rngEval = rand.New(t.pcgs["eval"])
	t.progress = newProgress(t.out, opts, cfg.Iterations)
	return nil
}

// Finished reports whether New found the run already at its length (a resumed run whose newest
// checkpoint reached iterations or the env_steps budget): Run then changes nothing and returns
// the run's recorded summary.
func (t *Trainer) Finished() bool { return t.finished }

// Close releases the env instances of the run (those that hold resources, such as a remote env's
// sessions) and the run directory's lock. The trainer must not be used afterwards; closing twice
// is harmless.
func (t *Trainer) Close() error {
	t.unlock()
	if t.coll == nil {
		return nil
	}
	err := t.coll.Close()
	t.coll = nil
	return err
}

// Dir is the run directory.
func (t *Trainer) Dir() string { return t.dir }

// Vocab is the token vocabulary of the run; nil for a pretrained policy (see Format).
func (t *Trainer) Vocab() *tokens.Vocab { return t.vocab }

// Format is how the run's episodes are laid out as tokens.
func (t *Trainer) Format() rollout.Format { return t.info.Format }

// Policy is the policy being trained.
func (t *Trainer) Policy() *policy.Policy { return t.pol }

// graphDecoder adapts the GoMLX decoder to rollout.Decoder (it computes every row).
type graphDecoder struct{ d *policy.Decoder }

func (g graphDecoder) Step(tokens, pos []int32, _ []bool) ([]float32, error) {
	return g.d.Step(tokens, pos)
}

func (t *Trainer) setupSampler(slots int) error {
	if t.cfg.Rollout.Sampler == "graph" {
		t.dec = graphDecoder{t.pol.NewDecoder(slots)}
		return nil
	}
	h, err := NewSampler(t.pol)
	if err != nil {
		return err
	}
	t.host, t.dec = h, h.NewDecoder(slots)
	return nil
}

// syncSampler copies the updated weights into the host inference path and returns the weights
// it read (nil when there is no host path).
func (t *Trainer) syncSampler() ([][]float32, error) {
	if t.host == nil {
		return nil, nil
	}
	w, err := t.pol.Weights()
	if err != nil {
		return nil, err
	}
	return w, t.host.SetWeights(w)
}

// ErrInterrupted is returned by Run when its context was cancelled (SIGINT/SIGTERM): the run
// stopped at an iteration boundary and wrote a checkpoint it can be resumed from.
var ErrInterrupted = errors.New("training interrupted")

// ErrAborted wraps the reasons a run gives up: too many env errors in an iteration, or too many
// consecutive non-finite updates.
var ErrAborted = errors.New("run aborted")

// Summary is the outcome of a run.
type Summary struct {
	Iterations int     `json:"iterations"`
	EnvSteps   int64   `json:"env_steps"`
	Tokens     int64   `json:"tokens"`
	Final      Metrics `json:"final_eval"`
	Seconds    float64 `json:"seconds"`
	// Init is the directory the initial weights came from (policy.init or the warm start) and
	// InitSHA256 the SHA-256 of its checkpoint; both empty for random initial weights.
	Init       string `json:"init,omitempty"`
	InitSHA256 string `json:"init_sha256,omitempty"`
}

// Metrics is one line of metrics.jsonl.
type Metrics map[string]any

// Run trains for the configured iterations. It stops early, with a checkpoint, when ctx is
// cancelled. A run New found finished changes nothing and returns its recorded summary. The run
// directory's lock is released when Run returns.
func (t *Trainer) Run(ctx context.Context) (Summary, error) {
	defer t.unlock()
	if t.finished {
		return t.finishedSummary()
	}
	start := time.Now()
	if err := t.openRun(); err != nil {
		return Summary{}, err
	}
	defer t.closeRun()
	for _, w := range t.cfg.Warnings() {
		t.logf("warning: %s", w)
	}
	if t.resumed != "" {
		t.logf("resuming %s from %s (iteration %d, %d env steps)", t.dir, t.resumed, t.iter, t.envSteps)
	} else if t.initPath != "" && !t.quiet {
		t.logf("initial weights from %s (policy sha256 %s)", t.initPath, t.initSHA)
	}
	var final Metrics
	if t.cfg.Eval.AtStart && t.iter == 0 {
		m, interrupted, err := t.evaluateLine(ctx)
		if interrupted {
			return t.interruptedInEval(final, start)
		}
		if err != nil {
			return Summary{}, err
		}
		t.logf("iter 0 (%s): %s", map[bool]string{false: "untrained", true: "initial weights"}[t.initPath != ""], evalLine(m))
		final = m
	}
	for !t.reachedLength() {
		if ctx.Err() != nil {
			break
		}
		m, tm, err := t.iteration(ctx)
		if err != nil && ctx.Err() != nil {
			break // interrupted while collecting: the iteration left no trace
		}
		if err != nil {
			return Summary{}, fmt.Errorf("iteration %d: %w", t.iter+1, err)
		}
		em, interrupted, err := t.record(ctx, m, tm)
		if interrupted {
			return t.interruptedInEval(final, start)
		}
		if err != nil {
			return Summary{}, err
		}
		if em != nil {
			final = em
		}
	}
	t.progress.finish()
	if ctx.Err() != nil {
		if list, _ := rundir.ListCheckpoints(t.dir); len(list) == 0 || filepath.Base(list[len(list)-1]) != rundir.CheckpointName(t.iter) {
			if err := t.saveCheckpoint(); err != nil {
				return Summary{}, err
			}
		}
		t.logf("interrupted after iteration %d; checkpoint written, resume with: graftrl train --resume %s", t.iter, t.dir)
		return t.summary(final, start), ErrInterrupted
	}
	s := t.summary(final, start)
	data, _ := json.MarshalIndent(s, "", "  ")
	if err := os.WriteFile(filepath.Join(t.dir, rundir.SummaryFile), append(data, '\n'), 0o644); err != nil {
		return s, fmt.Errorf("write summary: %w", err)
	}
	return s, nil
}

// reachedLength reports whether the run has done its iterations or its env_steps budget.
func (t *Trainer) reachedLength() bool {
	return t.iter >= t.cfg.Iterations || (t.cfg.EnvSteps > 0 && t.envSteps >= t.cfg.EnvSteps)
}

// record completes an iteration that ran, with its metrics m and timings tm: it counts it,
// writes its metrics line, evaluates when eval.every or the run's end says so (returning that
// evaluation's metrics, nil when there was none), writes its timing line, checkpoints when
// checkpoint.every or the run's end says so, and logs it. interrupted says that ctx ended the
// evaluation, which left no line.
func (t *Trainer) record(ctx context.Context, m, tm Metrics) (em Metrics, interrupted bool, err error) {
	t.iter++
	m["iter"], tm["iter"] = t.iter, t.iter
	if err := t.writeLine(t.metrics, m); err != nil {
		return nil, false, err
	}
	last := t.reachedLength()
	if last || (t.cfg.Eval.Every > 0 && t.iter%t.cfg.Eval.Every == 0) {
		t0 := time.Now()
		if em, interrupted, err = t.evaluateLine(ctx); interrupted || err != nil {
			return nil, interrupted, err
		}
		tm["time/eval"] = time.Since(t0).Seconds()
		if !t.quiet {
			// On a terminal the line goes above the progress bar (logf clears it; the
			// bar redraws below at its next update).
			t.logf("iter %d eval: %s", t.iter, evalLine(em))
		}
	}
	if err := t.writeLine(t.timing, tm); err != nil {
		return nil, false, err
	}
	if last || (t.cfg.Checkpoint.Every > 0 && t.iter%t.cfg.Checkpoint.Every == 0) {
		if err := t.saveCheckpoint(); err != nil {
			return nil, false, err
		}
	}
	if t.afterIteration != nil {
		t.afterIteration()
	}
	t.progress.update(t.iter, m)
	if !t.progress.active() && !t.quiet {
		t.logf("iter %d: success %.3f return %.3f turns %.1f loss %.4f entropy %.3f (%.1fs)", t.iter,
			m["success"], m["return"], m["turns"], m["loss"], m["entropy"], tm["time/iteration"])
	}
	return em, false, nil
}

// evaluateLine evaluates the policy and writes the evaluation's line to metrics.jsonl.
// interrupted says that ctx ended the evaluation: it then writes nothing and returns no error.
func (t *Trainer) evaluateLine(ctx context.Context) (m Metrics, interrupted bool, err error) {
	m, err = t.evaluate(ctx)
	if ctx.Err() != nil && err != nil {
		return nil, true, nil
	}
	if err == nil {
		err = t.writeLine(t.metrics, m)
	}
	return m, false, err
}

// interruptedInEval ends a run whose evaluation was interrupted (by a signal, while waiting on a
// remote env). The iteration it followed has changed the policy but is not complete, so no
// checkpoint is written: resuming continues from the newest checkpoint, whose iterations after it
// are run again. A run that has no checkpoint yet has its metrics.jsonl and timing.jsonl cut
// back to nothing: this process wrote every line of them, and resume refuses a run whose
// history outlived its checkpoints, so it starts again from the beginning only when they are
// empty — as it would have cut them back to that checkpoint.
func (t *Trainer) interruptedInEval(final Metrics, start time.Time) (Summary, error) {
	t.progress.finish()
	from := "continues from the newest checkpoint"
	if list, err := rundir.ListCheckpoints(t.dir); err == nil && len(list) == 0 {
		for _, f := range []*os.File{t.metrics, t.timing} {
			if err := f.Truncate(0); err != nil {
				return Summary{}, fmt.Errorf("interrupted before the first checkpoint: cut %s back: %w", f.Name(), err)
			}
		}
		from = "starts the run again from the beginning (it has no checkpoint yet)"
	}
	t.logf("interrupted during the evaluation after iteration %d; no checkpoint written for it: resume with graftrl train --resume %s %s",
		t.iter, t.dir, from)
	return t.summary(final, start), ErrInterrupted
}

// summary is the run's outcome so far.
func (t *Trainer) summary(final Metrics, start time.Time) Summary {
	return Summary{Iterations: t.iter, EnvSteps: t.envSteps, Tokens: t.tokens, Final: final,
		Seconds: time.Since(start).Seconds(), Init: t.initPath, InitSHA256: t.initSHA}
}

// nextTasks draws PerIter tasks from the training panel: a seeded permutation, consumed in order
// and redrawn when exhausted, so every task is seen equally often. With open training tasks it
// draws PerIter fresh ones (envs.OpenTaskSeeds) from the same stream.
func (t *Trainer) nextTasks() []int64 {
	if t.cfg.Tasks.Train.Open {
		return envs.OpenTaskSeeds(t.rngTasks, t.cfg.Tasks.PerIter)
	}
	out := make([]int64, 0, t.cfg.Tasks.PerIter)
	for len(out) < t.cfg.Tasks.PerIter {
		if t.cursor >= len(t.order) {
			t.order = t.rngTasks.Perm(len(t.trainTasks))
			t.cursor = 0
		}
		out = append(out, t.trainTasks[t.order[t.cursor]])
		t.cursor++
	}
	return out
}

// iteration runs one collect → estimate → update cycle and returns its metrics and timings. When
// ctx ends the collection it returns ctx's error with the random streams and the task order as
// they were before it, so that a checkpoint written then continues exactly here.
func (t *Trainer) iteration(ctx context.Context) (Metrics, Metrics, error) {
	t0 := time.Now()
	c0 := t.pol.Compilations()
	before, err := t.streamState()
	if err != nil {
		return nil, nil, err
	}
	tasks := t.nextTasks()
	batch, cst, err := t.coll.CollectContext(ctx, t.dec, rollout.Request{Tasks: tasks, Group: t.cfg.Tasks.GroupSize}, t.rngSample)
	if err != nil {
		if ctx.Err() != nil {
			if rerr := t.restoreStreams(before); rerr != nil {
				return nil, nil, rerr
			}
		}
		return nil, nil, err
	}
	tSample := time.Since(t0)
	t.envSteps += int64(cst.EnvSteps)
	m := Metrics{"type": "train", "env_steps": t.envSteps}
	if cst.Retried > 0 {
		// Only when an episode was retried, so that runs without remote faults keep the
		// metrics.jsonl they always had.
		m["retried"] = cst.Retried
	}
	addEpisodeStats(m, "", batch)
	errs := m["errors"].(float64)
	if errs > t.cfg.Faults.MaxErrorShare*float64(len(batch.Trajs)) {
		return nil, nil, fmt.Errorf("%w: %.0f of %d episodes failed with environment errors (faults.max_error_share = %g); first: %s",
			ErrAborted, errs, len(batch.Trajs), t.cfg.Faults.MaxErrorShare, firstError(batch))
	}
	if int(errs) == len(batch.Trajs) {
		// Even faults.max_error_share = 1 does not let an iteration train on nothing.
		return nil, nil, fmt.Errorf("%w: no episode could run: all %d failed with environment errors; first: %s",
			ErrAborted, len(batch.Trajs), firstError(batch))
	}
	if err := t.checkTrainable(batch); err != nil {
		return nil, nil, err
	}

	if k := t.cfg.SaveBatches; k > 0 && (t.iter+1)%k == 0 {
		if err := t.saveBatch(batch); err != nil {
			return nil, nil, err
		}
	}

	valid := batch.WithoutErrors()
	t.addCreditDiagnostics(valid, m) // credit_diagnostics: reads the batch, draws nothing

	t1 := time.Now()
	adv, diag := t.est.Estimate(valid)
	tEstimate := time.Since(t1)
	for k, v := range diag {
		m["est/"+k] = v
	}

	t2 := time.Now()
	rows, dropped := collectRows(valid, adv, t.cfg.Update.DropZeroAdvantage)
	m["dropped_rows"] = dropped
	for _, r := range rows {
		for _, k := range r.row.StepOf {
			if k >= 0 {
				t.tokens++
			}
		}
	}
	m["tokens"] = t.tokens
	var weights0 [][]float32
	if t.cfg.CreditDiagnostics && t.info.Model == nil {
		if weights0, err = t.pol.Weights(); err != nil {
			return nil, nil, err
		}
	}
	if err := t.update(rows, m); err != nil {
		return nil, nil, err
	}
	after, err := t.syncSampler()
	if err != nil {
		return nil, nil, err
	}
	if weights0 != nil {
		if after == nil {
			if after, err = t.pol.Weights(); err != nil {
				return nil, nil, err
			}
		}
		m[KeyParamChange] = paramChange(weights0, after)
	}
	tUpdate := time.Since(t2)
	tm := Metrics{
		"time/sample": tSample.Seconds(), "time/env": cst.EnvTime.Seconds(), "time/decode": cst.DecodeTime.Seconds(),
		"time/estimate": tEstimate.Seconds(), "time/update": tUpdate.Seconds(),
		"time/iteration": time.Since(t0).Seconds(), "decode_calls": cst.DecodeCalls, "sampled_tokens": cst.SampledTokens,
	}
	c := t.pol.Compilations()
	tm["compiles"], tm["time/compile"] = c.Count-c0.Count, (c.Time - c0.Time).Seconds()
	return m, tm, nil
}

// checkTrainable refuses to train on a batch without a single action token (an iteration never
// trains on nothing): every episode that ran ended before its first action, which a context too
// short for the env's prompts does.
func (t *Trainer) checkTrainable(b *rollout.Batch) error {
	ran, cut := 0, 0
	for i := range b.Trajs {
		tr := &b.Trajs[i]
		if tr.Err != "" {
			continue
		}
		ran++
		for _, r := range tr.Rows {
			for _, k := range r.StepOf {
				if k >= 0 {
					return nil
				}
			}
		}
		if tr.Truncated && len(tr.Steps) == 0 {
			cut++
		}
	}
	why := ""
	if cut > 0 {
		why = fmt.Sprintf("; %d were cut off before their first action by the context length (policy.max_len = %d)", cut, t.cfg.Policy.MaxLen)
	}
	return fmt.Errorf("%w: the iteration collected no trainable token: none of its %d episodes took an action%s", ErrAborted, ran, why)
}

// firstError returns the error of the batch's first errored episode ("" when none failed).
func firstError(b *rollout.Batch) string {
	for _, tr := range b.Trajs {
		if tr.Err != "" {
			return tr.Err
		}
	}
	return ""
}

// streams is what an iteration changes before its update: the random streams' states and the
// position in the task order.
type streams struct {
	rng    map[string][]byte
	order  []int
	cursor int
}

// streamState records the streams.
func (t *Trainer) streamState() (streams, error) {
	st := streams{rng: map[string][]byte{}, order: slices.Clone(t.order), cursor: t.cursor}
	for name, p := range t.pcgs {
		b, err := p.MarshalBinary()
		if err != nil {
			return st, fmt.Errorf("rng %s: %w", name, err)
		}
		st.rng[name] = b
	}
	return st, nil
}

// restoreStreams sets the streams back to a recorded state.
func (t *Trainer) restoreStreams(st streams) error {
	for name, p := range t.pcgs {
		if err := p.UnmarshalBinary(st.rng[name]); err != nil {
			return fmt.Errorf("rng %s: %w", name, err)
		}
	}
	t.order, t.cursor = st.order, st.cursor
	return nil
}

// samplerLogpTolerance bounds the gap between the log-probs recorded while sampling and those
// the trainer recomputes before its first step (logp_diff_max); a larger gap is reported. A
// pretrained model sums over far more terms (30 blocks of width 576 and 49,152 logits), so its
// float32 paths differ by more (docs/lm.md: logits within 1.6e-4): pretrainedLogpTolerance.
const (
	samplerLogpTolerance    = 1e-4
	pretrainedLogpTolerance = 1e-3
)

// update runs epochs × minibatches of clipped policy-gradient steps over the rows.
func (t *Trainer) update(rows []trainRow, m Metrics) error {
	u := t.cfg.Update
	var sum policy.TrainStats
	n, skipped := 0, 0
	logpDiff := 0.0
	for epoch := range u.Epochs {
		perm := t.rngShuffle.Perm(len(rows))
		mbs := min(u.Minibatches, max(1, len(rows)))
		for mb := range mbs {
			lo, hi := mb*len(rows)/mbs, (mb+1)*len(rows)/mbs
			if lo == hi {
				continue
			}
			sel := make([]trainRow, 0, hi-lo)
			for _, j := range perm[lo:hi] {
				sel = append(sel, rows[j])
			}
			tb := makeTrainBatch(sel, u.Loss, t.cfg.Policy.MaxLen, t.maxSteps, t.info.Model == nil)
			if u.Loss.KL != spec.KLNone {
				ref, err := t.pol.RefLogProbs(tb)
				if err != nil {
					return err
				}
				tb.RefLogp = ref
			}
			st, err := t.pol.Update(tb, t.cfg.Optim.LR)
			if err != nil {
				return err
			}
			if epoch == 0 && mb == 0 {
				// The first minibatch's forward pass still sees the sampling weights: its
				// log-probs must equal the ones recorded while sampling.
				for i, w := range tb.Weight {
					if w > 0 {
						logpDiff = math.Max(logpDiff, math.Abs(float64(st.LogProbs[i]-tb.OldLogp[i])))
					}
				}
			}
			if st.Skipped {
				skipped++
				t.skipRun++
				if t.skipRun >= t.cfg.Faults.MaxSkippedUpdates {
					return fmt.Errorf("%w: %d consecutive updates had a non-finite loss or gradient (faults.max_skipped_updates); the last checkpoint is intact",
						ErrAborted, t.skipRun)
				}
				continue
			}
			t.skipRun = 0
			n++
			sum.Loss += st.Loss
			sum.PGLoss += st.PGLoss
			sum.Entropy += st.Entropy
			sum.KL += st.KL
			sum.ApproxKL += st.ApproxKL
			sum.ClipFrac += st.ClipFrac
			sum.GradNorm += st.GradNorm
		}
	}
	div := float64(max(n, 1))
	m["loss"], m["pg_loss"], m["entropy"] = sum.Loss/div, sum.PGLoss/div, sum.Entropy/div
	m["kl"], m["approx_kl"], m["clip_frac"], m["grad_norm"] = sum.KL/div, sum.ApproxKL/div, sum.ClipFrac/div, sum.GradNorm/div
	m["updates"], m["skipped_updates"] = n, skipped
	m["logp_diff_max"] = logpDiff
	tol := samplerLogpTolerance
	if t.info.Model != nil {
		tol = pretrainedLogpTolerance
	}
	if logpDiff > tol {
		t.logf("warning: iteration %d: sampled and recomputed log-probs differ by %.2g (more than %g): the sampler and the trainer disagree",
			t.iter, logpDiff, tol)
	}
	return nil
}

// addEpisodeStats adds success, return, turns, invalid-action rate, truncation and error shares.
func addEpisodeStats(m Metrics, prefix string, b *rollout.Batch) {
	var succ, ret, turns, invalid, steps, trunc, errs float64
	for i := range b.Trajs {
		tr := &b.Trajs[i]
		if tr.Err != "" {
			errs++
			continue
		}
		if tr.Success {
			succ++
		}
		if tr.Truncated {
			trunc++
		}
		ret += tr.Return()
		turns += float64(len(tr.Steps))
		for _, s := range tr.Steps {
			steps++
			if s.Invalid {
				invalid++
			}
		}
	}
	n := float64(len(b.Trajs)) - errs
	div := math.Max(n, 1)
	m[prefix+"success"] = succ / div
	m[prefix+"return"] = ret / div
	m[prefix+"turns"] = turns / div
	m[prefix+"invalid_rate"] = invalid / math.Max(steps, 1)
	m[prefix+"truncated"] = trunc / div
	m[prefix+"errors"] = errs
}

func (t *Trainer) logf(format string, args ...any) {
	t.progress.clear()
	fmt.Fprintf(t.out, format+"\n", args...)
}

func (t *Trainer) writeLine(f *os.File, m Metrics) error {
	for k, v := range m {
		if x, ok := v.(float64); ok && (math.IsNaN(x) || math.IsInf(x, 0)) {
			m[k] = nil // JSON has no NaN; null marks a value that could not be computed
		}
	}
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("write %s: %w", f.Name(), err)
	}
	return nil
}
