package policy

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/policy/spec"
)

// padBatch lays a [2,3] array into the corner of a [3,4] one, zeros elsewhere; unpad takes it back.
func TestPadBatch(t *testing.T) {
	b := &TrainBatch{Rows: 2, Len: 3, Tokens: []int32{1, 2, 3, 4, 5, 6}, Targets: []int32{1, 1, 1, 2, 2, 2},
		OldLogp: []float32{1, 2, 3, 4, 5, 6}, Adv: []float32{1, 2, 3, 4, 5, 6}, Weight: []float32{0, 0.5, 0.5, 0, 0, 1},
		Steps: 1, StepOf: []int32{-1, 0, 0, -1, -1, 0}, StepAdv: []float32{7, 8}, StepWeight: []float32{0.5, 0.5}}
	p := padBatch(b, 3, 4, 2)
	if p.Rows != 3 || p.Len != 4 || p.Steps != 2 {
		t.Fatalf("padded shape %d×%d, %d steps", p.Rows, p.Len, p.Steps)
	}
	if want := []int32{1, 2, 3, 0, 4, 5, 6, 0, 0, 0, 0, 0}; !slices.Equal(p.Tokens, want) {
		t.Errorf("tokens %v, want %v", p.Tokens, want)
	}
	if want := []float32{0, 0.5, 0.5, 0, 0, 0, 1, 0, 0, 0, 0, 0}; !slices.Equal(p.Weight, want) {
		t.Errorf("weights %v, want %v", p.Weight, want)
	}
	if want := []float32{7, 0, 8, 0, 0, 0}; !slices.Equal(p.StepAdv, want) {
		t.Errorf("step advantages %v, want %v", p.StepAdv, want)
	}
	if p.RefLogp != nil {
		t.Error("an absent array was padded")
	}
	if got := unpad([]float32{1, 2, 3, 0, 4, 5, 6, 0, 0, 0, 0, 0}, 2, 3, 4); !slices.Equal(got, []float32{1, 2, 3, 4, 5, 6}) {
		t.Errorf("unpad %v", got)
	}
	if padBatch(b, 2, 3, 1) != b {
		t.Error("a batch already of the shape was copied")
	}
}

// Bucketed shapes change no number that matters: on the go backend, a policy that pads every
// minibatch as an xla backend does (rows 5 → 8, length 11 → 12 = max_len, steps 3 → 8) gives the
// loss, statistics, log-probs and entropies of the exact-shape policy within float32 rounding, for
// the token and the step objective, and after three updates the same weights; it meets one shape
// per executable. The policy New builds on the go backend is the exact-shape one: its update reads
// the tokens as they come ([5 11]), not padded to rows 8 (a single-row minibatch of a language
// model would otherwise cost eight rows' forward and backward passes).
func TestBucketedShapesAreNeutral(t *testing.T) {
	for _, objective := range []string{spec.ObjectiveToken, spec.ObjectiveStep} {
		c := smallConfig()
		l := spec.DefaultLossConfig()
		l.Objective = objective
		exact, padded := newTestPolicy(t, c, l), newTestPolicy(t, c, l)
		padded.bucketed = true
		b := SyntheticBatch(c, 5, 11, 4)
		if objective == spec.ObjectiveStep {
			b.Steps = 3
			b.StepOf = make([]int32, b.Rows*b.Len)
			b.StepAdv, b.StepWeight = make([]float32, b.Rows*3), make([]float32, b.Rows*3)
			for i := range b.StepOf {
				b.StepOf[i] = -1
				if b.Weight[i] > 0 {
					b.StepOf[i] = int32(i % b.Len * 3 / b.Len)
				}
			}
			for i := range b.StepAdv {
				b.StepAdv[i], b.StepWeight[i] = b.Adv[i], 1/float32(len(b.StepAdv))
			}
		}
		lpE, entE, err := exact.LogProbs(b)
		if err != nil {
			t.Fatal(err)
		}
		lpP, entP, err := padded.LogProbs(b)
		if err != nil {
			t.Fatal(err)
		}
		closeSlices(t, objective+" log-probs", lpP, lpE, 1e-5)
		closeSlices(t, objective+" entropies", entP, entE, 1e-5)
		for k := range 3 {
			se, err := exact.Update(b, 1e-2)
			if err != nil {
				t.Fatal(err)
			}
			sp, err := padded.Update(b, 1e-2)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range [][2]float64{{sp.Loss, se.Loss}, {sp.PGLoss, se.PGLoss}, {sp.Entropy, se.Entropy}, {sp.GradNorm, se.GradNorm}, {sp.ClipFrac, se.ClipFrac}} {
				if math.Abs(f[0]-f[1]) > 1e-5*(1+math.Abs(f[1])) {
					t.Errorf("%s update %d: padded %v, exact %v", objective, k, f[0], f[1])
				}
			}
			closeSlices(t, objective+" update log-probs", sp.LogProbs, se.LogProbs, 1e-5)
		}
		we, _ := exact.Weights()
		wp, _ := padded.Weights()
		for i := range we {
			closeSlices(t, objective+" weights", wp[i], we[i], 1e-5)
		}
		for k := range exact.shapesSeen {
			if strings.HasPrefix(k, "train|") && !strings.Contains(k, "[5 11]") {
				t.Errorf("%s: the go backend's policy padded its update's tokens: %s", objective, k)
			}
		}
		if n := padded.Compilations().Count; n != 2 {
			t.Errorf("%s: the padded policy met %d shapes, want 2 (log-probs and update)", objective, n)
		}
	}
}

func closeSlices(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Abs(float64(got[i]-want[i])) > tol*(1+math.Abs(float64(want[i]))) {
			t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}
