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
	cfg, err := config.Load(filepath.Join(runDir, rundir.ConfigFile), nil)
	if err != nil {
		return nil, err
	}
	cfg.OutDir, cfg.Name = filepath.Dir(filepath.Clean(runDir)), filepath.Base(filepath.Clean(runDir))
	t, err := newTrainer(cfg, opts, true)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	list, err := rundir.ListCheckpoints(runDir)
	if err != nil {
		return nil, err
	}
	if ckpt == "" {
		if ckpt, err = latestValidCheckpoint(runDir, t.logf); err != nil {
			return nil, err
		}
		if ckpt == "" {
			return nil, fmt.Errorf("run %s has no valid checkpoint", runDir)
		}
	} else if err := VerifyCheckpoint(ckpt); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", ckpt, err)
	}
	if len(list) > 0 && !sameDir(ckpt, list[len(list)-1]) {
		t.logf("evaluating checkpoint %s, not the run's newest (%s)", ckpt, list[len(list)-1])
	}
	st, err := t.restore(ckpt)
	if err != nil {
		return nil, err
	}
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
