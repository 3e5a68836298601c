package gobackend_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gomlx/gomlx/backends"

	"github.com/graftrl/graftrl/internal/gobackend"
	"github.com/graftrl/graftrl/policy"
	"github.com/graftrl/graftrl/policy/spec"
)

// fusedAndUnfused returns the fused and the unfused Go backend.
func fusedAndUnfused(t testing.TB) map[string]backends.Backend {
	t.Helper()
	fused, err := gobackend.New()
	if err != nil {
		t.Fatal(err)
	}
	unfused, err := gobackend.NewUnfused()
	if err != nil {
		t.Fatal(err)
	}
	return map[string]backends.Backend{"fused": fused, "unfused": unfused}
}

// quickstartPolicy is the quickstart's architecture with a 64-token vocabulary, seed 7.
func quickstartPolicy(t testing.TB, b backends.Backend) *policy.Policy {
	t.Helper()
	c := spec.DefaultConfig()
	c.Vocab = 64
	p, err := policy.New(b, policy.Options{Model: c, Loss: spec.DefaultLossConfig(), Optim: spec.DefaultOptimConfig(), Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Three training updates of the quickstart's policy give the same weights and statistics, bit
// for bit, with and without fusing.
func TestFusedTrainingBitIdentical(t *testing.T) {
	var weights [][][]float32
	var stats []string
	for _, name := range []string{"fused", "unfused"} {
		p := quickstartPolicy(t, fusedAndUnfused(t)[name])
		tb := policy.SyntheticBatch(p.Config(), 16, 48, 3)
		var s string
		for range 3 {
			st, err := p.Update(tb, 1e-3)
			if err != nil {
				t.Fatal(err)
			}
			s += fmt.Sprintf("loss %v entropy %v grad norm %v log-probs %v\n", st.Loss, st.Entropy, st.GradNorm, st.LogProbs[:12])
		}
		w, err := p.Weights()
		if err != nil {
			t.Fatal(err)
		}
		weights, stats = append(weights, w), append(stats, s)
	}
	if stats[0] != stats[1] {
		t.Fatalf("statistics differ:\nfused   %s\nunfused %s", stats[0], stats[1])
	}
	for i := range weights[0] {
		for j, v := range weights[0][i] {
			if u := weights[1][i][j]; math.Float32bits(v) != math.Float32bits(u) {
				t.Fatalf("parameter %d value %d: %v fused, %v unfused", i, j, v, u)
			}
		}
	}
}

// BenchmarkFusedTrainStep times the quickstart's train step with and without fusing; run with
// -count to interleave them.
func BenchmarkFusedTrainStep(b *testing.B) {
	for _, rows := range []int{16, 64} {
		for _, name := range []string{"fused", "unfused"} {
			b.Run(fmt.Sprintf("T64xB%d/%s", rows, name), func(b *testing.B) {
				p := quickstartPolicy(b, fusedAndUnfused(b)[name])
				tb := policy.SyntheticBatch(p.Config(), rows, 64, 1)
				for range 3 { // compile, then let the buffer pools reach their working size
					if _, err := p.Update(tb, 1e-4); err != nil {
						b.Fatal(err)
					}
				}
				b.ResetTimer()
				for range b.N {
					if _, err := p.Update(tb, 1e-4); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
