package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/graftrl/graftrl/bench"
	"github.com/graftrl/graftrl/modelfile"
)

// benchOptions are the flags of `graftrl bench`.
type benchOptions struct {
	opts       bench.Options
	lm         bench.LMOptions
	samples    string
	check      string
	json       bool
	cpuProfile string
	out        io.Writer
	log        io.Writer
}

func newBenchCmd() *cobra.Command {
	o := &benchOptions{opts: bench.DefaultOptions(), lm: bench.DefaultLMOptions()}
	cmd := &cobra.Command{
		Use:   "bench [flags]",
		Short: "Measure train-step time, KV-cached sampling and an RL iteration on this machine",
		Long: `Measure, for a policy configuration: the train step (forward + backward + Adam) at the
quickstart minibatch (--len × --batch) and at 4× the rows; KV-cached sampling tokens/s at each
--sample-batches size; one RL iteration of --config split into sample / estimate / update / env
time; peak RSS of each part; achieved GFLOP/s and their share of the machine's peak (derived from
/proc/cpuinfo: cores × clock × SIMD FLOP/cycle; override with --peak-gflops).

scripts/bench/torch_ref.py measures PyTorch the same way and scripts/bench/compare.sh runs
both in alternation and prints the ratios.

With --model (a GGUF file, or "smollm2" for the model scripts/install-smollm2.sh installs), it
measures that pretrained language model instead: on the host inference path, the prefill of a
--prompt-len prompt and KV-cached decoding of --decode-len tokens at each --sample-batches size
(default 1,16); with --graph-sampling, the same decoding with the backend's graph decoder; and
the train step on the backend at --len × --batch (default 64 × 2; --batch 0 skips it):
tokens/s, GFLOP/s and peak RSS. scripts/bench/lm.sh compares it with llama.cpp and transformers.`,
		Example: `  graftrl bench
  # the report as JSON
  graftrl bench --json > bench.json
  # a wider policy, sampling timed at two batch sizes
  graftrl bench --d-model 256 --layers 4 --sample-batches 1,64
  # SmolLM2-135M-Instruct (scripts/install-smollm2.sh)
  graftrl bench --model smollm2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			batches, err := parseInts(o.samples)
			if err != nil {
				return &usageError{"bench: --sample-batches: " + err.Error()}
			}
			if o.cpuProfile != "" {
				stop, err := startCPUProfile(o.cpuProfile)
				if err != nil {
					return err
				}
				defer stop()
			}
			if o.lm.Path != "" {
				return benchLM(cmd, o, batches)
			}
			o.opts.SampleBatches = batches
			if o.check != "" {
				o.opts.IterationConfig = "" // --write-check only builds the model
			}
			if err := o.opts.Validate(); err != nil {
				return &usageError{err.Error()}
			}
			o.out, o.log = cmd.OutOrStdout(), cmd.ErrOrStderr()
			return benchRun(cmd, o)
		},
	}
	f := cmd.Flags()
	m := &o.opts.Model
	f.IntVar(&m.DModel, "d-model", m.DModel, "policy width")
	f.IntVar(&m.Layers, "layers", m.Layers, "transformer blocks")
	f.IntVar(&m.Heads, "heads", m.Heads, "attention heads")
	f.IntVar(&m.DFF, "d-ff", m.DFF, "MLP width (0: 4·d_model)")
	f.IntVar(&m.Vocab, "vocab", m.Vocab, "vocabulary size")
	f.IntVar(&m.MaxLen, "max-len", m.MaxLen, "context length (KV cache size)")
	f.IntVar(&o.opts.Rows, "batch", o.opts.Rows, "train minibatch rows at the quickstart shape (also timed at 4×)")
	f.IntVar(&o.opts.Len, "len", o.opts.Len, "train sequence length")
	f.StringVar(&o.samples, "sample-batches", "1,16,64", "decoder batch sizes to time, comma-separated")
	f.BoolVar(&o.opts.GraphSampling, "graph-sampling", false, "also time sampling with the backend's graph KV decoder (rollout.sampler: graph)")
	f.IntVar(&o.opts.Reps, "reps", o.opts.Reps, "timed repetitions (medians are reported)")
	f.IntVar(&o.opts.Warmup, "warmup", o.opts.Warmup, "untimed train steps before them (the first compiles)")
	f.IntVar(&o.opts.ActionTokens, "action-tokens", o.opts.ActionTokens, "action token ids 4..4+k−1 masked as in the quickstart (0: no mask)")
	f.StringVar(&o.opts.Backend, "backend", "", "GoMLX backend (default: $GOMLX_BACKEND, then go)")
	f.IntVar(&o.opts.Devices, "devices", 0, "split the timed train steps over this many devices (xla backends; 0 or 1: one)")
	f.StringVar(&o.opts.IterationConfig, "config", o.opts.IterationConfig, "RL config whose iteration is timed (empty: skip)")
	f.IntVar(&o.opts.Iterations, "iterations", o.opts.Iterations, "RL iterations to run (the first, compiling, is reported apart)")
	f.Float64Var(&o.opts.PeakGFLOPs, "peak-gflops", 0, "machine peak in GFLOP/s (default: derived from /proc/cpuinfo)")
	f.BoolVar(&o.json, "json", false, "print the report as JSON")
	f.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
	f.StringVar(&o.lm.Path, "model", "", `a pretrained model to time instead (a GGUF file, or "smollm2": the installed SmolLM2-135M-Instruct)`)
	f.IntVar(&o.lm.PromptLen, "prompt-len", o.lm.PromptLen, "with --model: prompt tokens prefilled")
	f.IntVar(&o.lm.DecodeLen, "decode-len", o.lm.DecodeLen, "with --model: tokens decoded per sequence")
	f.IntVar(&o.lm.LoRARank, "lora", 0, "with --model: time the train step of LoRA adapters of this rank (model frozen) instead of full fine-tuning")
	f.StringVar(&o.check, "write-check", "", "only write weights, tokens and logits to this file for torch_ref.py --check")
	return cmd
}

func benchRun(cmd *cobra.Command, o *benchOptions) error {
	if o.check != "" {
		return bench.WriteCheck(o.check, o.opts.Model, o.opts.Backend)
	}
	o.opts.Log = o.log
	r, err := bench.Run(cmd.Context(), o.opts)
	if err != nil {
		return err
	}
	return writeReport(o.out, o.json, r, r.WriteText)
}

// benchLM runs `graftrl bench --model`: the pretrained model on the host inference path.
func benchLM(cmd *cobra.Command, o *benchOptions, batches []int) error {
	if cmd.Flags().Changed("sample-batches") {
		o.lm.Batches = batches
	}
	o.lm.Reps = o.opts.Reps
	if !cmd.Flags().Changed("reps") {
		o.lm.Reps = bench.DefaultLMOptions().Reps
	}
	o.lm.PeakGFLOPs = o.opts.PeakGFLOPs
	o.lm.Backend, o.lm.GraphSampling = o.opts.Backend, o.opts.GraphSampling
	if cmd.Flags().Changed("batch") {
		o.lm.TrainRows = o.opts.Rows
	}
	if cmd.Flags().Changed("len") {
		o.lm.TrainLen = o.opts.Len
	}
	if o.lm.Path == "smollm2" {
		path, err := modelfile.InstalledSmolLM2()
		if err != nil {
			return &usageError{"bench: --model smollm2: " + err.Error()}
		}
		o.lm.Path = path
	}
	if err := o.lm.Validate(); err != nil {
		return &usageError{err.Error()}
	}
	o.lm.Log = cmd.ErrOrStderr()
	r, err := bench.RunLM(cmd.Context(), o.lm)
	if err != nil {
		return err
	}
	return writeReport(cmd.OutOrStdout(), o.json, r, r.WriteText)
}

// startCPUProfile starts Go's CPU profiler writing to path and returns the function that stops it
// and closes the file.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("bench: --cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("bench: --cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// writeReport prints a benchmark report: as one JSON line when asJSON, else as text.
func writeReport(w io.Writer, asJSON bool, r any, text func(io.Writer)) error {
	if !asJSON {
		text(w)
		return nil
	}
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, string(data))
	return nil
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}
