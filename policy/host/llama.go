package host

import (
	"fmt"
	"math"

	"github.com/graftrl/graftrl/internal/kernels"
	"github.com/graftrl/graftrl/internal/workers"
	"github.com/graftrl/graftrl/policy/pretrained"
)

// Llama is a Llama decoder for pure-Go float32 inference. Its matrices are repacked for the
// CPU's kernels (panels: 16-column blocks for kernels.MatmulGroups where it runs, 4-wide column
// panels for kernels.MatmulPanels otherwise); it is read-only once built, so several
// LlamaDecoders may share it.
type Llama struct {
	cfg    pretrained.Config
	qd, kd int // widths of the query and of the key (= value) projections
	tok    []float32
	layers []llamaLayer
	norm   []float32
	head   panels    // [DModel, Vocab]
	zeros  []float32 // a zero bias as wide as the widest product
	invF   []float64 // RoPE's frequencies θ_i = base^(−2i/hd)
	exp    *expTable
	// version counts SetWeights calls, so that what was computed with earlier weights (a
	// LlamaRows prefix) is not reused.
	version int
}

type llamaLayer struct {
	attnNorm, ffnNorm []float32
	qkv               panels // [DModel, qd+2·kd]
	o                 panels // [qd, DModel]
	gateUp            panels // [DModel, 2·Hidden]: gate | up
	down              panels // [Hidden, DModel]
}

// panels is a k × 4·np matrix. Where the CPU runs the groups kernel (kernels.HasGroups), its
// first 16·ng columns (ng = ⌊np/4⌋) are ng blocks of k × 16 values for kernels.MatmulGroups and
// the other np − 4·ng panels are kernels.MatmulPanels' 4-wide column panels; otherwise every
// column is in the panels. The two kernels give the same sums bit for bit, so the layout
// changes the speed of a product, never its result.
type panels struct {
	g         []float32    // [ng][k][16]
	p         [][4]float32 // [np − 4·ng][k][4]
	k, np, ng int
	// part, when not 0, is the number of steps of the parts in which mul sums over more than
	// three rows (kernels.MatmulGroupsPart; the same sums bit for bit): set where the groups
	// kernel is the 8-lane one, which takes rows in blocks of six and three and must find a
	// group's weights in L1 for each block, and k is long enough (SmolLM2's 576 steps are 36 KB
	// a group).
	part int
}

// groupPart is panels.part on CPUs without AVX-512: 256 steps, a group's 16 KB of weights.
const groupPart = 256

// packT packs the transposes of row-major [out_j, k] matrices side by side into one k × Σout_j
// matrix, so that x·packed gives the products of all of them (each out_j a multiple of 4):
// column c of the packed matrix is lane c mod 16 of block ⌊c/16⌋ (c < 16·ng) or lane c mod 4 of
// panel ⌊(c − 16·ng)/4⌋, each written once from its input row, the padding columns zero.
func packT(k int, ws ...[]float32) panels {
	cols := 0
	for _, w := range ws {
		cols += len(w) / k
	}
	m := panels{k: k, np: roundUp4(cols) / 4}
	if kernels.HasGroups() {
		m.ng = m.np / 4
	}
	if kernels.HasGroups() && !kernels.HasAVX512() && k > 3*groupPart/2 {
		m.part = groupPart
	}
	m.g = make([]float32, m.ng*k*16)
	m.p = make([][4]float32, (m.np-4*m.ng)*k)
	g0, c := 16*m.ng, 0
	for _, w := range ws {
		for j := range len(w) / k {
			row := w[j*k : (j+1)*k]
			if c < g0 {
				blk := m.g[(c/16)*k*16+c%16:]
				for i, v := range row {
					blk[i*16] = v
				}
			} else {
				pan, lane := m.p[(c-g0)/4*k:], (c-g0)%4
				for i, v := range row {
					pan[i][lane] = v
				}
			}
			c++
		}
	}
	return m
}

// mul computes out[r·ldo + c] (=, or += with kernels.EpiAdd) Σ_i x[r·ldx+i]·W[i][c] for n rows,
// the columns split across the worker pool at pairs of blocks and of panels; each column's sum
// is the same whatever the split and whichever kernel computes it.
func (m *panels) mul(out []float32, ldo int, x []float32, ldx, n int, zeros []float32, epi int) {
	if m.ng > 0 {
		// Two blocks a kernel call: x's broadcasts serve both, and their k × 32 weights stay
		// in cache while the kernel's blocks of rows (four, or six and three on the FMA kernel)
		// pass.
		grain := max(2, 65536/(16*m.k*max(1, n)))
		parts := m.part > 0 && n > 3
		workers.ParallelRange(m.ng, grain, 2, func(lo, hi int) {
			if parts {
				t := workers.GetScratch(2 * 32 * n)
				defer workers.PutScratch(t)
				sums, odd := (*t)[:32*n], (*t)[32*n:]
				for b := lo; b < hi; b += 2 {
					m.mulParts(out[16*b:], ldo, x, ldx, n, b, min(2, hi-b), sums, odd, epi)
				}
				return
			}
			for b := lo; b < hi; b += 2 {
				w := min(2, hi-b)
				kernels.MatmulGroups(out[16*b:], ldo, x, ldx, 1, n, m.k, m.g[b*16*m.k:], 16, 16*m.k, w, nil, epi)
			}
		})
	}
	np, c0 := m.np-4*m.ng, 16*m.ng
	if np == 0 {
		return
	}
	// About 2^16 multiply-adds a part, each part starting at an even panel: MatmulPanels takes
	// panels two at a time and a panel alone sums differently, so an odd cut would make a
	// column's sum depend on the split (on the worker count and on n).
	grain := max(1, 65536/(4*m.k*max(1, n)))
	workers.ParallelRange(np, grain, 2, func(lo, hi int) {
		kernels.MatmulPanels(out[c0+4*lo:], ldo, x, ldx, n, m.k, m.p[lo*m.k:], m.k, hi-lo, zeros, epi)
	})
}

// mulParts is one call of mul's groups loop, blocks b to b+w−1, summed in parts of m.part steps
// into sums (with the odd-step chains in odd, both 16·w values a row) and then stored to or
// added to out: bit for bit what kernels.MatmulGroups gives over all the steps at once (the add
// epilogue is the same one addition, the stored value added to the two chains' sum).
func (m *panels) mulParts(out []float32, ldo int, x []float32, ldx, n, b, w int, sums, odd []float32, epi int) {
	ld := 16 * w
	for k0 := 0; k0 < m.k; k0 += m.part {
		kk := min(m.part, m.k-k0)
		part := kernels.GroupsPart{Resume: k0 > 0, Split: k0+kk < m.k}
		kernels.MatmulGroupsPart(sums, odd, ld, x[k0:], ldx, 1, n, kk, m.g[b*16*m.k+16*k0:], 16, 16*m.k, w, nil, kernels.EpiStore, part)
	}
	for r := range n {
		o, s := out[r*ldo:r*ldo+ld], sums[r*ld:(r+1)*ld]
		if epi == kernels.EpiAdd {
			for c, v := range s {
				o[c] = v + o[c]
			}
			continue
		}
		copy(o, s)
	}
}

// NewLlama builds the decoder of architecture c from w, checking every length.
func NewLlama(c pretrained.Config, w pretrained.Weights) (*Llama, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	d, qd, kd, f := c.DModel, c.Heads*c.HeadDim, c.KVHeads*c.HeadDim, c.Hidden
	if d%4 != 0 || qd%4 != 0 || kd%4 != 0 || f%4 != 0 {
		return nil, fmt.Errorf("host: llama widths (model %d, query %d, key %d, hidden %d) must be multiples of 4", d, qd, kd, f)
	}
	check := func(name string, v []float32, n int) error {
		if len(v) != n {
			return fmt.Errorf("host: llama %s has %d values, want %d", name, len(v), n)
		}
		return nil
	}
	if err := check("token embedding", w.TokenEmbd, c.Vocab*d); err != nil {
		return nil, err
	}
	if err := check("output norm", w.OutputNorm, d); err != nil {
		return nil, err
	}
	if len(w.Layers) != c.Layers {
		return nil, fmt.Errorf("host: llama weights have %d layers, want %d", len(w.Layers), c.Layers)
	}
	m := &Llama{cfg: c, qd: qd, kd: kd, tok: w.TokenEmbd, norm: w.OutputNorm, exp: newExpTable()}
	for l, L := range w.Layers {
		for _, e := range []struct {
			name string
			v    []float32
			n    int
		}{
			{"attention norm", L.AttnNorm, d}, {"q", L.Q, qd * d}, {"k", L.K, kd * d}, {"v", L.V, kd * d},
			{"attention output", L.O, d * qd}, {"ffn norm", L.FFNNorm, d}, {"gate", L.Gate, f * d},
			{"up", L.Up, f * d}, {"down", L.Down, d * f},
		} {
			if err := check(fmt.Sprintf("layer %d %s", l, e.name), e.v, e.n); err != nil {
				return nil, err
			}
		}
		m.layers = append(m.layers, llamaLayer{
			attnNorm: L.AttnNorm, ffnNorm: L.FFNNorm,
			qkv: packT(d, L.Q, L.K, L.V), o: packT(qd, L.O),
			gateUp: packT(d, L.Gate, L.Up), down: packT(f, L.Down),
		})
	}
	m.head = packT(d, w.TokenEmbd)
	m.zeros = make([]float32, max(roundUp4(c.Vocab), qd+2*kd, 2*f))
	for i := range c.HeadDim / 2 {
		m.invF = append(m.invF, math.Pow(c.RopeBase, -float64(2*i)/float64(c.HeadDim)))
	}
	return m, nil
}

// Config returns the architecture.
func (m *Llama) Config() pretrained.Config { return m.cfg }

// Forward returns the logits of every position of tokens (a whole sequence from position 0);
// it fails on a token outside the vocabulary.
func (m *Llama) Forward(tokens []int32) ([][]float32, error) {
	d := m.NewDecoder()
	return d.run(tokens, true)
}

// LlamaDecoder runs one sequence with a KV cache: Prefill the prompt, then Step a token at a time.
type LlamaDecoder struct {
	m    *Llama
	k, v [][]float32 // per layer, [position][KVHeads·HeadDim]
	n    int         // positions cached
}

// NewDecoder returns a decoder with an empty cache.
func (m *Llama) NewDecoder() *LlamaDecoder {
	return &LlamaDecoder{m: m, k: make([][]float32, m.cfg.Layers), v: make([][]float32, m.cfg.Layers)}
}

// Len returns how many positions the cache holds.
func (d *LlamaDecoder) Len() int { return d.n }

// Prefill appends the prompt's tokens to the cache and returns the logits after its last one.
func (d *LlamaDecoder) Prefill(prompt []int32) ([]float32, error) {
	if len(prompt) == 0 {
		return nil, fmt.Errorf("host: llama prefill needs at least one token")
	}
	out, err := d.run(prompt, false)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// Step appends one token and returns the logits that follow it.
func (d *LlamaDecoder) Step(token int32) ([]float32, error) {
	return d.Prefill([]int32{token})
}

// run pushes tokens through the network after the cached positions and returns the logits of
// every new position (all) or of the last one.
func (d *LlamaDecoder) run(tokens []int32, all bool) ([][]float32, error) {
	m, c := d.m, d.m.cfg
	D, n, p0 := c.DModel, len(tokens), d.n
	for _, t := range tokens {
		if t < 0 || int(t) >= c.Vocab {
			return nil, fmt.Errorf("host: llama token %d outside the vocabulary [0, %d)", t, c.Vocab)
		}
	}
	x := make([]float32, n*D)
	for r, t := range tokens {
		copy(x[r*D:(r+1)*D], m.tok[int(t)*D:])
	}
	xn := make([]float32, n*D)
	w := m.qd + 2*m.kd
	qkv := make([]float32, n*w)
	att := make([]float32, n*m.qd)
	gu := make([]float32, n*2*c.Hidden)
	for l := range m.layers {
		L := &m.layers[l]
		rmsNormRows(xn, x, n, D, L.attnNorm, c.NormEps)
		L.qkv.mul(qkv, w, xn, D, n, m.zeros, kernels.EpiStore)
		for r := range n {
			row := qkv[r*w : (r+1)*w]
			m.rope(row[:m.qd], p0+r)
			m.rope(row[m.qd:m.qd+m.kd], p0+r)
			d.k[l] = append(d.k[l], row[m.qd:m.qd+m.kd]...)
			d.v[l] = append(d.v[l], row[m.qd+m.kd:]...)
		}
		d.attend(l, qkv, w, att, n, p0)
		L.o.mul(x, D, att, m.qd, n, m.zeros, kernels.EpiAdd)
		rmsNormRows(xn, x, n, D, L.ffnNorm, c.NormEps)
		L.gateUp.mul(gu, 2*c.Hidden, xn, D, n, m.zeros, kernels.EpiStore)
		swiGLURows(gu, n, c.Hidden)
		L.down.mul(x, D, gu, 2*c.Hidden, n, m.zeros, kernels.EpiAdd)
	}
	d.n += n
	first := n - 1
	if all {
		first = 0
	}
	rows := n - first
	rmsNormRows(xn, x[first*D:], rows, D, m.norm, c.NormEps)
	vp := roundUp4(c.Vocab)
	logits := make([]float32, rows*vp)
	m.head.mul(logits, vp, xn, D, rows, m.zeros, kernels.EpiStore)
	out := make([][]float32, rows)
	for r := range out {
		out[r] = logits[r*vp : r*vp+c.Vocab : r*vp+c.Vocab]
	}
	return out, nil
}

// rope rotates each head of v (HeadDim values a head) to position pos: the pair (2i, 2i+1) by
// the angle pos·θ_i. The angle and its sine and cosine are taken in float64, then rounded.
func (m *Llama) rope(v []float32, pos int) {
	hd := m.cfg.HeadDim
	for i, f := range m.invF {
		s, c := math.Sincos(float64(pos) * f)
		sf, cf := float32(s), float32(c)
		for h := 0; h < len(v); h += hd {
			a, b := v[h+2*i], v[h+2*i+1]
			v[h+2*i] = a*cf - b*sf
			v[h+2*i+1] = b*cf + a*sf
		}
	}
}

// attend writes into att (n rows of Heads·HeadDim) the causal attention of the n new queries in
// qkv (row stride w) at positions p0.. over the cache of layer l; the query heads are split
// across the worker pool.
func (d *LlamaDecoder) attend(l int, qkv []float32, w int, att []float32, n, p0 int) {
	m, c := d.m, d.m.cfg
	hd, group := c.HeadDim, c.Heads/c.KVHeads
	scale := float32(1 / math.Sqrt(float64(hd)))
	keys, vals := d.k[l], d.v[l]
	workers.ForEach(c.Heads, n*(p0+n) >= 64, func(h int) {
		kv := (h / group) * hd
		s := make([]float32, p0+n)
		for r := range n {
			// causal: positions 0..p0+r
			m.attendQuery(att[r*m.qd+h*hd:r*m.qd+(h+1)*hd], qkv[r*w+h*hd:r*w+(h+1)*hd], keys, vals, kv, p0+r+1, scale, s)
		}
	})
}

// attendQuery writes into o the attention of one head's query q over the first t positions of
// a layer's cache (keys and vals: rows of the key width, this head's slice at offset kv), with
// s (at least t values) as scratch for the scores.
func (m *Llama) attendQuery(o, q, keys, vals []float32, kv, t int, scale float32, s []float32) {
	hd := len(q)
	kernels.AttendScores(s[:t], q, keys[kv:], m.kd, scale)
	inv := softmaxUnnorm(m.exp, s[:t])
	for j := range s[:t] {
		s[j] *= inv
	}
	kernels.AttendValues(o[:hd], s[:t], vals[kv:], m.kd)
}

// swiGLURows replaces each of n rows' gate half of gu (rows of gate | up, each hidden wide) with
// silu(gate)·up = gate / (1 + float32(e^−gate))·up, the n·hidden values split across the worker
// pool (each is computed alone, so the split changes nothing). The exponentials run on the Exp
// kernel, whose values are math.Exp's (kernels.Unary).
func swiGLURows(gu []float32, n, hidden int) {
	workers.ParallelRange(n*hidden, 512, 1, func(lo, hi int) {
		scratch := workers.GetScratch(min(hi-lo, hidden))
		defer workers.PutScratch(scratch)
		for i := lo; i < hi; {
			r, j := i/hidden, i%hidden // row r from its value j
			end := min(hi, (r+1)*hidden)
			e := end - r*hidden // to its value e
			g := gu[r*2*hidden+j : r*2*hidden+e]
			u := gu[(r*2+1)*hidden+j : (r*2+1)*hidden+e]
			ex := (*scratch)[:len(g)]
			for t, gi := range g {
				ex[t] = -gi
			}
			kernels.Unary(ex, ex, kernels.ExpF32FMA, math.Exp)
			for t, gi := range g {
				g[t] = gi / (1 + ex[t]) * u[t]
			}
			i = end
		}
	})
}

// rmsNormRows writes x/√(mean(x²) + ε)·g into out for n rows of d values (stride d), the mean
// accumulated in float64.
func rmsNormRows(out, x []float32, n, d int, g []float32, eps float64) {
	for r := range n {
		xr, or := x[r*d:(r+1)*d], out[r*d:(r+1)*d]
		var sq float64
		for _, v := range xr {
			sq += float64(v) * float64(v)
		}
		rs := float32(1 / math.Sqrt(sq/float64(d)+eps))
		for i, v := range xr {
			or[i] = g[i] * (v * rs)
		}
	}
}

// Greedy appends to prompt up to n tokens, each the most likely after the ones before (the
// lowest id on a tie), stopping after stop (when stop ≥ 0); it returns the new tokens.
func (m *Llama) Greedy(prompt []int32, n int, stop int32) ([]int32, error) {
	d := m.NewDecoder()
	logits, err := d.Prefill(prompt)
	var out []int32
	for err == nil && len(out) < n {
		best := Argmax(logits)
		out = append(out, best)
		if best == stop || len(out) == n {
			break
		}
		logits, err = d.Step(best)
	}
	return out, err
}

// Argmax is the index of the largest value, the lowest of equal ones (greedy decoding's choice);
// 0 for an empty slice.
func Argmax(v []float32) int32 {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return int32(best)
}
