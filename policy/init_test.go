package policy

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/policy/spec"
)

// The weights of a checkpoint start a new policy exactly (weights only): the new policy's first
// update equals that of a policy built with the same weights and a fresh optimiser, and the KL
// reference is the loaded weights (KL 0 before any update).
func TestInitFromCheckpoint(t *testing.T) {
	c := smallConfig()
	l := spec.DefaultLossConfig()
	tb := SyntheticBatch(c, 3, 10, 1)
	p, dir := savedPolicy(t, c, l, tb)
	w, err := ReadCheckpointWeights(dir, c)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := p.Weights()
	if !reflect.DeepEqual(w, want) {
		t.Fatal("ReadCheckpointWeights differs from the saved weights")
	}
	kl := l
	kl.KL = spec.KLk1
	q, err := New(backendT(t), Options{Model: c, Loss: kl, Optim: spec.DefaultOptimConfig(), Seed: 99, Init: w})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := q.Weights(); !reflect.DeepEqual(got, want) {
		t.Fatal("a policy built with Init does not hold those weights")
	}
	ref, err := q.RefLogProbs(tb)
	if err != nil {
		t.Fatal(err)
	}
	now, _, err := q.LogProbs(tb)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ref, now) {
		t.Fatal("the KL reference is not the initial weights")
	}
	// Fresh Adam: the first update from Init equals the first update of a fresh policy whose weights
	// were set the same way (both have step 0, zero moments), not the next update of p.
	r, err := New(backendT(t), Options{Model: c, Loss: l, Optim: spec.DefaultOptimConfig(), Seed: 5, Init: w})
	if err != nil {
		t.Fatal(err)
	}
	sr, err := r.Update(tb, 1e-2)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := p.Update(tb, 1e-2)
	if err != nil {
		t.Fatal(err)
	}
	wr, _ := r.Weights()
	wp, _ := p.Weights()
	if sr.Loss != sp.Loss {
		t.Fatalf("same weights, different loss: %g vs %g", sr.Loss, sp.Loss)
	}
	if reflect.DeepEqual(wr, wp) {
		t.Fatal("the update from Init equals the update with the saved Adam state: the optimiser was not fresh")
	}
	// Adam's first step moves every weight with a gradient by lr·sign(g) (bias-corrected moments
	// m̂ = g, v̂ = g²): check it on the output bias.
	last := len(w) - 1
	for j := range w[last] {
		if d := math.Abs(float64(wr[last][j] - w[last][j])); d > 0 && math.Abs(d-1e-2) > 1e-4 {
			t.Fatalf("head bias %d moved by %g on a fresh first Adam step, want 0.01", j, d)
		}
	}
}

// Checkpoints of another architecture, damaged ones and missing ones are refused, naming the
// parameter or the path; wrong Init arrays are refused by New.
func TestReadCheckpointWeightsErrors(t *testing.T) {
	c := smallConfig()
	p := newTestPolicy(t, c, spec.DefaultLossConfig())
	dir := filepath.Join(t.TempDir(), "ckpt")
	if err := p.Save(dir); err != nil {
		t.Fatal(err)
	}
	wider := c
	wider.DModel = 32
	if _, err := ReadCheckpointWeights(dir, wider); err == nil || !strings.Contains(err.Error(), "embed/tok has shape") {
		t.Errorf("other architecture: %v", err)
	}
	bigger := c
	bigger.Vocab = 13
	if _, err := ReadCheckpointWeights(dir, bigger); err == nil || !strings.Contains(err.Error(), "vocabulary") {
		t.Errorf("other vocabulary size: %v", err)
	}
	deeper := c
	deeper.Layers = 3
	if _, err := ReadCheckpointWeights(dir, deeper); err == nil || !strings.Contains(err.Error(), "no parameter block2/") {
		t.Errorf("more layers: %v", err)
	}
	if _, err := ReadCheckpointWeights(filepath.Join(dir, "absent"), c); err == nil || !strings.Contains(err.Error(), "absent") {
		t.Errorf("missing checkpoint: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		if err := os.WriteFile(f, []byte("garbage"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ReadCheckpointWeights(dir, c); err == nil {
		t.Error("a damaged checkpoint was read")
	}
	w, _ := p.Weights()
	if _, err := New(backendT(t), Options{Model: c, Loss: spec.DefaultLossConfig(), Optim: spec.DefaultOptimConfig(), Init: w[1:]}); err == nil || !strings.Contains(err.Error(), "weight arrays") {
		t.Errorf("short Init: %v", err)
	}
	w[0] = w[0][1:]
	if _, err := New(backendT(t), Options{Model: c, Loss: spec.DefaultLossConfig(), Optim: spec.DefaultOptimConfig(), Init: w}); err == nil || !strings.Contains(err.Error(), "embed/tok") {
		t.Errorf("wrong-sized Init: %v", err)
	}
}

// The cross-entropy objective is −Σ w·log π(target), computed by hand from LogProbs, and
// minimising it raises the log-probability of the targets.
func TestCrossEntropyObjective(t *testing.T) {
	c := smallConfig()
	l := spec.DefaultLossConfig()
	l.Objective = spec.ObjectiveCrossEntropy
	p := newTestPolicy(t, c, l)
	tb := SyntheticBatch(c, 3, 10, 2)
	nll := func() float64 {
		lp, _, err := p.LogProbs(tb)
		if err != nil {
			t.Fatal(err)
		}
		s := 0.0
		for i, w := range tb.Weight {
			s -= float64(w) * float64(lp[i])
		}
		return s
	}
	before := nll()
	st, err := p.Update(tb, 1e-2)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(st.Loss-before) > 1e-5*(1+before) || st.PGLoss != st.Loss {
		t.Fatalf("loss %g (pg %g), want the hand-computed −Σ w·log π = %g", st.Loss, st.PGLoss, before)
	}
	if st.ClipFrac != 0 || st.ApproxKL != 0 {
		t.Errorf("clip fraction %g, approx KL %g: the cross-entropy has neither", st.ClipFrac, st.ApproxKL)
	}
	for range 30 {
		if _, err := p.Update(tb, 1e-2); err != nil {
			t.Fatal(err)
		}
	}
	if after := nll(); after > 0.5*before {
		t.Errorf("cross-entropy %g → %g after 31 steps on one batch: not minimised", before, after)
	}
}
