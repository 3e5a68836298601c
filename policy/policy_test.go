package policy

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/gomlx/gomlx/backends"
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
	p, err := New(backendT(t), Options{Model: c, Loss: l, Optim: DefaultOptimConfig(), Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The KV-cache decode must reproduce the full forward pass: feed a sequence token by token and
// compare each step's logits with the full-sequence logits at that position.
func TestDecodeMatchesForward(t *testing.T) {
	c := smallConfig()
	p := newTestPolicy(t, c, DefaultLossConfig())
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
