package trainer

import (
	"math"
	"reflect"
	"testing"

	"github.com/graftrl/graftrl/policy/spec"
	"github.com/graftrl/graftrl/rollout"
)

// makeTrainBatch shifts targets by one, takes old log-probs and advantages from the target token's
// step, pads rows and length to their buckets, and weights only action targets.
func TestMakeTrainBatchLayout(t *testing.T) {
	row := &rollout.Row{
		Tokens:  []int32{1, 7, 2, 9, 3, 11, 4, 8, 3, 12, 4},
		LogProb: []float32{0, 0, 0, 0, 0, -0.5, -0.1, 0, 0, -0.7, -0.2},
		StepOf:  []int16{-1, -1, -1, -1, -1, 0, 0, -1, -1, 1, 1},
	}
	adv := []float64{0.5, -2}
	tb := makeTrainBatch([]trainRow{{row: row, adv: adv}}, spec.DefaultLossConfig(), 128, 12, true)
	if tb.Rows != 8 || tb.Len != 16 {
		t.Fatalf("shape %d×%d, want 8×16 (buckets)", tb.Rows, tb.Len)
	}
	wantTok := []int32{1, 7, 2, 9, 3, 11, 4, 8, 3, 12, 0, 0, 0, 0, 0, 0}
	wantTgt := []int32{7, 2, 9, 3, 11, 4, 8, 3, 12, 4, 0, 0, 0, 0, 0, 0}
	if !reflect.DeepEqual(tb.Tokens[:16], wantTok) || !reflect.DeepEqual(tb.Targets[:16], wantTgt) {
		t.Fatalf("tokens %v\ntargets %v", tb.Tokens[:16], tb.Targets[:16])
	}
	// Targets 11 and 4 (positions 4, 5) belong to step 0; 12 and 4 (positions 8, 9) to step 1.
	for i := range 16 {
		wantW, wantA, wantOld := 0.0, 0.0, 0.0
		switch i {
		case 4, 5:
			wantW, wantA, wantOld = 0.25, 0.5, []float64{-0.5, -0.1}[i-4]
		case 8, 9:
			wantW, wantA, wantOld = 0.25, -2, []float64{-0.7, -0.2}[i-8]
		}
		if math.Abs(float64(tb.Weight[i])-wantW) > 1e-7 || float64(tb.Adv[i]) != wantA || math.Abs(float64(tb.OldLogp[i])-wantOld) > 1e-7 {
			t.Errorf("position %d: weight %g adv %g old %g; want %g %g %g", i, tb.Weight[i], tb.Adv[i], tb.OldLogp[i], wantW, wantA, wantOld)
		}
	}
	for i := 16; i < len(tb.Weight); i++ {
		if tb.Weight[i] != 0 {
			t.Fatalf("padding row position %d has weight %g", i, tb.Weight[i])
		}
	}

	// The step objective: per-row step indices and one weight per step, averaged over steps.
	l := spec.DefaultLossConfig()
	l.Objective = spec.ObjectiveStep
	tb = makeTrainBatch([]trainRow{{row: row, adv: adv}}, l, 128, 3, true)
	wantStep := []int32{-1, -1, -1, -1, 0, 0, -1, -1, 1, 1, -1, -1, -1, -1, -1, -1}
	if !reflect.DeepEqual(tb.StepOf[:16], wantStep) {
		t.Fatalf("step_of %v", tb.StepOf[:16])
	}
	if !reflect.DeepEqual(tb.StepAdv[:3], []float32{0.5, -2, 0}) || !reflect.DeepEqual(tb.StepWeight[:3], []float32{0.5, 0.5, 0}) {
		t.Fatalf("step adv %v weight %v", tb.StepAdv[:3], tb.StepWeight[:3])
	}
}

func TestBuckets(t *testing.T) {
	for _, c := range []struct{ n, max, want int }{{1, 128, 16}, {16, 128, 16}, {17, 128, 32}, {125, 128, 128}, {130, 128, 128}} {
		if got := bucketLen(c.n, c.max); got != c.want {
			t.Errorf("bucketLen(%d) = %d, want %d", c.n, got, c.want)
		}
	}
	for _, c := range []struct{ n, want int }{{1, 8}, {9, 16}, {64, 64}, {65, 80}, {257, 320}} {
		if got := bucketRows(c.n); got != c.want {
			t.Errorf("bucketRows(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}
