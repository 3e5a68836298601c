package policy

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/graftrl/graftrl/policy/spec"
)

var testBackend = sync.OnceValues(func() (backends.Backend, error) { return NewBackend(BackendOptions{Name: "go"}) })

func backendT(t testing.TB) backends.Backend {
	t.Helper()
	b, err := testBackend()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func smallConfig() Config {
	return Config{Vocab: 11, DModel: 16, Layers: 2, Heads: 2, DFF: 32, MaxLen: 12, InitStd: 0.3}
}

func newTestPolicy(t testing.TB, c Config, l LossConfig) *Policy {
	t.Helper()
	p, err := New(backendT(t), Options{Model: c, Loss: l, Optim: spec.DefaultOptimConfig(), Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The KV-cache decode must reproduce the full forward pass: feed a sequence token by token and
// compare each step's logits with the full-sequence logits at that position.
func TestDecodeMatchesForward(t *testing.T) {
	c := smallConfig()
	p := newTestPolicy(t, c, spec.DefaultLossConfig())
	const rows, length = 3, 10
	rng := rand.New(rand.NewPCG(1, 2))
	tokens := make([]int32, rows*length)
	for i := range tokens {
		tokens[i] = int32(rng.IntN(c.Vocab))
	}
	full, err := p.Logits(rows, length, tokens)
	if err != nil {
		t.Fatal(err)
	}
	d := p.NewDecoder(rows)
	// Rows advance at different offsets to exercise per-row positions: row r starts r steps late.
	maxDiff := 0.0
	for step := 0; step < length+rows; step++ {
		tok := make([]int32, rows)
		pos := make([]int32, rows)
		active := make([]bool, rows)
		for r := range rows {
			q := step - r
			if q >= 0 && q < length {
				tok[r], pos[r], active[r] = tokens[r*length+q], int32(q), true
			} else {
				pos[r] = int32(length) // a scratch slot no active row reads
			}
		}
		lg, err := d.Step(tok, pos)
		if err != nil {
			t.Fatal(err)
		}
		for r := range rows {
			if !active[r] {
				continue
			}
			for v := range c.Vocab {
				want := full[(r*length+int(pos[r]))*c.Vocab+v]
				maxDiff = math.Max(maxDiff, math.Abs(float64(lg[r*c.Vocab+v]-want)))
			}
		}
	}
	if maxDiff > 1e-5 {
		t.Fatalf("KV decode logits differ from the full forward by %g (want ≤ 1e-5)", maxDiff)
	}
}

// The update runs the last block only at the positions the loss reads (selection.go, forwardAt).
// Logits and parameter gradients there must equal those of the full forward pass, and the
// log-probs Update reports must equal LogProbs at those positions.
func TestSelectedPositionsMatchFullForward(t *testing.T) {
	c := smallConfig()
	b := backendT(t)
	specs := spec.Params(c)
	init := initialValues(c, 3)
	const rows, length = 3, 11
	tb := SyntheticBatch(c, rows, length, 1)
	for i := range tb.Weight { // rows with different numbers of selected positions, one with none
		if i/length == 2 || (i/length == 1 && i%3 == 0) {
			tb.Weight[i] = 0
		}
	}
	sel := selectPositions(tb, bucket(mostSelected(tb), tb.Len))
	if sel.q != 8 {
		t.Fatalf("q = %d, want 8", sel.q)
	}
	lossOf := func(in []*graph.Node, selected bool) *graph.Node {
		p := assembleParams(c, in[:len(specs)])
		tokens, targets, weight := in[len(specs)], in[len(specs)+1], in[len(specs)+2]
		var logits *graph.Node
		if selected {
			logits = forwardAt(c, p, tokens, &queries{idx: in[len(specs)+3], bias: in[len(specs)+4]})
		} else {
			logits = forward(c, p, tokens)
		}
		lp, _ := tokenLogProbs(logits, targets, c.Vocab)
		return graph.ReduceAllSum(graph.Mul(lp, weight))
	}
	run := func(selected bool) []*tensors.Tensor {
		e := graph.MustNewExec(b, func(in []*graph.Node) []*graph.Node {
			loss := lossOf(in, selected)
			return append([]*graph.Node{loss}, graph.Gradient(loss, in[:len(specs)]...)...)
		})
		args := make([]any, 0, len(specs)+5)
		for i, s := range specs {
			args = append(args, tensors.FromFlatDataAndDimensions(init[i], s.Shape...))
		}
		if selected {
			args = append(args, tensors.FromFlatDataAndDimensions(tb.Tokens, rows, length), sel.ints(tb.Targets, 0),
				sel.floats(tb.Weight), sel.index(), sel.attentionBias(c.Heads))
		} else {
			args = append(args, tensors.FromFlatDataAndDimensions(tb.Tokens, rows, length),
				tensors.FromFlatDataAndDimensions(tb.Targets, rows, length), tensors.FromFlatDataAndDimensions(tb.Weight, rows, length))
		}
		return e.MustExec(args...)
	}
	full, part := run(false), run(true)
	for i := range full {
		a, b := tensors.MustCopyFlatData[float32](full[i]), tensors.MustCopyFlatData[float32](part[i])
		scale := 0.0
		for _, v := range a {
			scale = math.Max(scale, math.Abs(float64(v)))
		}
		for j := range a {
			if d := math.Abs(float64(a[j] - b[j])); d > 1e-5*(1+scale) {
				t.Fatalf("output %d entry %d: full %g, selected %g", i, j, a[j], b[j])
			}
		}
	}

	p := newTestPolicy(t, c, spec.DefaultLossConfig())
	want, _, err := p.LogProbs(tb)
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.Update(tb, 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range tb.Weight {
		if w > 0 && math.Abs(float64(st.LogProbs[i]-want[i])) > 1e-5 {
			t.Fatalf("position %d: Update log-prob %g, LogProbs %g", i, st.LogProbs[i], want[i])
		}
		if w == 0 && st.LogProbs[i] != 0 {
			t.Fatalf("position %d (weight 0): Update log-prob %g, want 0", i, st.LogProbs[i])
		}
	}
}

func TestQueryBucket(t *testing.T) {
	for _, tc := range [][3]int{{0, 64, 8}, {1, 64, 8}, {8, 64, 8}, {9, 64, 16}, {25, 64, 32}, {33, 64, 48}, {49, 64, 64},
		{65, 128, 96}, {97, 128, 128}, {5, 6, 6}} {
		if got := bucket(tc[0], tc[1]); got != tc[2] {
			t.Errorf("bucket(%d, %d) = %d, want %d", tc[0], tc[1], got, tc[2])
		}
	}
}
