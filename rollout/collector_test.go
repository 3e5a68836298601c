package rollout

import (
	"bytes"
	"compress/gzip"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/tokens"
)

// countEnv is a scripted env: the state is a counter; "inc" adds one (success at 3), anything
// else is invalid. Its observation is "n<k>". It can be told to fail or panic on a given step.
type countEnv struct {
	n, turn, max int
	failAt       int // step number that returns an error (0: never)
	panicAt      int
}

func (e *countEnv) Reset(int64) (string, envs.Observation, error) {
	e.n, e.turn = 0, 0
	return "count", envs.Observation{Text: "n0"}, nil
}

func (e *countEnv) Step(a string) (envs.Observation, error) {
	e.turn++
	if e.turn == e.failAt {
		return envs.Observation{}, errors.New("boom")
	}
	if e.turn == e.panicAt {
		panic("kaboom")
	}
	var o envs.Observation
	if a == "inc" {
		e.n++
	} else {
		o.Reward, o.Info.Invalid = -0.1, true
	}
	o.Text = []string{"n0", "n1", "n2", "n3"}[e.n]
	if e.n == 3 {
		o.Done, o.Outcome, o.Info.Success = true, 1, true
	} else if e.turn >= e.max {
		o.Truncated = true
	}
	return o, nil
}

func (e *countEnv) StateKey() string { return []string{"s0", "s1", "s2", "s3"}[e.n] }
func (e *countEnv) Vocabulary() []string {
	return []string{"count", "n0", "n1", "n2", "n3", "inc", "noop"}
}
func (e *countEnv) MaxTurns() int { return e.max }

// scriptDecoder puts all probability on one token: "inc", then the end-of-action token after an
// "inc" (or always "noop" for rows listed in noopRows), so actions and log-probs are known exactly.
type scriptDecoder struct {
	vocab      int
	inc, noop  int32
	noopRows   map[int]bool
	calls      int
	lastActive []bool
}

func (d *scriptDecoder) Step(toks, pos []int32, active []bool) ([]float32, error) {
	d.calls++
	d.lastActive = append(d.lastActive[:0], active...)
	out := make([]float32, len(toks)*d.vocab)
	for b := range toks {
		tok := d.inc
		if toks[b] == d.inc {
			tok = tokens.EOAID
		}
		if d.noopRows[b] {
			tok = d.noop
		}
		for v := range d.vocab {
			out[b*d.vocab+v] = -50
		}
		out[b*d.vocab+int(tok)] = 0 // log p ≈ −(V−1)·e^−50 ≈ 0
	}
	return out, nil
}

func setup(t *testing.T, cfg Config, slots int, env func() *countEnv) (*Collector, *tokens.Vocab, *scriptDecoder) {
	t.Helper()
	vocab, err := tokens.NewVocab((&countEnv{}).Vocabulary())
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCollector(cfg, Words{vocab}, func() (envs.Env, error) { return env(), nil }, slots)
	if err != nil {
		t.Fatal(err)
	}
	ids := vocab.Encode(nil, "inc noop")
	return c, vocab, &scriptDecoder{vocab: vocab.Size(), inc: ids[0], noop: ids[1], noopRows: map[int]bool{}}
}

// The episode layout: one row per trajectory, <bos> instruction <sep>, then per turn the
// observation, <act> and the action tokens; only sampled action tokens carry a step index.
func TestEpisodeLayout(t *testing.T) {
	cfg := Config{Layout: LayoutEpisode, MaxLen: 64, ActionMaxTokens: 2}
	c, vocab, dec := setup(t, cfg, 2, func() *countEnv { return &countEnv{max: 5} })
	b, st, err := c.Collect(dec, Request{Tasks: []int64{7}, Group: 2}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Trajs) != 2 || st.EnvSteps != 6 || st.Episodes != 2 {
		t.Fatalf("trajs %d, stats %+v", len(b.Trajs), st)
	}
	tr := b.Trajs[0]
	if !tr.Success || tr.Outcome != 1 || len(tr.Steps) != 3 || len(tr.Rows) != 1 {
		t.Fatalf("trajectory %+v", tr)
	}
	row := tr.Rows[0]
	want := "<bos> count <sep> n0 <act> inc <eoa> n1 <act> inc <eoa> n2 <act> inc <eoa>"
	if got := vocab.Decode(row.Tokens); got != want {
		t.Fatalf("tokens\n got %q\nwant %q", got, want)
	}
	wantStep := []int16{-1, -1, -1, -1, -1, 0, 0, -1, -1, 1, 1, -1, -1, 2, 2}
	if !reflect.DeepEqual(row.StepOf, wantStep) {
		t.Fatalf("step_of %v, want %v", row.StepOf, wantStep)
	}
	for i, k := range row.StepOf {
		if k >= 0 && math.Abs(float64(row.LogProb[i])) > 1e-6 {
			t.Errorf("token %d: log-prob %g, want ≈ 0 (the decoder is certain)", i, row.LogProb[i])
		}
		if k < 0 && row.LogProb[i] != 0 {
			t.Errorf("context token %d has a log-prob", i)
		}
	}
	s := tr.Steps[1]
	if s.Key != "s1" || s.NextKey != "s2" || s.Action != "inc" || s.Reward != 0 {
		t.Errorf("step 1 = %+v", s)
	}
}

// Capped actions get a forced end token (context, not trained); one-token actions get none.
func TestActionCap(t *testing.T) {
	for _, tc := range []struct {
		cap  int
		want string
	}{
		{1, "<bos> count <sep> n0 <act> noop n0 <act> noop"},
		{2, "<bos> count <sep> n0 <act> noop noop <eoa> n0 <act> noop noop <eoa>"},
	} {
		cfg := Config{Layout: LayoutEpisode, MaxLen: 64, ActionMaxTokens: tc.cap}
		c, vocab, dec := setup(t, cfg, 1, func() *countEnv { return &countEnv{max: 2} })
		dec.noopRows[0] = true
		b, _, err := c.Collect(dec, Request{Tasks: []int64{1}, Group: 1}, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		tr := b.Trajs[0]
		if got := vocab.Decode(tr.Rows[0].Tokens); got != tc.want {
			t.Errorf("cap %d: tokens %q, want %q", tc.cap, got, tc.want)
		}
		if !tr.Truncated || tr.Success || tr.Outcome != 0 || !tr.Steps[0].Invalid || tr.Return() != -0.2 {
			t.Errorf("cap %d: trajectory %+v", tc.cap, tr)
		}
		for i, id := range tr.Rows[0].Tokens {
			if id == tokens.EOAID && tr.Rows[0].StepOf[i] >= 0 {
				t.Errorf("cap %d: the forced end token is trained on", tc.cap)
			}
		}
	}
}

// The window layout: a row per step holding the instruction, the last K turns and the observation.
func TestWindowLayout(t *testing.T) {
	cfg := Config{Layout: LayoutWindow, WindowTurns: 1, MaxLen: 64, ActionMaxTokens: 1}
	c, vocab, dec := setup(t, cfg, 1, func() *countEnv { return &countEnv{max: 5} })
	b, _, err := c.Collect(dec, Request{Tasks: []int64{1}, Group: 1}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	rows := b.Trajs[0].Rows
	want := []string{
		"<bos> count <sep> n0 <act> inc",
		"<bos> count <sep> n0 <act> inc n1 <act> inc",
		"<bos> count <sep> n1 <act> inc n2 <act> inc",
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	for i, r := range rows {
		if got := vocab.Decode(r.Tokens); got != want[i] {
			t.Errorf("row %d: %q, want %q", i, got, want[i])
		}
		trained := 0
		for _, k := range r.StepOf {
			if k >= 0 {
				trained++
				if int(k) != i {
					t.Errorf("row %d trains step %d", i, k)
				}
			}
		}
		if trained != 1 {
			t.Errorf("row %d trains %d tokens, want only its own action", i, trained)
		}
	}
}

// An episode that would outgrow the context is truncated as a failure.
func TestContextTruncation(t *testing.T) {
	cfg := Config{Layout: LayoutEpisode, MaxLen: 9, ActionMaxTokens: 1}
	c, _, dec := setup(t, cfg, 1, func() *countEnv { return &countEnv{max: 10} })
	b, _, err := c.Collect(dec, Request{Tasks: []int64{1}, Group: 1}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	tr := b.Trajs[0]
	// <bos> count <sep> n0 <act> inc (6) + n1 <act> inc (9) — no room for a third turn.
	if !tr.Truncated || tr.Success || len(tr.Steps) != 2 || len(tr.Rows[0].Tokens) > 9 {
		t.Fatalf("trajectory %+v", tr)
	}
}

// A fault in one episode (error or panic) ends only that episode, recorded in Err.
func TestFaultContainment(t *testing.T) {
	cfg := Config{Layout: LayoutEpisode, MaxLen: 64, ActionMaxTokens: 1}
	n := 0
	c, _, dec := setup(t, cfg, 3, func() *countEnv {
		n++
		switch n {
		case 1:
			return &countEnv{max: 5, failAt: 2}
		case 2:
			return &countEnv{max: 5, panicAt: 1}
		}
		return &countEnv{max: 5}
	})
	b, _, err := c.Collect(dec, Request{Tasks: []int64{1}, Group: 3}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.Trajs[0].Err, "boom") || !strings.Contains(b.Trajs[1].Err, "panicked") || b.Trajs[2].Err != "" || !b.Trajs[2].Success {
		t.Fatalf("errors %q %q %q, third success %v", b.Trajs[0].Err, b.Trajs[1].Err, b.Trajs[2].Err, b.Trajs[2].Success)
	}
	if len(b.Trajs[0].Steps) != 1 {
		t.Errorf("the failing episode kept %d steps, want the 1 before the fault", len(b.Trajs[0].Steps))
	}
}

// More episodes than slots run in waves; finished rows are marked inactive for the decoder.
func TestWavesAndActiveRows(t *testing.T) {
	cfg := Config{Layout: LayoutEpisode, MaxLen: 64, ActionMaxTokens: 1}
	c, _, dec := setup(t, cfg, 2, func() *countEnv { return &countEnv{max: 4} })
	b, st, err := c.Collect(dec, Request{Tasks: []int64{1, 2, 3}, Group: 1}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Trajs) != 3 || st.Episodes != 3 {
		t.Fatalf("%d trajectories", len(b.Trajs))
	}
	for i, tr := range b.Trajs {
		if tr.Task != i || !tr.Success {
			t.Errorf("trajectory %d: task %d success %v", i, tr.Task, tr.Success)
		}
	}
	// The last wave holds one episode in two slots: slot 1 must be inactive.
	if dec.lastActive[1] {
		t.Error("an empty slot was passed to the decoder as active")
	}
}

// Sampling follows the softmax and reports its log-probability; greedy takes the argmax.
func TestSampleToken(t *testing.T) {
	logits := []float32{0, float32(math.Log(3)), -1e9}
	rng := rand.New(rand.NewPCG(3, 3))
	counts := [3]int{}
	for range 20000 {
		tok, lp := SampleToken(logits, false, rng)
		counts[tok]++
		want := math.Log([]float64{0.25, 0.75, 0}[tok])
		if math.Abs(float64(lp)-want) > 1e-6 {
			t.Fatalf("token %d log-prob %g, want %g", tok, lp, want)
		}
	}
	if counts[2] != 0 || math.Abs(float64(counts[1])/20000-0.75) > 0.015 {
		t.Errorf("counts %v, want ≈ 25/75/0 %%", counts)
	}
	if tok, lp := SampleToken(logits, true, rng); tok != 1 || math.Abs(float64(lp)-math.Log(0.75)) > 1e-6 {
		t.Errorf("greedy = %d (%g)", tok, lp)
	}
}

// Batch files round-trip, and corrupt ones are refused whole.
func TestReplayRoundTripAndCorruption(t *testing.T) {
	cfg := Config{Layout: LayoutEpisode, MaxLen: 64, ActionMaxTokens: 1}
	c, vocab, dec := setup(t, cfg, 2, func() *countEnv { return &countEnv{max: 4} })
	b, _, err := c.Collect(dec, Request{Tasks: []int64{1}, Group: 2}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "b.json.gz")
	if err := WriteReplay(path, &Replay{Iter: 3, Env: "count", Vocab: vocab.Words(), Batch: b}); err != nil {
		t.Fatal(err)
	}
	r, err := ReadReplay(path)
	if err != nil {
		t.Fatal(err)
	}
	if r.Iter != 3 || !reflect.DeepEqual(r.Batch, b) {
		t.Fatalf("round trip changed the batch")
	}
	data, _ := os.ReadFile(path)
	flipped := append([]byte(nil), data...)
	flipped[len(flipped)/2] ^= 0x40
	var bad bytes.Buffer
	zw := gzip.NewWriter(&bad)
	zw.Write([]byte(`{"format":"graftrl-batch/1","batch":{"tasks":1,"trajectories":[{"task":5}]}}`))
	zw.Close()
	for name, content := range map[string][]byte{
		"truncated":    data[:len(data)/2],
		"flipped byte": flipped,
		"not gzip":     []byte("hello"),
		"bad task":     bad.Bytes(),
	} {
		p := filepath.Join(t.TempDir(), "x.json.gz")
		os.WriteFile(p, content, 0o644)
		if _, err := ReadReplay(p); err == nil {
			t.Errorf("%s: accepted", name)
		} else if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %q does not name the file", name, err)
		}
	}
}
