package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/graftrl/graftrl/modelfile"
	"github.com/graftrl/graftrl/policy"
	"github.com/graftrl/graftrl/policy/host"
	"github.com/graftrl/graftrl/policy/pretrained"
	"github.com/graftrl/graftrl/policy/spec"
)

// LMOptions configure the benchmark of a pretrained language model (`graftrl bench --model`).
type LMOptions struct {
	// Path is the model's GGUF file.
	Path string
	// PromptLen is the length of the prompt whose prefill is timed, and the position decoding
	// starts from.
	PromptLen int
	// DecodeLen is the number of tokens each sequence decodes after its prompt.
	DecodeLen int
	// Batches are the numbers of sequences decoded together.
	Batches []int
	// Reps is the number of timed repetitions (medians are reported).
	Reps int
	// TrainRows × TrainLen is the minibatch of the timed train step (forward, backward and Adam
	// of every parameter through GoMLX on Backend); TrainRows 0 skips it.
	TrainRows, TrainLen int
	// Backend is the GoMLX backend of the train step and of the graph decoder ("" for the
	// default, see policy.NewBackend).
	Backend string
	// GraphSampling also times decoding with the backend's graph KV decoder (policy.Decoder).
	GraphSampling bool
	// LoRARank, when > 0, times the train step of rank-LoRARank adapters on every projection
	// (spec.DefaultLoRA's targets and alpha 2·rank) with the model frozen, instead of full
	// fine-tuning.
	LoRARank int
	// PeakGFLOPs overrides the machine peak derived from /proc/cpuinfo.
	PeakGFLOPs float64
	// Log receives progress lines (nil: none).
	Log io.Writer
}

// DefaultLMOptions times a 128-token prefill, 64 decoded tokens at batch 1 and 16, and the
// train step at 2 rows × 64 tokens.
func DefaultLMOptions() LMOptions {
	return LMOptions{PromptLen: 128, DecodeLen: 64, Batches: []int{1, 16}, Reps: 5, TrainRows: 2, TrainLen: 64}
}

// LMReport is the outcome of RunLM.
type LMReport struct {
	Impl      string            `json:"impl"`
	Machine   Machine           `json:"machine"`
	Model     string            `json:"model"`
	Config    pretrained.Config `json:"config"`
	Params    int               `json:"params"`
	LoadS     float64           `json:"load_s"` // reading and dequantising the file, building the decoder
	LoadStart float64           `json:"load_start"`
	LoadEnd   float64           `json:"load_end"`
	Backend   string            `json:"backend"`
	// LoRARank is the rank of the timed train step's adapters (0: full fine-tuning).
	LoRARank int        `json:"lora_rank,omitempty"`
	Prefill  LMResult   `json:"prefill"`
	Decode   []LMResult `json:"decode"`
	// DecodeGraph is decoding with the backend's graph KV decoder, when GraphSampling is set.
	DecodeGraph []LMResult `json:"decode_graph,omitempty"`
	// Train is the train step, when TrainRows > 0.
	Train *LMResult `json:"train,omitempty"`
}

// LMResult is one timed phase: prefill of a prompt (Batch 1) or decoding at a batch size.
type LMResult struct {
	Batch      int     `json:"batch"`
	Len        int     `json:"len,omitempty"` // the train step's sequence length
	Tokens     int     `json:"tokens"`        // tokens processed in one repetition, all rows
	Ms         float64 `json:"ms"`            // median time of one repetition
	TokensPerS float64 `json:"tokens_per_s"`
	GFLOPs     float64 `json:"gflops"`
	PeakShare  float64 `json:"peak_share"`
	PeakRSSMB  float64 `json:"peak_rss_mb"`
}

// Validate checks the options before any work; each error names the flag and what is allowed.
func (o LMOptions) Validate() error {
	switch {
	case o.Path == "":
		return fmt.Errorf("bench: --model: a GGUF file is needed")
	case o.PromptLen < 1:
		return fmt.Errorf("bench: --prompt-len %d: must be ≥ 1", o.PromptLen)
	case o.DecodeLen < 1:
		return fmt.Errorf("bench: --decode-len %d: must be ≥ 1", o.DecodeLen)
	case o.Reps < 1:
		return fmt.Errorf("bench: --reps %d: must be ≥ 1", o.Reps)
	case len(o.Batches) == 0:
		return fmt.Errorf("bench: --sample-batches: at least one batch size is needed")
	case o.TrainRows < 0:
		return fmt.Errorf("bench: --batch %d: must be ≥ 0 (0 skips the train step)", o.TrainRows)
	case o.LoRARank < 0 || o.LoRARank > spec.MaxLoRARank:
		return fmt.Errorf("bench: --lora %d: out of range (allowed 0, full fine-tuning, or 1..%d)", o.LoRARank, spec.MaxLoRARank)
	case o.TrainRows > 0 && (o.TrainLen < 8 || o.TrainLen > 8192):
		return fmt.Errorf("bench: --len %d: must be 8..8192", o.TrainLen)
	case o.GraphSampling && o.PromptLen+o.DecodeLen > 8192:
		return fmt.Errorf("bench: --prompt-len + --decode-len = %d: the graph decoder holds at most 8192 positions", o.PromptLen+o.DecodeLen)
	}
	for _, b := range o.Batches {
		if b < 1 {
			return fmt.Errorf("bench: --sample-batches: %d is not a positive integer", b)
		}
	}
	return nil
}

// RunLM loads the model and times, on the host inference path (policy/host), the prefill of a
// PromptLen-token prompt and the KV-cached decoding of DecodeLen tokens after it at each batch
// size. A batch of b sequences is decoded by one host.LlamaBatchDecoder, so each position's
// products read the weights once for all b rows. Then, on the GoMLX
// backend, the graph decoder (GraphSampling) and the train step (TrainRows > 0).
func RunLM(ctx context.Context, o LMOptions) (*LMReport, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	r := &LMReport{Impl: "graftrl", Machine: probeMachine(o.PeakGFLOPs, true), Model: o.Path, LoadStart: loadAverage(),
		Backend: spec.ResolveBackendName(o.Backend), LoRARank: o.LoRARank}
	t0 := time.Now()
	g, err := modelfile.OpenGGUF(o.Path)
	if err != nil {
		return nil, err
	}
	c, w, err := pretrained.FromGGUF(g)
	g.Close()
	if err != nil {
		return nil, err
	}
	m, err := host.NewLlama(c, w)
	if err != nil {
		return nil, err
	}
	r.LoadS = time.Since(t0).Seconds()
	r.Config = c
	r.Params = r.Config.NumParams()
	rng := rand.New(rand.NewPCG(4, 4))
	prompt := make([]int32, o.PromptLen)
	for i := range prompt {
		prompt[i] = int32(rng.IntN(r.Config.Vocab))
	}
	o.logf("prefill of %d tokens …", o.PromptLen)
	if r.Prefill, err = timeLM(ctx, o, 1, o.PromptLen, nil, func() error {
		_, err := m.NewDecoder().Prefill(prompt)
		return err
	}); err != nil {
		return nil, err
	}
	r.Prefill.GFLOPs = llamaSpanFLOPs(r.Config, 0, o.PromptLen) / (r.Prefill.Ms / 1e3) / 1e9
	for _, b := range o.Batches {
		o.logf("decoding %d tokens at batch %d …", o.DecodeLen, b)
		var d *host.LlamaBatchDecoder
		next := make([]int32, b)
		res, err := timeLM(ctx, o, b, b*o.DecodeLen,
			func() error { d = m.NewBatchDecoder(b); return prefillRows(d, next, prompt) },
			func() error { return decodeRows(d, next, o.DecodeLen) })
		if err != nil {
			return nil, err
		}
		res.GFLOPs = float64(b) * llamaSpanFLOPs(r.Config, o.PromptLen, o.DecodeLen) / (res.Ms / 1e3) / 1e9
		r.Decode = append(r.Decode, res)
	}
	if o.GraphSampling || o.TrainRows > 0 {
		if err := benchLMGraph(ctx, o, r, w, prompt); err != nil {
			return nil, err
		}
	}
	all := append(append([]*LMResult{&r.Prefill}, pointers(r.Decode)...), pointers(r.DecodeGraph)...)
	if r.Train != nil {
		all = append(all, r.Train)
	}
	for _, p := range all {
		p.PeakShare = share(p.GFLOPs, r.Machine.PeakGFLOPs)
	}
	r.LoadEnd = loadAverage()
	return r, nil
}

// benchLMGraph times the model on the GoMLX backend: decoding with the graph KV decoder (all
// rows in one call per position) and the train step (a clipped policy-gradient update of every
// parameter on a synthetic batch, every third token an action).
func benchLMGraph(ctx context.Context, o LMOptions, r *LMReport, w pretrained.Weights, prompt []int32) error {
	backend, err := policy.NewBackend(policy.BackendOptions{Name: o.Backend})
	if err != nil {
		return err
	}
	maxLen := max(o.TrainLen, o.PromptLen+o.DecodeLen)
	var lora *spec.LoRA
	if o.LoRARank > 0 {
		l := spec.DefaultLoRA()
		l.Rank, l.Alpha = o.LoRARank, 2*float64(o.LoRARank)
		lora = &l
	}
	p, err := policy.New(backend, policy.Options{Model: policy.Config{MaxLen: maxLen}, Loss: benchLoss(),
		Optim: spec.DefaultOptimConfig(), Pretrained: &policy.Pretrained{Config: r.Config, Weights: w}, LoRA: lora})
	if err != nil {
		return err
	}
	for _, b := range o.Batches {
		if !o.GraphSampling {
			break
		}
		o.logf("decoding %d tokens at batch %d, graph decoder on %s …", o.DecodeLen, b, r.Backend)
		var d *policy.Decoder
		tok, pos := make([]int32, b), make([]int32, b)
		res, err := timeLM(ctx, o, b, b*o.DecodeLen,
			func() error { d = p.NewDecoder(b); return graphSpan(d, prompt, tok, pos, 0, len(prompt)) },
			func() error { return graphSpan(d, nil, tok, pos, len(prompt), o.DecodeLen) })
		if err != nil {
			return err
		}
		res.GFLOPs = float64(b) * llamaSpanFLOPs(r.Config, o.PromptLen, o.DecodeLen) / (res.Ms / 1e3) / 1e9
		r.DecodeGraph = append(r.DecodeGraph, res)
	}
	if o.TrainRows == 0 {
		return nil
	}
	o.logf("train step T%d×B%d on %s …", o.TrainLen, o.TrainRows, r.Backend)
	batch := policy.SyntheticBatch(p.Config(), o.TrainRows, o.TrainLen, 1)
	res, err := timeLM(ctx, o, o.TrainRows, o.TrainRows*o.TrainLen, nil, func() error {
		_, err := p.Update(batch, 1e-6)
		return err
	})
	if err != nil {
		return err
	}
	res.Len = o.TrainLen
	res.GFLOPs = llamaTrainFLOPs(r.Config, o.TrainRows, o.TrainLen, o.TrainLen/3, lora) / (res.Ms / 1e3) / 1e9
	r.Train = &res
	return nil
}

// graphSpan feeds the graph decoder n positions from start for every row: the tokens of prompt
// while it lasts, then each row's greedy choice.
func graphSpan(d *policy.Decoder, prompt, tok, pos []int32, start, n int) error {
	for t := start; t < start+n; t++ {
		for i := range tok {
			pos[i] = int32(t)
			if t < len(prompt) {
				tok[i] = prompt[t]
			}
		}
		logits, err := d.Step(tok, pos)
		if err != nil {
			return err
		}
		v := len(logits) / len(tok)
		for i := range tok {
			tok[i] = host.Argmax(logits[i*v : (i+1)*v])
		}
	}
	return nil
}

// prefillRows fills every row of d with prompt and sets its greedy next token.
func prefillRows(d *host.LlamaBatchDecoder, next []int32, prompt []int32) error {
	for i := range next {
		logits, err := d.Prefill(i, prompt)
		if err != nil {
			return err
		}
		next[i] = host.Argmax(logits)
	}
	return nil
}

// decodeRows decodes n tokens for every row, all rows in one step a position, each fed its own
// greedy choice.
func decodeRows(d *host.LlamaBatchDecoder, next []int32, n int) error {
	for range n {
		logits, err := d.Step(next)
		if err != nil {
			return err
		}
		for i, l := range logits {
			next[i] = host.Argmax(l)
		}
	}
	return nil
}

func pointers(v []LMResult) []*LMResult {
	out := make([]*LMResult, len(v))
	for i := range v {
		out[i] = &v[i]
	}
	return out
}

// timeLM runs setup (when not nil; untimed) and f once untimed, then Reps times each, and
// reports f's median.
func timeLM(ctx context.Context, o LMOptions, batch, tokens int, setup, f func() error) (LMResult, error) {
	resetPeakRSS()
	times := make([]float64, 0, o.Reps)
	for i := range o.Reps + 1 {
		if err := ctx.Err(); err != nil {
			return LMResult{}, err
		}
		if setup != nil {
			if err := setup(); err != nil {
				return LMResult{}, err
			}
		}
		t0 := time.Now()
		if err := f(); err != nil {
			return LMResult{}, err
		}
		if i > 0 { // the first repetition warms the caches and the worker pool
			times = append(times, time.Since(t0).Seconds()*1e3)
		}
	}
	ms := median(times)
	return LMResult{Batch: batch, Tokens: tokens, Ms: ms, TokensPerS: float64(tokens) / (ms / 1e3),
		PeakRSSMB: float64(peakRSS()) / (1 << 20)}, nil
}

func (o LMOptions) logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, format+"\n", args...)
	}
}

// WriteText prints the report as a table.
func (r *LMReport) WriteText(w io.Writer) {
	m, c := r.Machine, r.Config
	fmt.Fprintf(w, "graftrl bench — %s, %d cores (GOMAXPROCS %d), SIMD %s, host inference path (policy/host)\n", m.CPU, m.Cores, m.GOMAXPROCS, m.SIMD)
	fmt.Fprintf(w, "model: %s\n  llama, %d layers, d %d, FFN %d, %d heads / %d KV heads (head dim %d), vocab %d: %d parameters; loaded in %.2f s\n",
		r.Model, c.Layers, c.DModel, c.Hidden, c.Heads, c.KVHeads, c.HeadDim, c.Vocab, r.Params, r.LoadS)
	fmt.Fprintf(w, "peak: %.0f GFLOP/s = %s\n", m.PeakGFLOPs, m.PeakDerivation)
	if m.MemoryGBs > 0 {
		fmt.Fprintf(w, "memory bandwidth: %.1f GB/s (measured: 64 MB copied per core, bytes read + written)\n", m.MemoryGBs)
	}
	fmt.Fprintf(w, "load average (1 min): %.2f at start, %.2f at end\n\n", r.LoadStart, r.LoadEnd)
	line := func(name string, x LMResult) {
		fmt.Fprintf(w, "  %-22s %9.1f ms  %8.1f tokens/s  %6.2f GFLOP/s  %5.2f%% of peak  peak RSS %.0f MB\n",
			name, x.Ms, x.TokensPerS, x.GFLOPs, 100*x.PeakShare, x.PeakRSSMB)
	}
	fmt.Fprintf(w, "medians of the timed repetitions (float32 weights, dequantised at load)\n")
	line(fmt.Sprintf("prefill %d tokens", r.Prefill.Tokens), r.Prefill)
	for _, d := range r.Decode {
		line(fmt.Sprintf("decode batch %d × %d", d.Batch, d.Tokens/d.Batch), d)
	}
	if len(r.DecodeGraph) > 0 {
		fmt.Fprintf(w, "the %s backend's graph KV decoder (all rows in one call a position)\n", r.Backend)
	}
	for _, d := range r.DecodeGraph {
		line(fmt.Sprintf("decode batch %d × %d", d.Batch, d.Tokens/d.Batch), d)
	}
	if t := r.Train; t != nil {
		what := "every parameter"
		if r.LoRARank > 0 {
			what = fmt.Sprintf("rank-%d LoRA adapters, the model frozen", r.LoRARank)
		}
		fmt.Fprintf(w, "train step (forward + backward + Adam of %s) on %s\n", what, r.Backend)
		line(fmt.Sprintf("T%d×B%d", t.Len, t.Batch), *t)
	}
}
