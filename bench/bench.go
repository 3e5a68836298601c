// Package bench measures graftrl's speed on the current machine: the policy's train step
// (forward + backward + Adam through GoMLX), KV-cached sampling on the host inference path, and a
// whole RL iteration split into its phases, with peak memory and achieved GFLOP/s against the
// machine's peak. `graftrl bench` prints the report; scripts/bench/torch_ref.py measures a
// PyTorch implementation of the same policy the same way, and scripts/bench/compare.sh runs the
// two in alternation and prints the ratios.
package bench

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

	"github.com/gomlx/gomlx/backends"

	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/policy"
	"github.com/graftrl/graftrl/policy/host"
	"github.com/graftrl/graftrl/policy/spec"
	"github.com/graftrl/graftrl/rollout"
	"github.com/graftrl/graftrl/rundir"
	"github.com/graftrl/graftrl/trainer"
)

// Options configure a benchmark run.
type Options struct {
	// Model is the policy architecture (Vocab included).
	Model policy.Config
	// Rows × Len is the quickstart train minibatch; the train step is also timed at 4·Rows.
	Rows, Len int
	// SampleBatches are the decoder batch sizes timed for sampling.
	SampleBatches []int
	// Reps is the number of timed repetitions (medians are reported).
	Reps int
	// Warmup is the number of untimed train steps before them (≥ 1: the first compiles). A fresh
	// process pages in memory while its heap grows to its working size, about a dozen quickstart
	// steps; the default skips that start-up cost and times the steady state a run spends its
	// time in.
	Warmup int
	// Backend is the GoMLX backend ("" for the default, see policy.NewBackend).
	Backend string
	// Devices splits the timed train steps over this many devices (policy.devices; xla only).
	Devices int
	// ActionTokens is the number of action token ids (4..4+k−1): their logits are the only ones
	// allowed at action positions, as the quickstart maze constrains its four moves. 0: no mask.
	ActionTokens int
	// IterationConfig is the RL config whose iteration is timed ("" skips it), run for
	// Iterations iterations in a temporary directory.
	IterationConfig string
	Iterations      int
	// PeakGFLOPs overrides the machine peak derived from /proc/cpuinfo.
	PeakGFLOPs float64
	// GraphSampling also times sampling with the backend's graph KV decoder.
	GraphSampling bool
	// Log receives progress lines (nil: none).
	Log io.Writer
}

// DefaultOptions is the quickstart policy (d_model 64, 2 layers, 4 heads, vocab 64, max_len 128)
// at the quickstart minibatch shape T64×B16.
func DefaultOptions() Options {
	m := spec.DefaultConfig()
	m.Vocab = 64
	return Options{Model: m, Rows: 16, Len: 64, SampleBatches: []int{1, 16, 64}, Reps: 21, Warmup: 15, ActionTokens: 4,
		IterationConfig: "configs/quickstart.yaml", Iterations: 6}
}

// Report is the outcome of Run.
type Report struct {
	Impl      string         `json:"impl"`
	Machine   Machine        `json:"machine"`
	Backend   string         `json:"backend"`
	Devices   int            `json:"devices,omitempty"`
	Config    policy.Config  `json:"config"`
	LoadStart float64        `json:"load_start"`
	LoadEnd   float64        `json:"load_end"`
	Train     []TrainResult  `json:"train"`
	Sample    []SampleResult `json:"sample"`
	// SampleGraph times the backend's graph KV decoder (policy.Decoder) at the same batch sizes,
	// when Options.GraphSampling is set: the decoder a run uses with rollout.sampler: graph.
	SampleGraph []SampleResult   `json:"sample_graph,omitempty"`
	Iteration   *IterationResult `json:"iteration,omitempty"`
}

// TrainResult is the train step at one minibatch shape.
type TrainResult struct {
	Rows      int     `json:"rows"`
	Len       int     `json:"len"`
	Ms        float64 `json:"ms"`     // median
	MinMs     float64 `json:"min_ms"` // fastest repetition
	Reps      int     `json:"reps"`   // timed repetitions
	Warmup    int     `json:"warmup"` // untimed steps before them
	GFLOPs    float64 `json:"gflops"` // TrainStepFLOPs / median time
	PeakShare float64 `json:"peak_share"`
	PeakRSSMB float64 `json:"peak_rss_mb"`
}

// SampleResult is KV-cached sampling at one batch size: every row decodes one token and draws the
// next from the softmax, rows at the same position, the position sweeping the whole context.
type SampleResult struct {
	Batch      int     `json:"batch"`
	StepMs     float64 `json:"step_ms"` // median time of one step (all rows)
	TokensPerS float64 `json:"tokens_per_s"`
	GFLOPs     float64 `json:"gflops"`
	PeakShare  float64 `json:"peak_share"`
	PeakRSSMB  float64 `json:"peak_rss_mb"`
}

// IterationResult is the wall-clock split of RL iterations (medians over iterations 2..N; the
// first, which compiles the graphs, is reported apart).
type IterationResult struct {
	Config     string  `json:"config"`
	Iterations int     `json:"iterations"`
	Total      float64 `json:"total_s"`
	Sample     float64 `json:"sample_s"` // collecting rollouts (policy decode + env + bookkeeping)
	Decode     float64 `json:"decode_s"` // policy decode calls inside sampling
	Env        float64 `json:"env_s"`    // environment steps inside sampling
	Estimate   float64 `json:"estimate_s"`
	Update     float64 `json:"update_s"`
	First      float64 `json:"first_s"`
	PeakRSSMB  float64 `json:"peak_rss_mb"`
	Tokens     float64 `json:"sampled_tokens"` // median tokens sampled per iteration
}

// Validate checks the options before any work: the model, the train shape, the repetitions, the
// decoder batches, the action tokens, the machine peak, and that the RL config loads. Each error
// names the flag or key and what is allowed.
func (o Options) Validate() error {
	if err := o.Model.Validate(); err != nil {
		return err
	}
	if o.Rows < 1 || o.Len < 2 || o.Len > o.Model.MaxLen {
		return fmt.Errorf("bench: train shape %d×%d (--batch × --len) must have rows ≥ 1 and 2 ≤ len ≤ max_len %d", o.Rows, o.Len, o.Model.MaxLen)
	}
	if o.Devices < 0 || o.Devices > spec.MaxDevices {
		return fmt.Errorf("bench: --devices %d: must be 0..%d", o.Devices, spec.MaxDevices)
	}
	if b := spec.ResolveBackendName(o.Backend); o.Devices > 1 && b == spec.DefaultBackend {
		return fmt.Errorf("bench: --devices %d needs an xla backend, but the backend is %s, which has one device (allowed with %s: 0 or 1)", o.Devices, b, b)
	}
	if o.Reps < 1 {
		return fmt.Errorf("bench: --reps %d: must be ≥ 1", o.Reps)
	}
	if o.Warmup < 1 {
		return fmt.Errorf("bench: --warmup %d: must be ≥ 1 (the first step compiles)", o.Warmup)
	}
	for _, b := range o.SampleBatches {
		if b < 1 {
			return fmt.Errorf("bench: --sample-batches: %d is not a positive integer", b)
		}
	}
	if o.ActionTokens < 0 || 4+o.ActionTokens > o.Model.Vocab {
		return fmt.Errorf("bench: --action-tokens %d: must be 0..%d for a vocabulary of %d", o.ActionTokens, o.Model.Vocab-4, o.Model.Vocab)
	}
	if !(o.PeakGFLOPs >= 0) || math.IsInf(o.PeakGFLOPs, 0) {
		return fmt.Errorf("bench: --peak-gflops %g: must be a finite number ≥ 0 (0: derive from /proc/cpuinfo)", o.PeakGFLOPs)
	}
	if o.IterationConfig != "" {
		if o.Iterations < 2 {
			return fmt.Errorf("bench: --iterations %d: must be ≥ 2 (the first, compiling, is reported apart)", o.Iterations)
		}
		if _, err := loadIterationConfig(o.IterationConfig); err != nil {
			return err
		}
	}
	return nil
}

// loadIterationConfig loads the RL config whose iterations are timed, without evaluations or
// checkpoints.
func loadIterationConfig(path string) (config.Config, error) {
	return config.Load(path, []string{"eval.at_start=false", "eval.every=0", "checkpoint.every=0"})
}

// Run performs the benchmarks (after Validate).
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	r := &Report{Impl: "graftrl", Machine: probeMachine(o.PeakGFLOPs, true), Config: o.Model, LoadStart: loadAverage(),
		Backend: spec.ResolveBackendName(o.Backend), Devices: o.Devices}
	backend, err := policy.NewBackend(policy.BackendOptions{Name: o.Backend, Devices: o.Devices})
	if err != nil {
		return nil, err
	}
	for _, rows := range []int{o.Rows, 4 * o.Rows} {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		o.logf("train step T%d×B%d …", o.Len, rows)
		tr, err := benchTrain(backend, o, rows)
		if err != nil {
			return nil, err
		}
		tr.GFLOPs = TrainStepFLOPs(o.Model, rows, o.Len) / (tr.Ms / 1e3) / 1e9
		tr.PeakShare = share(tr.GFLOPs, r.Machine.PeakGFLOPs)
		r.Train = append(r.Train, tr)
	}
	for _, b := range o.SampleBatches {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		o.logf("sampling, batch %d …", b)
		h, err := host.New(o.Model, initialWeights(o.Model))
		if err != nil {
			return nil, err
		}
		d := h.NewDecoder(b)
		sr, err := benchSample(o, b, func(tok, pos []int32) ([]float32, error) { return d.Step(tok, pos, nil) })
		if err != nil {
			return nil, err
		}
		sr.PeakShare = share(sr.GFLOPs, r.Machine.PeakGFLOPs)
		r.Sample = append(r.Sample, sr)
		if !o.GraphSampling {
			continue
		}
		o.logf("sampling, batch %d, graph decoder on %s …", b, r.Backend)
		p, err := policy.New(backend, policy.Options{Model: o.Model, Loss: benchLoss(), Optim: spec.DefaultOptimConfig(),
			Init: initialWeights(o.Model)})
		if err != nil {
			return nil, err
		}
		gd := p.NewDecoder(b)
		if sr, err = benchSample(o, b, gd.Step); err != nil {
			return nil, err
		}
		sr.PeakShare = share(sr.GFLOPs, r.Machine.PeakGFLOPs)
		r.SampleGraph = append(r.SampleGraph, sr)
	}
	if o.IterationConfig != "" {
		o.logf("RL iterations of %s …", o.IterationConfig)
		it, err := benchIteration(ctx, o)
		if err != nil {
			return nil, err
		}
		r.Iteration = it
	}
	r.LoadEnd = loadAverage()
	return r, nil
}

func (o Options) logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, format+"\n", args...)
	}
}

func share(gflops, peak float64) float64 {
	if peak <= 0 {
		return 0
	}
	return gflops / peak
}

// benchLoss is the quickstart's update: clipped surrogate (0.2/0.2), token-mean, entropy bonus 0.05.
func benchLoss() policy.LossConfig {
	l := spec.DefaultLossConfig()
	l.EntropyCoef = 0.05
	return l
}

func actionTokens(k int) []int32 {
	if k == 0 {
		return nil
	}
	ids := make([]int32, k)
	for i := range ids {
		ids[i] = int32(4 + i)
	}
	return ids
}

func benchTrain(backend backends.Backend, o Options, rows int) (TrainResult, error) {
	resetPeakRSS()
	p, err := policy.New(backend, policy.Options{Model: o.Model, Loss: benchLoss(), Optim: spec.DefaultOptimConfig(),
		Seed: 1, ActionTokens: actionTokens(o.ActionTokens), Devices: o.Devices})
	if err != nil {
		return TrainResult{}, err
	}
	b := policy.SyntheticBatch(o.Model, rows, o.Len, 1)
	for range o.Warmup { // compile, then let the heap and the buffer pools reach their working size
		if _, err := p.Update(b, 1e-3); err != nil {
			return TrainResult{}, err
		}
	}
	times := make([]float64, 0, o.Reps)
	for range o.Reps {
		t0 := time.Now()
		if _, err := p.Update(b, 1e-3); err != nil {
			return TrainResult{}, err
		}
		times = append(times, time.Since(t0).Seconds()*1e3)
	}
	return TrainResult{Rows: rows, Len: o.Len, Ms: median(times), MinMs: slices.Min(times), Reps: o.Reps, Warmup: o.Warmup,
		PeakRSSMB: float64(peakRSS()) / (1 << 20)}, nil
}

// benchSample times decode, a KV-cached decoder of batch rows, over whole sweeps of the context.
func benchSample(o Options, batch int, decode func(tok, pos []int32) ([]float32, error)) (SampleResult, error) {
	resetPeakRSS()
	c := o.Model
	rng := rand.New(rand.NewPCG(2, 2))
	tok, pos := make([]int32, batch), make([]int32, batch)
	for i := range tok {
		tok[i] = int32(rng.IntN(c.Vocab))
	}
	sweep := func() error {
		for t := range c.MaxLen {
			for i := range pos {
				pos[i] = int32(t)
			}
			logits, err := decode(tok, pos)
			if err != nil {
				return err
			}
			for i := range tok {
				tok[i], _ = rollout.SampleToken(logits[i*c.Vocab:(i+1)*c.Vocab], false, rng)
			}
		}
		return nil
	}
	if err := sweep(); err != nil {
		return SampleResult{}, err
	}
	steps := make([]float64, 0, o.Reps)
	for range max(3, o.Reps/2) {
		t0 := time.Now()
		if err := sweep(); err != nil {
			return SampleResult{}, err
		}
		steps = append(steps, time.Since(t0).Seconds()/float64(c.MaxLen))
	}
	step := median(steps)
	var flops float64
	for t := range c.MaxLen {
		flops += DecodeTokenFLOPs(c, t)
	}
	flops *= float64(batch) / float64(c.MaxLen)
	return SampleResult{Batch: batch, StepMs: step * 1e3, TokensPerS: float64(batch) / step, GFLOPs: flops / step / 1e9,
		PeakRSSMB: float64(peakRSS()) / (1 << 20)}, nil
}

// initialWeights draws the policy's initial weights (N(0, init_std²), zero biases, unit gains) in
// ParamNames order; sampling speed does not depend on their values.
func initialWeights(c policy.Config) [][]float32 {
	rng := rand.New(rand.NewPCG(3, 3))
	shapes := spec.ParamShapes(c)
	names := spec.ParamNames(c)
	out := make([][]float32, len(shapes))
	for i, s := range shapes {
		n := 1
		for _, d := range s {
			n *= d
		}
		out[i] = make([]float32, n)
		name := filepath.Base(names[i])
		switch {
		case len(s) == 1 && (name == "ln1_g" || name == "ln2_g" || name == "ln_g"):
			for j := range out[i] {
				out[i][j] = 1
			}
		case len(s) == 2:
			for j := range out[i] {
				out[i][j] = float32(rng.NormFloat64() * c.InitStd)
			}
		}
	}
	return out
}

func benchIteration(ctx context.Context, o Options) (*IterationResult, error) {
	resetPeakRSS()
	dir, err := os.MkdirTemp("", "graftrl-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	n := o.Iterations
	cfg, err := loadIterationConfig(o.IterationConfig)
	if err != nil {
		return nil, err
	}
	cfg.OutDir, cfg.Name, cfg.Iterations = dir, "bench", n
	if o.Backend != "" {
		cfg.Backend = o.Backend
	}
	t, err := trainer.New(cfg, trainer.Options{Out: io.Discard, Quiet: true})
	if err != nil {
		return nil, err
	}
	defer t.Close()
	if _, err := t.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return nil, err
	}
	f, err := os.Open(filepath.Join(t.Dir(), rundir.TimingFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []map[string]float64
	dec := json.NewDecoder(f)
	for {
		var m map[string]float64
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("bench: read %s: %w", rundir.TimingFile, err)
		}
		rows = append(rows, m)
	}
	if len(rows) < 2 {
		return nil, fmt.Errorf("bench: %d iterations timed, need 2", len(rows))
	}
	col := func(key string) float64 {
		v := make([]float64, 0, len(rows)-1)
		for _, m := range rows[1:] {
			v = append(v, m[key])
		}
		return median(v)
	}
	return &IterationResult{Config: o.IterationConfig, Iterations: len(rows), Total: col("time/iteration"),
		Sample: col("time/sample"), Decode: col("time/decode"), Env: col("time/env"), Estimate: col("time/estimate"),
		Update: col("time/update"), First: rows[0]["time/iteration"], Tokens: col("sampled_tokens"),
		PeakRSSMB: float64(peakRSS()) / (1 << 20)}, nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// WriteText prints the report as a table.
func (r *Report) WriteText(w io.Writer) {
	m := r.Machine
	backend := r.Backend
	if r.Devices > 1 {
		backend += fmt.Sprintf(" (train steps on %d devices)", r.Devices)
	}
	fmt.Fprintf(w, "graftrl bench — %s, %d cores (GOMAXPROCS %d), backend %s\n", m.CPU, m.Cores, m.GOMAXPROCS, backend)
	fmt.Fprintf(w, "policy: d_model %d, %d layers, %d heads, d_ff %d, vocab %d, max_len %d (%d parameters)\n",
		r.Config.DModel, r.Config.Layers, r.Config.Heads, r.Config.Hidden(), r.Config.Vocab, r.Config.MaxLen, r.Config.NumParams())
	fmt.Fprintf(w, "peak: %.0f GFLOP/s = %s; scalar (no SIMD) peak %.0f GFLOP/s\n", m.PeakGFLOPs, m.PeakDerivation, m.ScalarPeakGFLOPs)
	if m.MemoryGBs > 0 {
		fmt.Fprintf(w, "memory bandwidth: %.1f GB/s (measured: 64 MB copied per core, bytes read + written)\n", m.MemoryGBs)
	}
	fmt.Fprintf(w, "load average (1 min): %.2f at start, %.2f at end\n\n", r.LoadStart, r.LoadEnd)
	if len(r.Train) > 0 {
		fmt.Fprintf(w, "train step (forward + backward + Adam), median of %d after %d untimed steps\n", r.Train[0].Reps, r.Train[0].Warmup)
	}
	for _, t := range r.Train {
		fmt.Fprintf(w, "  T%d×B%-4d %8.1f ms (min %.1f)  %6.2f GFLOP/s  %5.2f%% of peak  peak RSS %.0f MB\n",
			t.Len, t.Rows, t.Ms, t.MinMs, t.GFLOPs, 100*t.PeakShare, t.PeakRSSMB)
	}
	fmt.Fprintln(w, "sampling with the KV cache (host inference path), median step over the whole context")
	for _, s := range r.Sample {
		fmt.Fprintf(w, "  batch %-4d %8.3f ms/step  %8.0f tokens/s  %6.2f GFLOP/s  %5.2f%% of peak  peak RSS %.0f MB\n",
			s.Batch, s.StepMs, s.TokensPerS, s.GFLOPs, 100*s.PeakShare, s.PeakRSSMB)
	}
	if len(r.SampleGraph) > 0 {
		fmt.Fprintf(w, "sampling with the KV cache (the %s backend's graph decoder), median step over the whole context\n", r.Backend)
	}
	for _, s := range r.SampleGraph {
		fmt.Fprintf(w, "  batch %-4d %8.3f ms/step  %8.0f tokens/s  %6.2f GFLOP/s  %5.2f%% of peak  peak RSS %.0f MB\n",
			s.Batch, s.StepMs, s.TokensPerS, s.GFLOPs, 100*s.PeakShare, s.PeakRSSMB)
	}
	if it := r.Iteration; it != nil {
		fmt.Fprintf(w, "RL iteration (%s, median of iterations 2..%d; the first took %.2f s)\n", it.Config, it.Iterations, it.First)
		fmt.Fprintf(w, "  total %.2f s = sample %.2f s (policy decode %.2f s, env %.3f s) + estimate %.4f s + update %.2f s; %.0f tokens sampled; peak RSS %.0f MB\n",
			it.Total, it.Sample, it.Decode, it.Env, it.Estimate, it.Update, it.Tokens, it.PeakRSSMB)
	}
}
