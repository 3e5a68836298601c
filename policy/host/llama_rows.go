package host

import (
	"fmt"
	"slices"

	"github.com/graftrl/graftrl/policy/pretrained"
)

// LlamaRows is a LlamaBatchDecoder driven the way the rollout collector drives a decoder: each
// call names every row's token and position, a row at position 0 starts a new sequence, and rows
// that are not active are left alone. It is a rollout.Decoder, and a rollout.Feeder: Feed takes
// a row's prompt in one pass (a prefill) instead of a token a call.
type LlamaRows struct {
	b      *LlamaBatchDecoder
	logits []float32 // rows × Vocab, reused between calls
	// prefix is the first sequence fed from position 0 since the weights were set, kept so that
	// a later one that starts with the same tokens (a chat's system turn) copies their keys and
	// values instead of computing them again: bit for bit the same, since a position's keys and
	// values depend on the tokens up to it only.
	prefix struct {
		tokens  []int32
		k, v    [][]float32 // per layer
		version int         // the weights' version they were computed with
	}
}

// NewRows returns a decoder of rows sequences, every cache empty.
func (m *Llama) NewRows(rows int) *LlamaRows {
	return &LlamaRows{b: m.NewBatchDecoder(rows), logits: make([]float32, rows*m.cfg.Vocab)}
}

// at readies row r for a token at position pos: a new sequence at 0, else the position that
// follows the row's cache.
func (d *LlamaRows) at(r int, pos int32) error {
	if r < 0 || r >= len(d.b.rows) {
		return fmt.Errorf("host: llama row %d outside [0, %d)", r, len(d.b.rows))
	}
	row := d.b.rows[r]
	if pos == 0 {
		for l := range row.k { // keep the cache's memory for the next sequence
			row.k[l], row.v[l] = row.k[l][:0], row.v[l][:0]
		}
		row.n = 0
	}
	if int(pos) != row.n {
		return fmt.Errorf("host: llama row %d: token at position %d, but the row holds %d positions", r, pos, row.n)
	}
	return nil
}

// Step appends tokens[r] at position pos[r] to every active row r (one pass over the weights
// for all of them) and returns the logits after it, row r's at [r·Vocab, (r+1)·Vocab); an
// inactive row's logits are stale.
func (d *LlamaRows) Step(tokens, pos []int32, active []bool) ([]float32, error) {
	n := len(d.b.rows)
	if len(tokens) != n || len(pos) != n || len(active) != n {
		return nil, fmt.Errorf("host: llama rows step got %d tokens, %d positions, %d flags for %d rows", len(tokens), len(pos), len(active), n)
	}
	sub := &LlamaBatchDecoder{m: d.b.m}
	var idx []int
	var toks []int32
	for r := range n {
		if !active[r] {
			continue
		}
		if err := d.at(r, pos[r]); err != nil {
			return nil, err
		}
		sub.rows = append(sub.rows, d.b.rows[r])
		idx, toks = append(idx, r), append(toks, tokens[r])
	}
	out, err := sub.Step(toks)
	if err != nil {
		return nil, err
	}
	v := d.b.m.cfg.Vocab
	for i, r := range idx {
		copy(d.logits[r*v:(r+1)*v], out[i])
	}
	return d.logits, nil
}

// Feed appends tokens to row r from position pos (0 starts a new sequence) in one prefill pass;
// the logits after them are not needed (the collector's next Step gives them).
func (d *LlamaRows) Feed(r int, tokens []int32, pos int32) error {
	if err := d.at(r, pos); err != nil {
		return err
	}
	if len(tokens) == 0 {
		return nil
	}
	row, m := d.b.rows[r], d.b.m
	reuse := pos == 0 && d.prefix.tokens != nil && d.prefix.version == m.version
	if reuse {
		n := 0
		for n < len(tokens) && n < len(d.prefix.tokens) && tokens[n] == d.prefix.tokens[n] {
			n++
		}
		for l := range row.k {
			row.k[l] = append(row.k[l][:0], d.prefix.k[l][:n*m.kd]...)
			row.v[l] = append(row.v[l][:0], d.prefix.v[l][:n*m.kd]...)
		}
		row.n, tokens = n, tokens[n:]
		if len(tokens) == 0 {
			return nil
		}
	}
	if _, err := row.run(tokens, false); err != nil {
		return err
	}
	if pos == 0 && !reuse {
		d.prefix.tokens, d.prefix.version = slices.Clone(tokens), m.version
		d.prefix.k, d.prefix.v = make([][]float32, len(row.k)), make([][]float32, len(row.v))
		for l := range row.k {
			d.prefix.k[l], d.prefix.v[l] = slices.Clone(row.k[l]), slices.Clone(row.v[l])
		}
	}
	return nil
}

// SetWeights replaces the decoder's weights in place, so that every decoder of m reads the new
// ones from its next call (caches are kept: the caller restarts its sequences).
func (m *Llama) SetWeights(w pretrained.Weights) error {
	fresh, err := NewLlama(m.cfg, w)
	if err != nil {
		return err
	}
	fresh.version = m.version + 1
	*m = *fresh
	return nil
}
