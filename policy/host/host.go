package host

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/graftrl/graftrl/internal/kernels"
	"github.com/graftrl/graftrl/internal/workers"
	"github.com/graftrl/graftrl/policy/spec"
)

// hostChunk is the most rows a worker carries through the whole network at a time. Rows of a
// chunk share each weight panel fetched from L2; measured at the quickstart size, chunks of 4 to
// 32 rows run equally fast, so chunks are kept small enough to balance work between goroutines.
const hostChunk = 8

// Model is the policy transformer for pure-Go CPU inference (sampling rollouts). It computes
// the same function as the GoMLX graph in policy/model.go from the same weights, repacked for the CPU:
// every matrix is stored as 4-wide column panels ([][4]float32), the q/k/v projections are fused
// into one matrix and the query scale 1/√head_dim is folded into Wq and bq.
//
// A Model is read-only while decoders step, so several Decoders (in several goroutines)
// may share it; SetWeights must not run concurrently with any Step.
type Model struct {
	cfg spec.Config

	d, dp, hd, hdp, f, fp, v, vp, tpad int // sizes; the p suffix is rounded up to a multiple of 4

	tok, pos []float32 // [Vocab,D], [MaxLen,D], row-major
	layers   []hostLayer
	lnG, lnB []float32
	head     matrix    // [D,Vocab]
	headB    []float32 // [vp]
	zeros    []float32 // a zero bias for the attention products
	exp      *expTable
}

type hostLayer struct {
	ln1G, ln1B []float32
	qkv        matrix    // [D, 3·dp]: Wq·scale | Wk | Wv, each padded to dp columns
	qkvB       []float32 // [3·dp]
	wo         matrix    // [D,D]
	bo         []float32 // [dp]
	ln2G, ln2B []float32
	w1         matrix    // [D,F]
	b1         []float32 // [fp]
	w2         matrix    // [F,D]
	b2         []float32 // [dp]
}

func roundUp4(n int) int { return (n + 3) &^ 3 }

// New builds a CPU inference model of architecture c from weights in the order and
// shapes of ParamNames/ParamShapes (as returned by Policy.Weights), each flattened row-major.
func New(c spec.Config, weights [][]float32) (*Model, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	h := &Model{cfg: c, d: c.DModel, hd: c.HeadDim(), f: c.Hidden(), v: c.Vocab}
	h.dp, h.hdp, h.fp, h.vp, h.tpad = roundUp4(h.d), roundUp4(h.hd), roundUp4(h.f), roundUp4(h.v), roundUp4(c.MaxLen)
	d, dp := h.d, h.dp
	h.tok = make([]float32, c.Vocab*d)
	h.pos = make([]float32, c.MaxLen*d)
	for range c.Layers {
		h.layers = append(h.layers, hostLayer{
			ln1G: make([]float32, d), ln1B: make([]float32, d),
			qkv: newMatrix(d, 3*dp), qkvB: make([]float32, 3*dp),
			wo: newMatrix(d, dp), bo: make([]float32, dp),
			ln2G: make([]float32, d), ln2B: make([]float32, d),
			w1: newMatrix(d, h.fp), b1: make([]float32, h.fp),
			w2: newMatrix(h.f, dp), b2: make([]float32, dp),
		})
	}
	h.lnG, h.lnB = make([]float32, d), make([]float32, d)
	h.head, h.headB = newMatrix(d, h.vp), make([]float32, h.vp)
	h.zeros = make([]float32, max(h.tpad, h.hdp))
	h.exp = newExpTable()
	if err := h.SetWeights(weights); err != nil {
		return nil, err
	}
	return h, nil
}

// Config returns the architecture.
func (h *Model) Config() spec.Config { return h.cfg }

// SetWeights replaces the parameters (same order and shapes as New) without allocating,
// e.g. after every policy update. Caches of existing decoders were computed with the old weights:
// start new sequences after a refresh. On error the model is left unchanged.
func (h *Model) SetWeights(weights [][]float32) error {
	if err := spec.CheckWeights(h.cfg, weights); err != nil {
		return fmt.Errorf("host: %w", err)
	}
	d, dp := h.d, h.dp
	scale := float32(1 / math.Sqrt(float64(h.hd)))
	copy(h.tok, weights[0])
	copy(h.pos, weights[1])
	for l := range h.layers {
		L := &h.layers[l]
		w := weights[2+16*l : 2+16*(l+1)]
		copy(L.ln1G, w[0])
		copy(L.ln1B, w[1])
		seg := d * dp / 4 // quads per projection
		kernels.PackPanels(L.qkv.panels[:seg], w[2], d, d, scale)
		kernels.PackPanels(L.qkv.panels[seg:2*seg], w[4], d, d, 1)
		kernels.PackPanels(L.qkv.panels[2*seg:], w[6], d, d, 1)
		kernels.PackBias(L.qkvB[:dp], w[3], scale)
		kernels.PackBias(L.qkvB[dp:2*dp], w[5], 1)
		kernels.PackBias(L.qkvB[2*dp:], w[7], 1)
		kernels.PackPanels(L.wo.panels, w[8], d, d, 1)
		kernels.PackBias(L.bo, w[9], 1)
		copy(L.ln2G, w[10])
		copy(L.ln2B, w[11])
		kernels.PackPanels(L.w1.panels, w[12], d, h.f, 1)
		kernels.PackBias(L.b1, w[13], 1)
		kernels.PackPanels(L.w2.panels, w[14], h.f, d, 1)
		kernels.PackBias(L.b2, w[15], 1)
		for _, m := range []*matrix{&L.qkv, &L.wo, &L.w1, &L.w2} {
			m.regroup()
		}
	}
	n := len(weights)
	copy(h.lnG, weights[n-4])
	copy(h.lnB, weights[n-3])
	kernels.PackPanels(h.head.panels, weights[n-2], d, h.v, 1)
	kernels.PackBias(h.headB, weights[n-1], 1)
	h.head.regroup()
	return nil
}

// Decoder samples incrementally on the CPU with a per-row KV cache of MaxLen positions. It is
// not safe for concurrent use; independent decoders may share one Model.
type Decoder struct {
	m     *Model
	batch int

	// KV caches, per row then layer then head. Keys are in blocks of four positions,
	// [MaxLen/4][head_dim][4], so that the scores q·k are a panel product; values are
	// [head_dim/4][MaxLen][4], so that Σ_t p_t·v_t is one too.
	kc, vc         [][4]float32
	headK, headV   int // quads per (row, layer, head)
	layerK, layerV int
	rowK, rowV     int
	out            []float32 // [batch·vocab], returned by Step
	idx            []int32   // active rows of the current step
	work           []*hostWork
	next           atomic.Int32 // the next chunk of idx to claim in the current step
}

// hostWork is one worker's scratch for a chunk of rows.
type hostWork struct {
	x, a, ctx []float32 // [hostChunk, dp]: residual stream, LayerNorm output, attention output
	qkv       []float32 // [hostChunk, 3·dp]
	hid       []float32 // [hostChunk, fp]
	logits    []float32 // [hostChunk, vp]
	scores    []float32 // [tpad]
	tmp       []float32 // [hdp]
	gtmp      []float32 // [f]
}

// NewDecoder returns a decoder for batch rows with zeroed caches: 2·layers·MaxLen·d_model float32
// per row (128 KB at the quickstart size), allocated up front so that steps never allocate.
func (h *Model) NewDecoder(batch int) *Decoder {
	batch = max(batch, 0)
	c := h.cfg
	d := &Decoder{m: h, batch: batch}
	d.headK = h.tpad / 4 * h.hd
	d.headV = h.hdp / 4 * h.tpad
	d.layerK, d.layerV = c.Heads*d.headK, c.Heads*d.headV
	d.rowK, d.rowV = c.Layers*d.layerK, c.Layers*d.layerV
	d.kc = make([][4]float32, batch*d.rowK)
	d.vc = make([][4]float32, batch*d.rowV)
	d.out = make([]float32, batch*h.v)
	d.idx = make([]int32, 0, batch)
	return d
}

func (h *Model) newWork() *hostWork {
	return &hostWork{
		x: make([]float32, hostChunk*h.dp), a: make([]float32, hostChunk*h.dp), ctx: make([]float32, hostChunk*h.dp),
		qkv: make([]float32, hostChunk*3*h.dp), hid: make([]float32, hostChunk*h.fp),
		logits: make([]float32, hostChunk*h.vp), scores: make([]float32, h.tpad), tmp: make([]float32, h.hdp), gtmp: make([]float32, h.f),
	}
}

// Step feeds tokens[b] at position pos[b] for every active row b (all rows when active is nil)
// and returns the next-token logits [batch·vocab]. Row b attends to its cached positions ≤ pos[b];
// a row restarts a sequence by feeding position 0 again. Inactive rows are skipped entirely: their
// cache is untouched, their tokens and positions are not read, and their logits hold whatever the
// buffer held before. The returned slice is the decoder's own buffer, overwritten by the next Step.
//
// With GOMAXPROCS > 1 and enough active rows, rows are split across the worker pool.
func (d *Decoder) Step(tokens, pos []int32, active []bool) ([]float32, error) {
	if len(tokens) != d.batch || len(pos) != d.batch {
		return nil, fmt.Errorf("host: host decoder step needs %d tokens and positions, got %d and %d", d.batch, len(tokens), len(pos))
	}
	if active != nil && len(active) != d.batch {
		return nil, fmt.Errorf("host: host decoder step needs %d active flags, got %d", d.batch, len(active))
	}
	c := d.m.cfg
	d.idx = d.idx[:0]
	for b := range d.batch {
		if active != nil && !active[b] {
			continue
		}
		if t := tokens[b]; t < 0 || int(t) >= c.Vocab {
			return nil, fmt.Errorf("host: row %d: token %d outside the vocabulary (size %d)", b, t, c.Vocab)
		}
		if q := pos[b]; q < 0 || int(q) >= c.MaxLen {
			return nil, fmt.Errorf("host: row %d: position %d outside the context (max_len %d)", b, q, c.MaxLen)
		}
		d.idx = append(d.idx, int32(b))
	}
	n := len(d.idx)
	if n == 0 {
		return d.out, nil
	}
	// Chunks are claimed dynamically rather than split evenly up front: when another process holds
	// one of the cores, the goroutine that does get CPU time takes over the other's share instead
	// of the step waiting for it.
	nw := max(1, min(workers.Shared().Size(), n))
	chunk := min(hostChunk, (n+nw-1)/nw)
	nw = min(nw, (n+chunk-1)/chunk)
	for len(d.work) < nw {
		d.work = append(d.work, d.m.newWork())
	}
	d.next.Store(0)
	if nw == 1 {
		d.run(d.work[0], chunk, tokens, pos)
		return d.out, nil
	}
	workers.Shared().Run(nw, func(i int) { d.run(d.work[i], chunk, tokens, pos) })
	return d.out, nil
}

// run claims chunks of the active rows until none is left and carries each through the network.
func (d *Decoder) run(w *hostWork, chunk int, tokens, pos []int32) {
	n := len(d.idx)
	for {
		lo := int(d.next.Add(1)-1) * chunk
		if lo >= n {
			return
		}
		d.runChunk(w, d.idx[lo:min(lo+chunk, n)], tokens, pos)
	}
}

func (d *Decoder) runChunk(w *hostWork, rows, tokens, pos []int32) {
	m := d.m
	dm, dp, n := m.d, m.dp, len(rows)
	for i, b := range rows {
		x := w.x[i*dp : i*dp+dm]
		te := m.tok[int(tokens[b])*dm:][:dm]
		pe := m.pos[int(pos[b])*dm:][:dm]
		for j := range x {
			x[j] = te[j] + pe[j]
		}
	}
	for l := range m.layers {
		L := &m.layers[l]
		layerNormRows(w.a, w.x, dp, n, dm, L.ln1G, L.ln1B)
		L.qkv.mul(w.qkv, 3*dp, w.a, dp, n, L.qkvB, kernels.EpiStore)
		for i, b := range rows {
			d.attend(w, l, i, int(b), int(pos[b]))
		}
		L.wo.mul(w.x, dp, w.ctx, dp, n, L.bo, kernels.EpiAdd)
		layerNormRows(w.a, w.x, dp, n, dm, L.ln2G, L.ln2B)
		L.w1.mul(w.hid, m.fp, w.a, dp, n, L.b1, kernels.EpiStore)
		geluRows(m.exp, w.hid, m.fp, n, m.f, w.gtmp)
		L.w2.mul(w.x, dp, w.hid, m.fp, n, L.b2, kernels.EpiAdd)
	}
	layerNormRows(w.a, w.x, dp, n, dm, m.lnG, m.lnB)
	m.head.mul(w.logits, m.vp, w.a, dp, n, m.headB, kernels.EpiStore)
	for i, b := range rows {
		copy(d.out[int(b)*m.v:][:m.v], w.logits[i*m.vp:][:m.v])
	}
}

// attend writes the new key and value of chunk row i (batch row b, position t) into layer l's
// cache and computes the row's causal attention context for every head into w.ctx.
func (d *Decoder) attend(w *hostWork, l, i, b, t int) {
	m := d.m
	dp, hd, tp := m.dp, m.hd, m.tpad
	qkv := w.qkv[i*3*dp : (i+1)*3*dp]
	ctx := w.ctx[i*dp : i*dp+m.d]
	kRow := d.kc[b*d.rowK+l*d.layerK:][:d.layerK]
	vRow := d.vc[b*d.rowV+l*d.layerV:][:d.layerV]
	nb := t/4 + 1
	scores := w.scores[:4*nb]
	lane := t & 3
	for h := range m.cfg.Heads {
		kq := kRow[h*d.headK : (h+1)*d.headK]
		vq := vRow[h*d.headV : (h+1)*d.headV]
		blk := kq[t/4*hd:][:hd]
		for j, x := range qkv[dp+h*hd:][:hd] {
			blk[j][lane] = x
		}
		for j, x := range qkv[2*dp+h*hd:][:hd] {
			vq[j/4*tp+t][j&3] = x
		}
		// Scores of whole 4-position blocks; the ones past t are stale and ignored.
		attnScores(scores, qkv[h*hd:][:hd], kq[:nb*hd], m.zeros)
		inv := softmaxUnnorm(m.exp, scores[:t+1])
		kernels.MatmulPanels(w.tmp, 0, scores, 0, 1, t+1, vq, tp, m.hdp/4, m.zeros, kernels.EpiStore)
		for j, x := range w.tmp[:hd] {
			ctx[h*hd+j] = x * inv
		}
	}
}

// Forward computes logits [rows·length·vocab] for a Rows × Len batch of tokens (row-major) by
// decoding every row position by position; it is meant for tests and checks, not for speed.
func (h *Model) Forward(rows, length int, tokens []int32) ([]float32, error) {
	if rows < 1 || length < 1 || len(tokens) != rows*length {
		return nil, fmt.Errorf("host: host forward needs rows, length ≥ 1 and rows×length tokens (got %d, %d, %d)", rows, length, len(tokens))
	}
	if length > h.cfg.MaxLen {
		return nil, fmt.Errorf("host: sequence length %d exceeds max_len %d", length, h.cfg.MaxLen)
	}
	dec := h.NewDecoder(rows)
	out := make([]float32, rows*length*h.v)
	tok, pos := make([]int32, rows), make([]int32, rows)
	for t := range length {
		for r := range rows {
			tok[r], pos[r] = tokens[r*length+t], int32(t)
		}
		lg, err := dec.Step(tok, pos, nil)
		if err != nil {
			return nil, err
		}
		for r := range rows {
			copy(out[(r*length+t)*h.v:][:h.v], lg[r*h.v:][:h.v])
		}
	}
	return out, nil
}
