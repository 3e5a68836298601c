package host

import (
	"fmt"
	"math"

	"github.com/graftrl/graftrl/internal/kernels"
	"github.com/graftrl/graftrl/internal/workers"
)

// LlamaBatchDecoder decodes several sequences (rows) together, each with its own KV cache and
// position. Decoding one token is bound by reading the weights, so Step multiplies the tokens
// of all rows by each matrix in one pass over it. A row's logits are bit for bit those of a
// LlamaDecoder fed the same tokens: kernels.MatmulPanels computes each row the same way
// whatever rows it is grouped with, and attention and the pointwise steps are the same code.
type LlamaBatchDecoder struct {
	m    *Llama
	rows []*LlamaDecoder // the caches; Step appends to them as LlamaDecoder.run does
}

// NewBatchDecoder returns a decoder of rows sequences, every cache empty.
func (m *Llama) NewBatchDecoder(rows int) *LlamaBatchDecoder {
	b := &LlamaBatchDecoder{m: m, rows: make([]*LlamaDecoder, rows)}
	for i := range b.rows {
		b.rows[i] = m.NewDecoder()
	}
	return b
}

// Rows returns the number of sequences.
func (b *LlamaBatchDecoder) Rows() int { return len(b.rows) }

// Len returns how many positions row's cache holds.
func (b *LlamaBatchDecoder) Len(row int) int { return b.rows[row].n }

// Reset empties row's cache, so that the row can start a new sequence.
func (b *LlamaBatchDecoder) Reset(row int) error {
	if row < 0 || row >= len(b.rows) {
		return fmt.Errorf("host: llama batch row %d outside [0, %d)", row, len(b.rows))
	}
	b.rows[row] = b.m.NewDecoder()
	return nil
}

// Prefill appends prompt to row's cache, alone (a prompt's tokens already share each weight
// read), and returns the logits after its last token.
func (b *LlamaBatchDecoder) Prefill(row int, prompt []int32) ([]float32, error) {
	if row < 0 || row >= len(b.rows) {
		return nil, fmt.Errorf("host: llama batch row %d outside [0, %d)", row, len(b.rows))
	}
	return b.rows[row].Prefill(prompt)
}

// Step appends tokens[r] to row r's cache, at that row's own position, for every row, and
// returns each row's logits after it.
func (b *LlamaBatchDecoder) Step(tokens []int32) ([][]float32, error) {
	m, c := b.m, b.m.cfg
	n, D := len(b.rows), c.DModel
	if len(tokens) != n {
		return nil, fmt.Errorf("host: llama batch step got %d tokens, want one for each of %d rows", len(tokens), n)
	}
	for r, t := range tokens {
		if t < 0 || int(t) >= c.Vocab {
			return nil, fmt.Errorf("host: llama batch row %d: token %d outside the vocabulary [0, %d)", r, t, c.Vocab)
		}
	}
	if n == 0 {
		return nil, nil
	}
	x := make([]float32, n*D)
	for r, t := range tokens {
		copy(x[r*D:(r+1)*D], m.tok[int(t)*D:])
	}
	maxT := 0
	for _, d := range b.rows {
		maxT = max(maxT, d.n+1)
	}
	s := &batchScratch{xn: make([]float32, n*D), qkv: make([]float32, n*(m.qd+2*m.kd)),
		att: make([]float32, n*m.qd), gu: make([]float32, n*2*c.Hidden),
		scores: make([]float32, n*c.Heads*maxT), maxT: maxT}
	for l := range m.layers {
		b.layer(l, x, s)
	}
	for _, d := range b.rows {
		d.n++
	}
	rmsNormRows(s.xn, x, n, D, m.norm, c.NormEps)
	vp := roundUp4(c.Vocab)
	logits := make([]float32, n*vp)
	m.head.mul(logits, vp, s.xn, D, n, m.zeros, kernels.EpiStore)
	out := make([][]float32, n)
	for r := range out {
		out[r] = logits[r*vp : r*vp+c.Vocab : r*vp+c.Vocab]
	}
	return out, nil
}

// batchScratch holds one Step's intermediate products, one row per sequence, and the
// attention scores of every (row, head), maxT apiece.
type batchScratch struct {
	xn, qkv, att, gu, scores []float32
	maxT                     int
}

// layer applies block l to x (one row a sequence, each at its cache's length), appending the
// rows' keys and values to their caches.
func (b *LlamaBatchDecoder) layer(l int, x []float32, s *batchScratch) {
	m, c := b.m, b.m.cfg
	n, D, w, L := len(b.rows), c.DModel, m.qd+2*m.kd, &m.layers[l]
	rmsNormRows(s.xn, x, n, D, L.attnNorm, c.NormEps)
	L.qkv.mul(s.qkv, w, s.xn, D, n, m.zeros, kernels.EpiStore)
	for r, d := range b.rows {
		row := s.qkv[r*w : (r+1)*w]
		m.rope(row[:m.qd], d.n)
		m.rope(row[m.qd:m.qd+m.kd], d.n)
		d.k[l] = append(d.k[l], row[m.qd:m.qd+m.kd]...)
		d.v[l] = append(d.v[l], row[m.qd+m.kd:]...)
	}
	b.attend(l, s.qkv, w, s.att, s.scores, s.maxT)
	L.o.mul(x, D, s.att, m.qd, n, m.zeros, kernels.EpiAdd)
	rmsNormRows(s.xn, x, n, D, L.ffnNorm, c.NormEps)
	L.gateUp.mul(s.gu, 2*c.Hidden, s.xn, D, n, m.zeros, kernels.EpiStore)
	swiGLURows(s.gu, n, c.Hidden)
	L.down.mul(x, D, s.gu, 2*c.Hidden, n, m.zeros, kernels.EpiAdd)
}

// attend writes into att (one row of Heads·HeadDim a sequence) each row's attention of its new
// query in qkv (row stride w) over its own cache of layer l, which already holds the new key
// and value. The (row, head) pairs are split across the worker pool; each pair is one
// attendQuery, as LlamaDecoder.attend's queries are, with maxT values of scores as its scratch.
func (b *LlamaBatchDecoder) attend(l int, qkv []float32, w int, att, scores []float32, maxT int) {
	m, c := b.m, b.m.cfg
	hd, group := c.HeadDim, c.Heads/c.KVHeads
	scale := float32(1 / math.Sqrt(float64(hd)))
	total := 0
	for _, d := range b.rows {
		total += d.n + 1
	}
	workers.ForEach(len(b.rows)*c.Heads, total >= 64, func(i int) {
		r, h := i/c.Heads, i%c.Heads
		keys, vals := b.rows[r].k[l], b.rows[r].v[l]
		kv, t := (h/group)*hd, b.rows[r].n+1
		m.attendQuery(att[r*m.qd+h*hd:r*m.qd+(h+1)*hd], qkv[r*w+h*hd:r*w+(h+1)*hd], keys, vals, kv, t, scale, scores[i*maxT:(i+1)*maxT])
	})
}
