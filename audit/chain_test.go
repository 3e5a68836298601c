package audit

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/rollout"
	"github.com/graftrl/graftrl/tokens"
)

// chainEnv is the audit's test environment, registered nowhere: states 0 … K on a line. "right"
// moves one state on (reaching K is success, outcome 1); "stay" keeps the state and costs
// stayCost; any other text is invalid and costs the same. The observation and the state key are
// "s<k>".
type chainEnv struct {
	k, turn int
}

const (
	chainK        = 4
	chainStayCost = 0.1
	chainMaxTurns = 200 // truncation is then vanishingly rare: the closed forms ignore it
)

func (e *chainEnv) Reset(int64) (string, envs.Observation, error) {
	e.k, e.turn = 0, 0
	return "chain", envs.Observation{Text: "s0", Info: envs.Info{Distance: chainK}}, nil
}

func (e *chainEnv) Step(a string) (envs.Observation, error) {
	e.turn++
	var o envs.Observation
	if a == "right" {
		e.k++
	} else {
		o.Reward = -chainStayCost
		o.Info.Invalid = a != "stay"
	}
	o.Text = e.StateKey()
	o.Info.Distance = chainK - e.k
	if e.k == chainK {
		o.Done, o.Outcome, o.Info.Success = true, 1, true
	} else if e.turn >= chainMaxTurns {
		o.Truncated = true
	}
	return o, nil
}

func (e *chainEnv) StateKey() string { return "s" + strconv.Itoa(e.k) }
func (e *chainEnv) Vocabulary() []string {
	return []string{"chain", "s0", "s1", "s2", "s3", "s4", "right", "stay"}
}
func (e *chainEnv) MaxTurns() int { return chainMaxTurns }

// chainP is the imposed policy: π(right | s_k) = chainP[k], π(stay | s_k) = 1 − chainP[k].
var chainP = [chainK]float64{0.35, 0.5, 0.65, 0.8}

// chainDecoder is a fake policy with fixed logits: at the turn after observation s_k it gives
// right and stay the log-probabilities of chainP[k], every other token −40.
type chainDecoder struct {
	vocab       int
	right, stay int32
	obs         map[int32]int // token id of s<k> → k
	last        []int         // per row: the state of the last observation fed
}

func (d *chainDecoder) Step(tokens, pos []int32, active []bool) ([]float32, error) {
	out := make([]float32, len(tokens)*d.vocab)
	for b, tok := range tokens {
		if active != nil && !active[b] {
			continue
		}
		if k, ok := d.obs[tok]; ok {
			d.last[b] = k
		}
		lg := out[b*d.vocab : (b+1)*d.vocab]
		for v := range lg {
			lg[v] = -40
		}
		p := chainP[d.last[b]]
		lg[d.right], lg[d.stay] = float32(math.Log(p)), float32(math.Log(1-p))
	}
	return out, nil
}

func chainSetup(t *testing.T, group int) Setup {
	t.Helper()
	vocab, err := tokens.NewVocab((&chainEnv{}).Vocabulary())
	if err != nil {
		t.Fatal(err)
	}
	ids := vocab.Encode(nil, "right stay s0 s1 s2 s3 s4")
	obs := map[int32]int{}
	for k := range chainK + 1 {
		obs[ids[2+k]] = min(k, chainK-1)
	}
	return Setup{
		Env:     "chain",
		NewEnv:  func() (envs.Env, error) { return &chainEnv{}, nil },
		Format:  rollout.Words{V: vocab},
		Rollout: rollout.Config{Layout: rollout.LayoutEpisode, MaxLen: 1024, ActionMaxTokens: 1},
		NewDecoder: func(batch int) rollout.Decoder {
			return &chainDecoder{vocab: vocab.Size(), right: ids[0], stay: ids[1], obs: obs, last: make([]int, batch)}
		},
		Tasks: []int64{0},
		Group: group,
	}
}

// chainValues is the closed form of V^π on the chain: V(K) = R = 1 (the success sink) and, from
// V(k) = p_k·γ·V(k+1) + (1 − p_k)·(−c + γ·V(k)),
//
//	V(k) = (p_k·γ·V(k+1) − (1 − p_k)·c) / (1 − (1 − p_k)·γ).
func chainValues(gamma float64) [chainK + 1]float64 {
	var v [chainK + 1]float64
	v[chainK] = 1
	for k := chainK - 1; k >= 0; k-- {
		p := chainP[k]
		v[k] = (p*gamma*v[k+1] - (1-p)*chainStayCost) / (1 - (1-p)*gamma)
	}
	return v
}

// chainQ is the closed form of Q^π(s_k, a): γ·V(k+1) for right, −c + γ·V(k) for stay.
func chainQ(v [chainK + 1]float64, k int, action string, gamma float64) float64 {
	if action == "right" {
		return gamma * v[k+1]
	}
	return -chainStayCost + gamma*v[k]
}

func chainState(t *testing.T, key string) int {
	t.Helper()
	k, err := strconv.Atoi(strings.TrimPrefix(key, "s"))
	if err != nil || k < 0 || k >= chainK {
		t.Fatalf("state key %q", key)
	}
	return k
}

// The audit's Monte Carlo truth — Q, V and A of each audited step, from continuations of its
// exact context — matches the closed form of the imposed policy within its standard errors,
// undiscounted (the default) and discounted.
func TestChainTruthMatchesClosedForm(t *testing.T) {
	for _, gamma := range []float64{1, 0.9} {
		t.Run(fmt.Sprintf("gamma=%g", gamma), func(t *testing.T) {
			res, err := Run(chainSetup(t, 32), Options{Steps: 40, MC: 200, Gamma: gamma, Seed: 7, Slots: 64})
			if err != nil {
				t.Fatal(err)
			}
			v := chainValues(gamma)
			var zs []float64
			check := func(what string, s StepResult, got, se Num, want float64) {
				t.Helper()
				d := float64(got) - want
				if se == 0 {
					if math.Abs(d) > 1e-12 {
						t.Errorf("step %+v: %s = %g exactly, closed form %g", s, what, got, want)
					}
					return
				}
				z := d / float64(se)
				zs = append(zs, z)
				if math.Abs(z) > 4 {
					t.Errorf("%s of s%d/%s at t=%d: %g ± %g, closed form %g (z = %.2f)", what, chainState(t, s.Key), s.Action, s.T, got, se, want, z)
				}
			}
			for _, s := range res.Steps {
				k := chainState(t, s.Key)
				q := chainQ(v, k, s.Action, gamma)
				check("Q", s, s.Q, s.QSE, q)
				check("V", s, s.V, s.VSE, v[k])
				check("A", s, s.A, s.ASE, q-v[k])
				if s.NQ != 200 || s.NV != 200 {
					t.Errorf("step %+v: %d and %d continuations, want 200", s, s.NQ, s.NV)
				}
				// The forced action's log-probability is the imposed policy's.
				p := chainP[k]
				if s.Action == "stay" {
					p = 1 - p
				}
				if math.Abs(float64(s.LogPAction)-math.Log(p)) > 1e-5 {
					t.Errorf("step %+v: log π(a) = %g, want %g", s, s.LogPAction, math.Log(p))
				}
			}
			within2, sq := 0, 0.0
			for _, z := range zs {
				if math.Abs(z) <= 2 {
					within2++
				}
				sq += z * z
			}
			frac, meanSq := float64(within2)/float64(len(zs)), sq/float64(len(zs))
			t.Logf("γ=%g: %d comparisons, %.2f within 2 SE, mean z² %.2f; V = %.4f", gamma, len(zs), frac, meanSq, v)
			if len(zs) < 60 || frac < 0.85 || meanSq > 1.6 || meanSq < 0.5 {
				t.Errorf("z-scores inconsistent with the standard errors: %d comparisons, %.2f within 2 SE, mean z² %.2f", len(zs), frac, meanSq)
			}
		})
	}
}

// GRAFT's td advantage without normalisation, on the fully merged graph of many rollouts of one
// task, is r + γ·V̂(s') − V̂(s) with V̂ the empirical Bellman expectation: it matches the closed
// form A = Q − V of the same γ, and the audit's Monte Carlo truth within its standard error.
func TestChainGRAFTTDMatchesTruth(t *testing.T) {
	const gamma = 0.9
	variants := []Variant{
		{Label: "graft-td-raw", Name: "graft", Options: map[string]any{"mode": "td", "normalize": false, "gamma": gamma}},
		{Label: "grpo-outcome", Name: "grpo", Options: map[string]any{"score": "outcome"}},
	}
	res, err := Run(chainSetup(t, 512), Options{Steps: 24, MC: 400, Gamma: gamma, Seed: 3, Slots: 128, Variants: variants})
	if err != nil {
		t.Fatal(err)
	}
	v := chainValues(gamma)
	seen := map[string]bool{}
	worst := 0.0
	for _, s := range res.Steps {
		k := chainState(t, s.Key)
		want := chainQ(v, k, s.Action, gamma) - v[k]
		got := s.Est[0]
		worst = math.Max(worst, math.Abs(got-want))
		if math.Abs(got-want) > 0.02 {
			t.Errorf("s%d/%s: GRAFT td %g, closed form %g", k, s.Action, got, want)
		}
		if se := float64(s.ASE); math.Abs(got-float64(s.A)) > 4*se+0.02 {
			t.Errorf("s%d/%s: GRAFT td %g, Monte Carlo %g ± %g", k, s.Action, got, float64(s.A), se)
		}
		seen[s.Key+"/"+s.Action] = true
		// Every trajectory succeeds: GRPO on outcomes gives every step 0 (one score in the group).
		if s.Est[1] != 0 {
			t.Errorf("grpo (outcome) %g on an all-success group", s.Est[1])
		}
	}
	if len(seen) < 5 {
		t.Errorf("only %d distinct (state, action) pairs audited: %v", len(seen), seen)
	}
	m := res.Metrics[0]
	t.Logf("graft-td-raw: largest |A_graft − A_closed| %.4f; against the MC truth r %.3f ρ %.3f sign %.3f c %.3f NMSE %.3f; ceiling %.3f",
		worst, m.Pearson, m.Spearman, m.Sign, m.Scale, m.NMSE, res.Truth.Ceiling)
	if m.Pearson < 0.9 || math.Abs(float64(m.Scale)-1) > 0.1 || m.Sign < 0.95 {
		t.Errorf("graft-td-raw against the truth: %+v", m)
	}
}
