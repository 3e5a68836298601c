package main

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
	"github.com/graftrl/graftrl/policy/spec"
	"github.com/graftrl/graftrl/rollout"
)

// TestCliffConformance holds the custom env to the contract every shipped env meets.
func TestCliffConformance(t *testing.T) {
	envtest.Run(t, func() (envs.Env, error) { return &cliff{}, nil },
		envtest.ActionSet("left", "right"), envtest.Penalty(-0.1))
}

// TestSideBySide runs the program briefly with a tiny model: both learners complete every
// iteration with finite losses, start from the same batch, and credit it differently — GRPO
// one advantage per episode, GRAFT per step.
func TestSideBySide(t *testing.T) {
	const iters = 3
	var out bytes.Buffer
	o := options{env: "cliff", iters: iters, tasks: 2, group: 4, eval: 4, seed: 1, out: &out,
		model: spec.Config{DModel: 16, Layers: 1, Heads: 2, DFF: 32, MaxLen: 64, InitStd: 0.02}}
	records, heldOut, err := run(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"grpo", "graft"} {
		if len(records[name]) != iters {
			t.Fatalf("%s: %d iterations recorded, want %d", name, len(records[name]), iters)
		}
		for i, r := range records[name] {
			if s := r.stats; s.Skipped || math.IsNaN(s.Loss) || math.IsInf(s.Loss, 0) {
				t.Errorf("%s iteration %d: update %+v, want a finite loss, applied", name, i+1, s)
			}
		}
		if h, ok := heldOut[name]; !ok || h < 0 || h > 1 {
			t.Errorf("%s: held-out success %v (recorded %t), want a share in [0, 1]", name, h, ok)
		}
	}
	if lines := strings.Count(out.String(), "\n"); lines != iters+2 {
		t.Errorf("printed %d lines, want %d (one per iteration, one per learner's evaluation):\n%s", lines, iters+2, out.String())
	}

	grpo, graft := records["grpo"][0], records["graft"][0]
	if !reflect.DeepEqual(grpo.batch, graft.batch) {
		t.Fatal("the first batches differ: the learners should start from the same weights and sampling seed")
	}
	b := grpo.batch
	if len(b.Trajs) != o.tasks*o.group || b.NumSteps() == 0 {
		t.Fatalf("first batch: %d episodes, %d steps; want %d episodes with steps", len(b.Trajs), b.NumSteps(), o.tasks*o.group)
	}
	differ := false
	for i, tr := range b.Trajs {
		for name, adv := range map[string]rollout.Advantages{"grpo": grpo.adv, "graft": graft.adv} {
			if len(adv[i]) != len(tr.Steps) {
				t.Fatalf("%s: episode %d has %d advantages for %d steps", name, i, len(adv[i]), len(tr.Steps))
			}
		}
		for j := range tr.Steps {
			// GRPO gives every step of an episode the episode's normalised outcome.
			if grpo.adv[i][j] != grpo.adv[i][0] {
				t.Errorf("grpo: episode %d step %d has advantage %v, step 0 %v", i, j, grpo.adv[i][j], grpo.adv[i][0])
			}
			if math.IsNaN(graft.adv[i][j]) || math.IsInf(graft.adv[i][j], 0) {
				t.Errorf("graft: episode %d step %d has advantage %v", i, j, graft.adv[i][j])
			}
			differ = differ || graft.adv[i][j] != grpo.adv[i][j]
		}
	}
	if !nonzero(grpo.adv) || !nonzero(graft.adv) || !differ {
		t.Errorf("first batch: grpo %v, graft %v; want nonzero advantages that differ", grpo.adv, graft.adv)
	}
}

func nonzero(a rollout.Advantages) bool {
	for _, row := range a {
		for _, v := range row {
			if v != 0 {
				return true
			}
		}
	}
	return false
}

// TestTrainBatch lays out one episode by hand: <bos> w w a₀ w a₁, the actions at tokens 3 and 5.
// Position t predicts token t+1, so positions 2 and 4 are trained on, with the advantages and
// sampling log-probs of steps 0 and 1 and token-mean weights ½ each; the padding row weighs 0.
func TestTrainBatch(t *testing.T) {
	b := &rollout.Batch{Tasks: 1, Trajs: []rollout.Trajectory{{Steps: make([]rollout.Step, 2), Rows: []rollout.Row{{
		Tokens:  []int32{1, 7, 8, 9, 7, 10},
		LogProb: []float32{0, 0, 0, -0.5, 0, -0.25},
		StepOf:  []int16{-1, -1, -1, 0, -1, 1},
	}}}}}
	tb := trainBatch(b, rollout.Advantages{{0.5, -1}}, spec.DefaultLossConfig(), 2, 8)
	if tb.Rows != 2 || tb.Len != 8 {
		t.Fatalf("shape %d × %d, want 2 × 8", tb.Rows, tb.Len)
	}
	for p := range 16 {
		w, adv, logp := float32(0), float32(0), float32(0)
		switch p {
		case 2:
			w, adv, logp = 0.5, 0.5, -0.5
		case 4:
			w, adv, logp = 0.5, -1, -0.25
		}
		if tb.Weight[p] != w || tb.Adv[p] != adv || tb.OldLogp[p] != logp {
			t.Errorf("position %d: weight %v adv %v logp %v, want %v %v %v", p, tb.Weight[p], tb.Adv[p], tb.OldLogp[p], w, adv, logp)
		}
	}
	if got, want := tb.Tokens[:6], []int32{1, 7, 8, 9, 7, 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("tokens %v, want %v", got, want)
	}
	if got, want := tb.Targets[:6], []int32{7, 8, 9, 7, 10, 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("targets %v, want %v", got, want)
	}
}
