package trainer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/rollout"
	"github.com/graftrl/graftrl/rundir"
)

// evaluate runs the fixed panels: greedy decoding on the training panel and on the held-out panel,
// and sampled decoding on both when configured. Run writes the line to metrics.jsonl with type "eval".
// eval/success is greedy success on the training panel (the tasks the policy is trained on);
// eval/heldout/success is the same on layouts it never saw.
func (t *Trainer) evaluate(ctx context.Context) (Metrics, error) {
	m := Metrics{"type": "eval", "iter": t.iter, "env_steps": t.envSteps}
	// The evaluation stream as this evaluation starts goes into the iteration's checkpoint, so
	// that graftrl eval of the checkpoint repeats this very evaluation.
	state, err := t.pcgs["eval"].MarshalBinary()
	if err != nil {
		return nil, err
	}
	t.evalStart, t.evalStartIter = state, t.iter
	t.evalEpisodes, t.evalErrors, t.evalFirstErr = 0, 0, ""
	panels := []struct {
		name  string
		tasks []int64
	}{{"train", t.trainTasks}, {"heldout", t.evalTasks}}
	for _, p := range panels {
		if len(p.tasks) == 0 {
			continue
		}
		modes := []bool{true}
		if t.cfg.Eval.Sampled {
			modes = append(modes, false)
		}
		for _, greedy := range modes {
			b, _, err := t.coll.CollectContext(ctx, t.dec, rollout.Request{Tasks: p.tasks, Group: 1, Greedy: greedy}, t.rngEval)
			if err != nil {
				return nil, fmt.Errorf("evaluate: %w", err)
			}
			mode := "greedy"
			if !greedy {
				mode = "sampled"
			}
			addEpisodeStats(m, "eval/"+p.name+"/"+mode+"/", b)
			for i := range b.Trajs {
				t.evalEpisodes++
				if e := b.Trajs[i].Err; e != "" {
					if t.evalErrors++; t.evalFirstErr == "" {
						t.evalFirstErr = e
					}
				}
			}
		}
	}
	m["eval/success"] = m["eval/train/greedy/success"]
	if t.cfg.Tasks.Train.Open {
		// Open training tasks have no training panel: every training task is new, so the
		// success that compares runs is the held-out panel's.
		m["eval/success"] = m["eval/heldout/greedy/success"]
	}
	if v, ok := m["eval/heldout/greedy/success"]; ok {
		m["eval/heldout/success"] = v
	}
	return m, nil
}

// evalLine is the one-line summary of an evaluation for the log.
func evalLine(m Metrics) string {
	var parts []string // held-out first, as in GainSummary
	if v, ok := m["eval/heldout/greedy/success"]; ok {
		parts = append(parts, fmt.Sprintf("held-out %.3f", v))
	}
	if v, ok := m["eval/train/greedy/success"]; ok {
		parts = append(parts, fmt.Sprintf("train %.3f", v))
	}
	s := "greedy success " + strings.Join(parts, ", ")
	if v, ok := m["eval/train/sampled/success"]; ok {
		s += fmt.Sprintf("; sampled train %.3f", v)
	}
	return s
}

// EvaluateRun loads a run's config and a checkpoint (the newest valid one when ckpt is empty)
// and evaluates it on the fixed panels. It writes nothing — not into the run directory, not a
// warm start (the checkpoint holds the weights) — so it takes no lock and may evaluate a run
// while it trains. It starts the evaluation stream where the run's own evaluation of that
// checkpoint started, so the two agree, sampled episodes included. When the checkpoint
// evaluated is not the run's newest, it says so through opts.Out.
func EvaluateRun(runDir, ckpt string, opts Options) (Metrics, error) {
	t, ckpt, st, err := openCheckpoint(runDir, ckpt, opts)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	if st.EvalRNG != nil {
		if err := t.pcgs["eval"].UnmarshalBinary(st.EvalRNG); err != nil {
			return nil, fmt.Errorf("checkpoint %s: evaluation stream: %w", ckpt, err)
		}
	}
	m, err := t.evaluate(context.Background())
	if err != nil {
		return nil, err
	}
	if t.evalEpisodes > 0 && t.evalErrors == t.evalEpisodes {
		return nil, fmt.Errorf("evaluate %s: all %d episodes failed, so nothing was evaluated (the first: %s)",
			ckpt, t.evalEpisodes, t.evalFirstErr)
	}
	m["checkpoint"] = ckpt
	return m, nil
}

// openCheckpoint builds the trainer of a run's config, writing nothing and taking no lock, and
// restores a checkpoint into it (the newest valid one when ckpt is empty); it says through
// opts.Out when that is not the run's newest.
func openCheckpoint(runDir, ckpt string, opts Options) (*Trainer, string, trainerState, error) {
	t, err := openRun(runDir, opts)
	if err != nil {
		return nil, "", trainerState{}, err
	}
	fail := func(err error) (*Trainer, string, trainerState, error) {
		t.Close()
		return nil, "", trainerState{}, err
	}
	list, err := rundir.ListCheckpoints(runDir)
	if err != nil {
		return fail(err)
	}
	if ckpt == "" {
		if ckpt, err = latestValidCheckpoint(runDir, t.logf); err != nil {
			return fail(err)
		}
		if ckpt == "" {
			return fail(fmt.Errorf("run %s has no valid checkpoint", runDir))
		}
	} else if err := VerifyCheckpoint(ckpt); err != nil {
		return fail(fmt.Errorf("checkpoint %s: %w", ckpt, err))
	}
	if len(list) > 0 && !sameDir(ckpt, list[len(list)-1]) {
		t.logf("evaluating checkpoint %s, not the run's newest (%s)", ckpt, list[len(list)-1])
	}
	st, err := t.restore(ckpt)
	if err != nil {
		return fail(err)
	}
	return t, ckpt, st, nil
}

// openRun builds the trainer of a run directory's config for evaluation: nothing is written and
// no warm start is loaded.
func openRun(runDir string, opts Options) (*Trainer, error) {
	cfg, err := loadRunConfig(runDir)
	if err != nil {
		return nil, err
	}
	return newTrainer(cfg, opts, true)
}

// loadRunConfig reads a run directory's config.yaml, its output directory and name set to the
// run's.
func loadRunConfig(runDir string) (config.Config, error) {
	cfg, err := config.Load(filepath.Join(runDir, rundir.ConfigFile), nil)
	if err != nil {
		return config.Config{}, err
	}
	cfg.OutDir, cfg.Name = filepath.Dir(filepath.Clean(runDir)), filepath.Base(filepath.Clean(runDir))
	return cfg, nil
}

// Episode is one episode a run's policy played (PlayRun): the checkpoint, the trajectory, and
// the text of each of its token rows (for a pretrained policy, the chat).
type Episode struct {
	Checkpoint string
	Traj       rollout.Trajectory
	Rows       []string
}

// Play says what PlayRun plays: the task, the weights and the decoding.
type Play struct {
	// Task is the task seed.
	Task int64
	// Checkpoint is the checkpoint directory ("": the run's newest valid one).
	Checkpoint string
	// Untrained plays the run's weights before training instead of a checkpoint: the pretrained
	// model with fresh adapters, or the config's initial weights. Runs with a warm start
	// (policy.init or an sft section) are refused: their starting weights are not the config's.
	Untrained bool
	// Sampled samples the policy's tokens (seeded by Seed) instead of taking the likeliest.
	Sampled bool
	// Seed seeds the sampling when Sampled is set.
	Seed uint64
}

// PlayRun lets a run's policy play one task (see Play). Like EvaluateRun it writes nothing.
func PlayRun(runDir string, p Play, opts Options) (Episode, error) {
	var (
		t    *Trainer
		ckpt = "untrained (the weights before training)"
		err  error
	)
	if p.Untrained {
		t, err = openUntrained(runDir, opts)
	} else {
		t, ckpt, _, err = openCheckpoint(runDir, p.Checkpoint, opts)
	}
	if err != nil {
		return Episode{}, err
	}
	defer t.Close()
	req := rollout.Request{Tasks: []int64{p.Task}, Group: 1, Greedy: !p.Sampled}
	b, _, err := t.coll.Collect(t.dec, req, rngFor(p.Seed, streamEval))
	if err != nil {
		return Episode{}, err
	}
	ep := Episode{Checkpoint: ckpt, Traj: b.Trajs[0]}
	for _, r := range ep.Traj.Rows {
		ep.Rows = append(ep.Rows, t.info.Format.Decode(r.Tokens))
	}
	return ep, nil
}

// openUntrained builds a run's trainer with the weights its config starts from, refusing, before
// any work, runs that start from a warm start.
func openUntrained(runDir string, opts Options) (*Trainer, error) {
	cfg, err := loadRunConfig(runDir)
	if err != nil {
		return nil, err
	}
	if cfg.Policy.Init != "" || cfg.SFT.Enabled() {
		return nil, &config.Error{Flag: "--untrained", Msg: fmt.Sprintf("run %s starts from a warm start (policy.init or sft), not from its config's weights (allowed: a run without one; play a checkpoint of this one instead)", runDir)}
	}
	return newTrainer(cfg, opts, true)
}

// sameDir reports whether a and b name the same directory.
func sameDir(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// EvalSummary is a one-line summary of evaluation metrics.
func EvalSummary(m Metrics) string {
	if m == nil {
		return "no evaluation"
	}
	return evalLine(m)
}
