package audit

import (
	"math"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/rollout"
	"github.com/graftrl/graftrl/tokens"
)

// uniformDecoder gives every token the same logit; the action bias restricts the choice.
type uniformDecoder struct{ vocab int }

func (d uniformDecoder) Step(tokens, _ []int32, _ []bool) ([]float32, error) {
	return make([]float32, len(tokens)*d.vocab), nil
}

// A stochastic env is audited by replaying each trajectory with its recorded episode seed (every
// replayed step is checked against the recording) and reseeding its random stream at the branch
// point, so that the continuations of one step slip independently.
func TestStochasticEnvReplaysAndBranches(t *testing.T) {
	newEnv := func() (envs.Env, error) { return envs.New("frozenlake", envs.Options{"slip": 0.3}) }
	probe, err := newEnv()
	if err != nil {
		t.Fatal(err)
	}
	vocab, err := tokens.NewVocab(probe.Vocabulary())
	if err != nil {
		t.Fatal(err)
	}
	bias := make([]float32, vocab.Size())
	for i := range bias {
		bias[i] = -1e9
	}
	for _, id := range vocab.Encode(nil, strings.Join(probe.(envs.ActionWorder).ActionWords(), " ")) {
		bias[id] = 0
	}
	s := Setup{
		Env: "frozenlake", NewEnv: newEnv, Format: rollout.Words{V: vocab},
		Rollout:    rollout.Config{Layout: rollout.LayoutEpisode, MaxLen: 256, ActionMaxTokens: 1, ActionBias: bias},
		NewDecoder: func(int) rollout.Decoder { return uniformDecoder{vocab.Size()} },
		Tasks:      []int64{1, 2}, Group: 8,
	}
	res, err := Run(s, Options{Steps: 30, MC: 16, Seed: 5, Slots: 64})
	if err != nil {
		t.Fatal(err)
	}
	// Under the uniform policy π(a_t) = 1/4, and with slips Q's continuations differ: some step has
	// a Q whose samples are not all equal.
	spread := false
	for _, st := range res.Steps {
		if math.Abs(float64(st.LogPAction)-math.Log(0.25)) > 1e-5 {
			t.Errorf("log π(a_t) = %g, want log ¼", st.LogPAction)
		}
		spread = spread || st.QSE > 0
	}
	if !spread {
		t.Error("every Q has zero standard error: the continuations did not branch")
	}
}

// seededChain is a chain env that takes episode seeds but cannot be reseeded mid-episode.
type seededChain struct{ chainEnv }

func (*seededChain) SeedEpisode(int64) {}

func TestStochasticEnvWithoutReseedRefused(t *testing.T) {
	s := chainSetup(t, 4)
	s.NewEnv = func() (envs.Env, error) { return &seededChain{}, nil }
	if _, err := Run(s, Options{Steps: 4, MC: 2}); err == nil || !strings.Contains(err.Error(), "ReseedSlips") {
		t.Fatalf("error %v", err)
	}
}
