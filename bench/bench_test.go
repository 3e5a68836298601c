package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/graftrl/graftrl/envs/all" // the maze for the iteration benchmark
	"github.com/graftrl/graftrl/policy/host"

	"github.com/graftrl/graftrl/policy"
	"github.com/graftrl/graftrl/policy/spec"
	"github.com/graftrl/graftrl/rollout"
)

// FLOP counts against a hand computation for d 4, 1 layer, d_ff 8, vocab 5, 2 rows × 3 tokens:
// forward 2·6·(4·16 + 2·4·8 + 4·5) + 4·2·9·4 = 2·6·148 + 288 = 2064, train step 3× that.
func TestFLOPs(t *testing.T) {
	c := policy.Config{DModel: 4, Layers: 1, Heads: 2, DFF: 8, Vocab: 5, MaxLen: 8}
	if got := TrainStepFLOPs(c, 2, 3); got != 3*2064 {
		t.Errorf("TrainStepFLOPs = %g, want %d", got, 3*2064)
	}
	// One token at position 2: 2·(64 + 64 + 20) + 4·3·4 = 344.
	if got := DecodeTokenFLOPs(c, 2); got != 344 {
		t.Errorf("DecodeTokenFLOPs = %g, want 344", got)
	}
}

// A whole (tiny) run: every part of the report is filled in and the text and JSON forms render.
// Speed is not asserted.
func TestRunTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("runs training iterations")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "tiny.yaml")
	if err := os.WriteFile(cfg, []byte(`name: tiny
env: {name: maze}
tasks: {train: 2, eval: 2, per_iter: 2, group_size: 2}
rollout: {action_max_tokens: 1}
policy: {d_model: 16, layers: 1, heads: 2, d_ff: 32}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Model = policy.Config{DModel: 16, Layers: 1, Heads: 2, DFF: 32, Vocab: 16, MaxLen: 16, InitStd: 0.02}
	o.Rows, o.Len, o.Reps, o.Warmup, o.SampleBatches = 2, 8, 2, 2, []int{1, 3}
	o.IterationConfig, o.Iterations, o.GraphSampling = cfg, 2, true
	r, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Train) != 2 || r.Train[1].Rows != 8 || len(r.Sample) != 2 || len(r.SampleGraph) != 2 || r.Iteration == nil {
		t.Fatalf("incomplete report: %+v", r)
	}
	for _, tr := range r.Train {
		if !(tr.Ms > 0 && tr.GFLOPs > 0 && tr.PeakRSSMB > 0) {
			t.Errorf("train result %+v", tr)
		}
	}
	for _, s := range append(r.Sample, r.SampleGraph...) {
		if !(s.StepMs > 0 && s.TokensPerS > 0) {
			t.Errorf("sample result %+v", s)
		}
	}
	if it := r.Iteration; !(it.Total > 0 && it.Update > 0 && it.Sample > 0) {
		t.Errorf("iteration result %+v", it)
	}
	var text bytes.Buffer
	r.WriteText(&text)
	for _, want := range []string{"train step", "T8×B2", "batch 3", "RL iteration", "of peak", "backend's graph decoder"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	if _, err := json.Marshal(r); err != nil {
		t.Fatal(err)
	}
}

// TestValidate refuses every bad option before any work, naming the flag and what is allowed.
func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		edit func(o *Options)
		want string
	}{
		{"len past max_len", func(o *Options) { o.Len = o.Model.MaxLen + 1 }, "max_len"},
		{"no rows", func(o *Options) { o.Rows = 0 }, "--batch"},
		{"no reps", func(o *Options) { o.Reps = 0 }, "--reps 0: must be ≥ 1"},
		{"no warm-up", func(o *Options) { o.Warmup = 0 }, "--warmup 0: must be ≥ 1"},
		{"decoder batch", func(o *Options) { o.SampleBatches = []int{16, 0} }, "--sample-batches"},
		{"action tokens", func(o *Options) { o.ActionTokens = 61 }, "--action-tokens 61: must be 0..60"},
		{"devices", func(o *Options) { o.Devices = 65 }, "--devices 65: must be 0..64"},
		{"devices on go", func(o *Options) { o.Backend, o.Devices = "go", 2 }, "--devices 2 needs an xla backend, but the backend is go"},
		{"peak", func(o *Options) { o.PeakGFLOPs = -1 }, "--peak-gflops"},
		{"iterations", func(o *Options) { o.IterationConfig, o.Iterations = "any.yaml", 1 }, "--iterations 1"},
		{"config", func(o *Options) { o.IterationConfig = filepath.Join(t.TempDir(), "none.yaml") }, "none.yaml"},
		{"model", func(o *Options) { o.Model.Heads = 3 }, "heads"},
	}
	for _, tc := range cases {
		o := DefaultOptions()
		o.IterationConfig = ""
		tc.edit(&o)
		err := o.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.want)
		}
		if _, err := Run(context.Background(), o); err == nil {
			t.Errorf("%s: Run accepted what Validate refuses", tc.name)
		}
	}
	o := DefaultOptions()
	o.IterationConfig = ""
	if err := o.Validate(); err != nil {
		t.Fatalf("defaults refused: %v", err)
	}
}

// BenchmarkTrainStep is the train step of `graftrl bench` (quickstart loss, action mask, every
// third position an action) at T64×B16 and 4× the rows; it reports model GFLOP/s.
func BenchmarkTrainStep(b *testing.B) {
	o := DefaultOptions()
	backend, err := policy.NewBackend(policy.BackendOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for _, rows := range []int{o.Rows, 4 * o.Rows} {
		b.Run(fmt.Sprintf("T%dxB%d", o.Len, rows), func(b *testing.B) {
			p, err := policy.New(backend, policy.Options{Model: o.Model, Loss: benchLoss(), Optim: spec.DefaultOptimConfig(),
				Seed: 1, ActionTokens: actionTokens(o.ActionTokens)})
			if err != nil {
				b.Fatal(err)
			}
			tb := policy.SyntheticBatch(o.Model, rows, o.Len, 1)
			if _, err := p.Update(tb, 1e-3); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if _, err := p.Update(tb, 1e-3); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(TrainStepFLOPs(o.Model, rows, o.Len)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkSampleStep is one KV-cached decode step plus drawing the next token, for every row,
// rows at the same position sweeping the context, as `graftrl bench` times sampling.
func BenchmarkSampleStep(b *testing.B) {
	o := DefaultOptions()
	c := o.Model
	for _, batch := range o.SampleBatches {
		b.Run(fmt.Sprintf("B%d", batch), func(b *testing.B) {
			h, err := host.New(c, initialWeights(c))
			if err != nil {
				b.Fatal(err)
			}
			d := h.NewDecoder(batch)
			rng := rand.New(rand.NewPCG(2, 2))
			tok, pos := make([]int32, batch), make([]int32, batch)
			b.ResetTimer()
			for i := range b.N {
				for r := range pos {
					pos[r] = int32(i % c.MaxLen)
				}
				logits, err := d.Step(tok, pos, nil)
				if err != nil {
					b.Fatal(err)
				}
				for r := range tok {
					tok[r], _ = rollout.SampleToken(logits[r*c.Vocab:(r+1)*c.Vocab], false, rng)
				}
			}
			b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}
