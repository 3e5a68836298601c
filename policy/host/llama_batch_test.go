package host

import (
	"slices"
	"testing"
)

// checkBatchMatchesSingle prefills row r of a batch decoder with prompts[r] (none when empty)
// and steps all rows together steps times, each row fed its own greedy choice; a LlamaDecoder
// per row fed the same tokens must give bit for bit the same logits, since kernels.MatmulPanels
// computes a row the same way whatever rows are multiplied with it.
func checkBatchMatchesSingle(t *testing.T, m *Llama, prompts [][]int32, steps int) {
	t.Helper()
	b := m.NewBatchDecoder(len(prompts))
	singles := make([]*LlamaDecoder, len(prompts))
	next := make([]int32, len(prompts))
	for r, p := range prompts {
		singles[r] = m.NewDecoder()
		if len(p) == 0 { // the row starts at position 0 with its first Step
			next[r] = int32(r)
			continue
		}
		got, err := b.Prefill(r, p)
		if err != nil {
			t.Fatal(err)
		}
		want, err := singles[r].Prefill(p)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("row %d prefill: logits differ from a single decoder's", r)
		}
		next[r] = Argmax(want)
	}
	for s := range steps {
		got, err := b.Step(next)
		if err != nil {
			t.Fatal(err)
		}
		for r, d := range singles {
			want, err := d.Step(next[r])
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got[r], want) {
				t.Fatalf("step %d, row %d (position %d): logits differ from a single decoder's by up to %.3g",
					s, r, d.Len()-1, maxAbsDiff(got[r], want))
			}
			if b.Len(r) != d.Len() {
				t.Fatalf("step %d, row %d: batch cache holds %d positions, single %d", s, r, b.Len(r), d.Len())
			}
			next[r] = Argmax(want)
		}
	}
}

// On the tiny random Llama: four rows at different positions (one never prefilled, one long
// enough that attention is split across the worker pool) match single decoders exactly.
func TestLlamaBatchMatchesSingle(t *testing.T) {
	m, _ := tinyLlama(t)
	long := make([]int32, 60)
	for i := range long {
		long[i] = int32((7*i + 3) % 30)
	}
	checkBatchMatchesSingle(t, m, [][]int32{{3, 17, 0}, long, {}, {29, 5, 5, 12, 8}}, 6)
}

// The batch decoder refuses a wrong token count, a token outside the vocabulary and a row
// outside the batch, and Reset restarts a row from position 0.
func TestLlamaBatchErrorsAndReset(t *testing.T) {
	m, _ := tinyLlama(t)
	b := m.NewBatchDecoder(2)
	if _, err := b.Step([]int32{1}); err == nil {
		t.Error("one token for two rows was accepted")
	}
	if _, err := b.Step([]int32{1, 30}); err == nil {
		t.Error("token 30 of a 30-token vocabulary was accepted")
	}
	if _, err := b.Prefill(2, []int32{1}); err == nil {
		t.Error("row 2 of a 2-row batch was accepted")
	}
	if b.Len(0) != 0 || b.Len(1) != 0 {
		t.Fatalf("refused calls changed the caches: %d, %d positions", b.Len(0), b.Len(1))
	}
	if _, err := b.Prefill(0, []int32{4, 5, 6}); err != nil {
		t.Fatal(err)
	}
	if err := b.Reset(0); err != nil || b.Len(0) != 0 {
		t.Fatalf("Reset: %v, %d positions left", err, b.Len(0))
	}
	got, err := b.Step([]int32{9, 9})
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.NewDecoder().Step(9)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got[0], want) || !slices.Equal(got[1], want) {
		t.Error("after Reset, row 0 does not decode as a fresh sequence")
	}
}

// On SmolLM2-135M-Instruct: three rows with prompts of 4, 11 and 23 tokens, three steps.
func TestSmolLM2LlamaBatch(t *testing.T) {
	m, _ := loadSmolLM2(t)
	prompt := func(n, seed int) []int32 {
		p := make([]int32, n)
		for i := range p {
			p[i] = int32((seed*7919 + i*104729) % m.Config().Vocab)
		}
		return p
	}
	checkBatchMatchesSingle(t, m, [][]int32{prompt(4, 1), prompt(11, 2), prompt(23, 3)}, 3)
}
