package host

import (
	"slices"
	"testing"
)

// LlamaRows, driven as the rollout collector drives a decoder — prompts fed whole (Feed), then
// a token a step for the active rows only, rows restarting at position 0 — gives each row, bit
// for bit, the logits of a LlamaDecoder fed the same tokens alone; a prompt that starts like an
// earlier one reuses its keys and values (the prefix) without changing a bit, and not after
// SetWeights.
func TestLlamaRows(t *testing.T) {
	m, w := tinyLlama(t)
	single := func(seq []int32) []float32 {
		out, err := m.NewDecoder().Prefill(seq)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	d := m.NewRows(3)
	v := m.cfg.Vocab
	prompts := [][]int32{{1, 2, 3, 4, 5}, {1, 2, 3, 9}, {7}} // the second shares a prefix with the first
	seqs := make([][]int32, 3)
	for r, p := range prompts {
		if err := d.Feed(r, p[:len(p)-1], 0); err != nil {
			t.Fatal(err)
		}
		seqs[r] = slices.Clone(p[:len(p)-1])
	}
	if got := d.prefix.tokens; !slices.Equal(got, []int32{1, 2, 3, 4}) {
		t.Fatalf("prefix %v; want the first prompt fed", got)
	}
	step := func(toks []int32, active []bool) {
		t.Helper()
		pos := make([]int32, 3)
		for r := range toks {
			if active[r] {
				pos[r] = int32(len(seqs[r]))
				seqs[r] = append(seqs[r], toks[r])
			}
		}
		logits, err := d.Step(toks, pos, active)
		if err != nil {
			t.Fatal(err)
		}
		for r := range toks {
			if active[r] && !slices.Equal(logits[r*v:(r+1)*v], single(seqs[r])) {
				t.Errorf("row %d after %v: logits differ from a decoder fed the row alone", r, seqs[r])
			}
		}
	}
	step([]int32{5, 9, 7}, []bool{true, true, true})
	step([]int32{11, 0, 12}, []bool{true, false, true})
	// Row 1 restarts at position 0 (the window layout's next turn), row 0 goes on.
	seqs[1] = nil
	step([]int32{13, 1, 0}, []bool{true, true, false})
	if err := m.SetWeights(w); err != nil {
		t.Fatal(err)
	}
	if err := d.Feed(2, []int32{1, 2, 3}, 0); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.prefix.tokens, []int32{1, 2, 3}) {
		t.Errorf("prefix %v after SetWeights; want the first prompt fed since", d.prefix.tokens)
	}
	seqs[2] = []int32{1, 2, 3}
	step([]int32{14, 2, 4}, []bool{true, true, true})
	if _, err := d.Step([]int32{0, 0, 0}, []int32{9, 0, 0}, []bool{true, false, false}); err == nil {
		t.Error("a token at a position the row does not hold was accepted")
	}
}
