package rollout

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/tokens"
)

// hashDecoder gives every row pseudo-random logits that are a function of the whole token prefix
// the row was fed since its last position 0, as a real transformer's are: replaying a prefix
// reproduces the logits, and so the log-probabilities, that were recorded when it was sampled.
// The tokens listed in favour get +favourBias so that episodes make progress.
type hashDecoder struct {
	vocab  int
	h      []uint64
	favour []int32
	calls  int
}

func (d *hashDecoder) Step(tokens, pos []int32, active []bool) ([]float32, error) {
	d.calls++
	if d.h == nil {
		d.h = make([]uint64, len(tokens))
	}
	out := make([]float32, len(tokens)*d.vocab)
	for b := range tokens {
		if active != nil && !active[b] {
			continue
		}
		if pos[b] == 0 {
			d.h[b] = 0x9e3779b97f4a7c15
		}
		d.h[b] = (d.h[b]^uint64(tokens[b]+1))*0xbf58476d1ce4e5b9 + uint64(pos[b])
		r := rand.New(rand.NewPCG(d.h[b], 7))
		lg := out[b*d.vocab : (b+1)*d.vocab]
		for v := range lg {
			lg[v] = float32(r.NormFloat64())
		}
		for _, f := range d.favour {
			lg[f] += 2.5
		}
	}
	return out, nil
}

func newHashSetup(t *testing.T, cfg Config, slots int) (*Collector, *tokens.Vocab, *hashDecoder) {
	t.Helper()
	vocab, err := tokens.NewVocab((&countEnv{}).Vocabulary())
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCollector(cfg, Words{vocab}, func() (envs.Env, error) { return &countEnv{max: 6}, nil }, slots)
	if err != nil {
		t.Fatal(err)
	}
	fav := append(vocab.Encode(nil, "inc"), tokens.EOAID)
	return c, vocab, &hashDecoder{vocab: vocab.Size(), favour: fav}
}

// Replaying a recorded trajectory's actions up to step t, then forcing a_t, rebuilds its context
// token for token in both layouts: the same tokens, the same steps, and forced tokens carrying
// the very log-probabilities recorded when they were sampled.
func TestContinueReplaysRecordedContext(t *testing.T) {
	for _, layout := range []string{LayoutEpisode, LayoutWindow} {
		t.Run(layout, func(t *testing.T) {
			cfg := Config{Layout: layout, WindowTurns: 1, MaxLen: 96, ActionMaxTokens: 2}
			c, _, dec := newHashSetup(t, cfg, 3)
			b, _, err := c.Collect(dec, Request{Tasks: []int64{5, 9}, Group: 4}, rand.New(rand.NewPCG(3, 4)))
			if err != nil {
				t.Fatal(err)
			}
			var starts []Start
			type ref struct{ traj, t int }
			var refs []ref
			for i := range b.Trajs {
				tr := &b.Trajs[i]
				acts := ActionTokens(tr)
				if len(acts) != len(tr.Steps) {
					t.Fatalf("traj %d: %d actions for %d steps", i, len(acts), len(tr.Steps))
				}
				for k := range tr.Steps {
					starts = append(starts, Start{TaskSeed: tr.TaskSeed, History: acts[:k], First: acts[k]})
					refs = append(refs, ref{i, k})
				}
			}
			out, st, err := c.Continue(dec, starts, rand.New(rand.NewPCG(8, 8)))
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Trajs) != len(starts) || st.Episodes != len(starts) {
				t.Fatalf("%d trajectories, %d episodes for %d starts", len(out.Trajs), st.Episodes, len(starts))
			}
			for j, r := range refs {
				rec, got := &b.Trajs[r.traj], &out.Trajs[j]
				if got.Err != "" || got.Task != j || got.TaskSeed != rec.TaskSeed {
					t.Fatalf("start %d: %+v", j, got)
				}
				if !reflect.DeepEqual(got.Steps[:r.t+1], rec.Steps[:r.t+1]) {
					t.Fatalf("start %d (traj %d, t %d): steps %+v, recorded %+v", j, r.traj, r.t, got.Steps[:r.t+1], rec.Steps[:r.t+1])
				}
				// Compare the tokens up to the end of action t, in the row(s) holding it.
				recRows, gotRows := rec.Rows, got.Rows
				if layout == LayoutEpisode {
					recRows, gotRows = recRows[:1], gotRows[:1]
				} else {
					recRows, gotRows = recRows[:r.t+1], gotRows[:r.t+1]
				}
				for k := range recRows {
					end := lastIndexOfStep(recRows[k].StepOf, r.t)
					if layout == LayoutWindow && k < r.t {
						end = len(recRows[k].Tokens) - 1
					}
					if !reflect.DeepEqual(gotRows[k].Tokens[:end+1], recRows[k].Tokens[:end+1]) ||
						!reflect.DeepEqual(gotRows[k].StepOf[:end+1], recRows[k].StepOf[:end+1]) {
						t.Fatalf("start %d row %d: tokens differ from the recorded ones", j, k)
					}
					for x := 0; x <= end; x++ {
						if d := math.Abs(float64(gotRows[k].LogProb[x] - recRows[k].LogProb[x])); d > 1e-5 {
							t.Fatalf("start %d row %d token %d: log-prob %g, recorded %g", j, k, x, gotRows[k].LogProb[x], recRows[k].LogProb[x])
						}
					}
				}
				// The whole history forced: the continuation is the recorded episode itself.
				if r.t == len(rec.Steps)-1 {
					if got.Success != rec.Success || got.Outcome != rec.Outcome || got.Truncated != rec.Truncated ||
						!reflect.DeepEqual(got.Rows[len(got.Rows)-1].Tokens, rec.Rows[len(rec.Rows)-1].Tokens) {
						t.Fatalf("start %d: full replay differs from trajectory %d", j, r.traj)
					}
				}
			}
		})
	}
}

func lastIndexOfStep(stepOf []int16, t int) int {
	last := -1
	for i, k := range stepOf {
		if int(k) == t {
			last = i
		}
	}
	return last
}

// Branch runs once per continuation, after the history and before the first free action, with
// the env in the state the history led to; the policy then samples the rest.
func TestContinueBranchAndSampling(t *testing.T) {
	cfg := Config{Layout: LayoutEpisode, MaxLen: 96, ActionMaxTokens: 2}
	c, vocab, dec := newHashSetup(t, cfg, 2)
	inc := vocab.Encode(nil, "inc")[0]
	incA := []int32{inc, tokens.EOAID}
	noop := []int32{vocab.Encode(nil, "noop")[0], tokens.EOAID}
	var keys []string
	branch := func(e envs.Env) { keys = append(keys, e.StateKey()) }
	starts := []Start{
		{TaskSeed: 1, History: [][]int32{incA, noop}, Branch: branch},              // V at s1
		{TaskSeed: 1, History: [][]int32{incA, incA}, Branch: branch, First: noop}, // Q(s2, noop)
		{TaskSeed: 1, Branch: branch},                                              // a fresh episode
	}
	out, st, err := c.Continue(dec, starts, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"s1", "s2", "s0"}; !reflect.DeepEqual(keys, want) {
		t.Fatalf("Branch saw %v, want %v (slot order, refilled)", keys, want)
	}
	if out.Trajs[0].Steps[1].Action != "noop" || !out.Trajs[0].Steps[1].Invalid || out.Trajs[1].Steps[2].Action != "noop" {
		t.Fatalf("replayed steps %+v / %+v", out.Trajs[0].Steps, out.Trajs[1].Steps)
	}
	for i, tr := range out.Trajs {
		if tr.Err != "" || !(tr.Success || tr.Truncated) {
			t.Fatalf("trajectory %d did not finish: %+v", i, tr)
		}
	}
	if st.SampledTokens == 0 || st.Episodes != 3 {
		t.Fatalf("stats %+v", st)
	}
	// Same starts, same seed: the same batch.
	keys = nil
	again, _, err := c.Continue(dec, starts, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, out) {
		t.Fatal("Continue is not reproducible")
	}
}

// A history that ends the episode leaves the branch point unreached: an error in the trajectory,
// not a continuation from a terminal state.
func TestContinueHistoryEndsEpisode(t *testing.T) {
	cfg := Config{Layout: LayoutEpisode, MaxLen: 96, ActionMaxTokens: 1}
	c, vocab, dec := newHashSetup(t, cfg, 1)
	inc := []int32{vocab.Encode(nil, "inc")[0]}
	out, _, err := c.Continue(dec, []Start{{History: [][]int32{inc, inc, inc}}, {History: [][]int32{inc}}}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.Trajs[0].Err, "history ended the episode after 3 of 3") {
		t.Fatalf("error %q", out.Trajs[0].Err)
	}
	if out.Trajs[1].Err != "" || len(out.Trajs[1].Steps) < 2 {
		t.Fatalf("second start %+v", out.Trajs[1])
	}
}

// Forced actions must be whole actions under the collector's rules.
func TestContinueRefusesMalformedActions(t *testing.T) {
	cfg := Config{Layout: LayoutEpisode, MaxLen: 96, ActionMaxTokens: 2}
	c, vocab, dec := newHashSetup(t, cfg, 1)
	inc := vocab.Encode(nil, "inc")[0]
	for name, a := range map[string][]int32{
		"empty":          {},
		"eoa inside":     {tokens.EOAID, inc},
		"open short":     {inc},
		"too long":       {inc, inc, inc},
		"cap plus eoa":   {inc, inc, tokens.EOAID},
		"outside vocab":  {int32(vocab.Size()), tokens.EOAID},
		"negative token": {-1, tokens.EOAID},
	} {
		if _, _, err := c.Continue(dec, []Start{{First: a}}, rand.New(rand.NewPCG(1, 1))); err == nil {
			t.Errorf("%s: %v accepted", name, a)
		}
	}
	// Whole actions: ended by <eoa>, or exactly the cap without it.
	for _, a := range [][]int32{{inc, tokens.EOAID}, {inc, inc}, {tokens.EOAID}} {
		if _, _, err := c.Continue(dec, []Start{{First: a}}, rand.New(rand.NewPCG(1, 1))); err != nil {
			t.Errorf("%v refused: %v", a, err)
		}
	}
}

// The log-probability of a forced token is the log-softmax of the logits, as SampleToken reports.
func TestTokenLogProb(t *testing.T) {
	lg := []float32{1, 2, 3}
	z := math.Exp(1) + math.Exp(2) + math.Exp(3)
	for i := range lg {
		want := float64(lg[i]) - math.Log(z)
		if got := tokenLogProb(lg, int32(i)); math.Abs(float64(got)-want) > 1e-6 {
			t.Errorf("token %d: %g, want %g", i, got, want)
		}
	}
	_, lp := SampleToken(lg, true, nil)
	if math.Abs(float64(lp-tokenLogProb(lg, 2))) > 1e-6 {
		t.Errorf("greedy log-prob %g vs %g", lp, tokenLogProb(lg, 2))
	}
}

// BenchmarkContinue measures the continuation loop itself (a trivial decoder): 256 episodes of
// the count env, each replaying two actions and forcing a third.
func BenchmarkContinue(b *testing.B) {
	vocab, _ := tokens.NewVocab((&countEnv{}).Vocabulary())
	c, err := NewCollector(Config{Layout: LayoutEpisode, MaxLen: 96, ActionMaxTokens: 2}, Words{vocab},
		func() (envs.Env, error) { return &countEnv{max: 6}, nil }, 64)
	if err != nil {
		b.Fatal(err)
	}
	dec := &hashDecoder{vocab: vocab.Size(), favour: append(vocab.Encode(nil, "inc"), tokens.EOAID)}
	inc := []int32{vocab.Encode(nil, "inc")[0], tokens.EOAID}
	noop := []int32{vocab.Encode(nil, "noop")[0], tokens.EOAID}
	starts := make([]Start, 256)
	for i := range starts {
		starts[i] = Start{TaskSeed: int64(i), History: [][]int32{inc, noop}, First: inc}
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for b.Loop() {
		if _, _, err := c.Continue(dec, starts, rng); err != nil {
			b.Fatal(err)
		}
	}
}
