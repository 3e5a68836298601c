package host

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// BenchmarkSmolLM2Peers is graftrl's side of scripts/bench/lm.sh, which runs the same work on
// llama.cpp and transformers: B rows (1 or 16) of a P-token prompt, row r's token i being
// (1000 + 37·i + 101·r) mod vocabulary, are prefilled, then each row decodes G more tokens
// greedily (the largest logit, no stop token). It reports prefill-tok/s (B·P over the prefill's
// time) and decode-tok/s (B·G over the decoding's time); P and G are $GRAFTRL_LM_PROMPT and
// $GRAFTRL_LM_NEW (128 and 64 when unset). A LlamaDecoder holds one sequence, so batch 16 is 16
// decoders, each on a goroutine of its own for the prefill and for every step: their products
// share the worker pool, one at a time, the others running on their own goroutine. Skipped
// without the model.
func BenchmarkSmolLM2Peers(b *testing.B) {
	prompt, err := lmBenchSize("GRAFTRL_LM_PROMPT", 128)
	if err != nil {
		b.Fatal(err)
	}
	gen, err := lmBenchSize("GRAFTRL_LM_NEW", 64)
	if err != nil {
		b.Fatal(err)
	}
	m, _ := loadSmolLM2(b)
	for _, rows := range []int{1, 16} {
		b.Run(fmt.Sprintf("B%d", rows), func(b *testing.B) {
			var prefill, decode time.Duration
			for range b.N {
				p, d, err := lmBenchRun(m, rows, prompt, gen)
				if err != nil {
					b.Fatal(err)
				}
				prefill += p
				decode += d
			}
			b.ReportMetric(float64(rows*prompt*b.N)/prefill.Seconds(), "prefill-tok/s")
			b.ReportMetric(float64(rows*gen*b.N)/decode.Seconds(), "decode-tok/s")
		})
	}
}

// lmBenchSize reads a positive token count from the environment variable name, def when unset.
func lmBenchSize(name string, def int) (int, error) {
	s := os.Getenv(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 4096 {
		return 0, fmt.Errorf("$%s is %q; want a token count from 1 to 4096", name, s)
	}
	return n, nil
}

// lmBenchRun prefills rows prompts of n tokens, one goroutine per row, then decodes gen tokens
// in each with one batched step a position (LlamaBatchDecoder), and returns the time of each
// phase.
func lmBenchRun(m *Llama, rows, n, gen int) (prefill, decode time.Duration, err error) {
	vocab := m.Config().Vocab
	dec := m.NewBatchDecoder(rows)
	next := make([]int32, rows)
	errs := make([]error, rows)
	each := func(f func(r int) error) {
		var wg sync.WaitGroup
		for r := range rows {
			wg.Go(func() {
				if e := f(r); e != nil {
					errs[r] = e
				}
			})
		}
		wg.Wait()
	}
	start := time.Now()
	each(func(r int) error {
		ids := make([]int32, n)
		for i := range ids {
			ids[i] = int32((1000 + 37*i + 101*r) % vocab)
		}
		logits, err := dec.Prefill(r, ids)
		next[r] = Argmax(logits)
		return err
	})
	prefill = time.Since(start)
	start = time.Now()
	for range gen {
		logits, err := dec.Step(next)
		if err != nil {
			return 0, 0, err
		}
		for r, l := range logits {
			next[r] = Argmax(l)
		}
	}
	decode = time.Since(start)
	for _, e := range errs {
		if e != nil {
			return 0, 0, e
		}
	}
	return prefill, decode, nil
}
