package policy_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/gomlx/gomlx/backends"

	"github.com/graftrl/graftrl/policy"
	"github.com/graftrl/graftrl/policy/spec"
)

// xlaBackend2 is the XLA backend under test asked for two devices (the CPU plugin's
// cpu_device_count; a GPU plugin exposes the GPUs it finds).
var xlaBackend2 = sync.OnceValues(func() (backends.Backend, error) {
	return policy.NewBackend(policy.BackendOptions{Name: xlaName(), Devices: 2})
})

// twoDevices returns the one-device XLA backend and the two-device one, skipping when the
// plugin is not installed (as bothBackends) or exposes one device only (a one-GPU machine).
func twoDevices(t *testing.T) (one, two backends.Backend) {
	t.Helper()
	one, _ = bothBackends(t)
	two, err := xlaBackend2()
	if err != nil {
		t.Fatalf("%s with 2 devices: %v", xlaName(), err)
	}
	if two.NumDevices() < 2 {
		t.Skipf("%s exposes %d device(s) here", xlaName(), two.NumDevices())
	}
	return one, two
}

// stepFields fills the step objective's inputs: a row's action tokens form Steps steps of
// consecutive action positions, with advantages from the token advantages and equal weights.
func stepFields(b *policy.TrainBatch, steps int) {
	b.Steps = steps
	b.StepOf = make([]int32, b.Rows*b.Len)
	b.StepAdv = make([]float32, b.Rows*steps)
	b.StepWeight = make([]float32, b.Rows*steps)
	for r := range b.Rows {
		for i := range b.Len {
			b.StepOf[r*b.Len+i] = -1
			if b.Weight[r*b.Len+i] > 0 {
				b.StepOf[r*b.Len+i] = int32(i * steps / b.Len)
			}
		}
		for s := range steps {
			b.StepAdv[r*steps+s] = b.Adv[r*b.Len+s]
			b.StepWeight[r*steps+s] = 1 / float32(b.Rows*steps)
		}
	}
}

// An update split over two devices gives the loss, statistics, log-probs and gradients of the
// same update on one device, within xlaTol: for rows that split evenly, for an odd number of
// rows (the second device gets a padding row) with an empty row, the KL penalty and the
// per-sequence aggregation, and for the step objective. After three more updates the weights
// still agree.
func TestXLACPUDataParallel(t *testing.T) {
	one, two := twoDevices(t)
	c := xlaConfig()
	_, gob := bothBackends(t)
	w := trainedWeights(t, gob, c)
	cases := []struct {
		name  string
		rows  int
		setup func(o *policy.Options, b *policy.TrainBatch)
	}{
		{"token-mean, 6 rows", 6, func(*policy.Options, *policy.TrainBatch) {}},
		{"kl k3, seq-mean-token-mean, 5 rows, one empty", 5, func(o *policy.Options, b *policy.TrainBatch) {
			o.Loss.KL, o.Loss.KLCoef = spec.KLk3, 0.1
			o.Loss.Aggregation = spec.AggSeqMeanTokenMean
			mask := make([]bool, b.Rows*b.Len)
			for i := range mask {
				mask[i] = b.Weight[i] > 0 && i/b.Len != 2
			}
			b.Weight = spec.AggregationWeights(spec.AggSeqMeanTokenMean, mask, b.Rows, b.Len, 0)
			b.RefLogp = make([]float32, len(b.Tokens))
			for i := range b.RefLogp {
				b.RefLogp[i] = -3.9 + 0.01*float32(i%7)
				// A sampled action token is one the action mask allows (even ids here): a masked
				// target's log-prob of −1e9 would overflow the k3 estimate.
				b.Targets[i] &^= 1
			}
		}},
		{"step objective, 4 rows", 4, func(o *policy.Options, b *policy.TrainBatch) {
			o.Loss.Objective = spec.ObjectiveStep
			stepFields(b, 4)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := xlaOptions(c, w)
			tb := policy.SyntheticBatch(c, tc.rows, 24, 4)
			tc.setup(&o, tb)
			p1, err := policy.New(one, o)
			if err != nil {
				t.Fatal(err)
			}
			o.Devices = 2
			p2, err := policy.New(two, o)
			if err != nil {
				t.Fatal(err)
			}
			if p2.Devices() != 2 {
				t.Fatalf("policy on %d device(s), want 2", p2.Devices())
			}
			s1, err := p1.Update(tb, 1e-3)
			if err != nil {
				t.Fatal(err)
			}
			s2, err := p2.Update(tb, 1e-3)
			if err != nil {
				t.Fatal(err)
			}
			sameUpdate(t, "2 devices", "1 device", s2, s1, p2, p1)
			for range 3 {
				if _, err := p1.Update(tb, 1e-3); err != nil {
					t.Fatal(err)
				}
				if _, err := p2.Update(tb, 1e-3); err != nil {
					t.Fatal(err)
				}
			}
			w1, err := p1.Weights()
			if err != nil {
				t.Fatal(err)
			}
			w2, err := p2.Weights()
			if err != nil {
				t.Fatal(err)
			}
			worst := 0.0
			for i := range w1 {
				d, _ := maxAbsDiff(t, w2[i], w1[i])
				worst = max(worst, d)
			}
			t.Logf("weights after 4 updates: max |2 devices − 1 device| = %.3g", worst)
			if worst > xlaTol {
				t.Errorf("weights after 4 updates differ by %.3g (tolerance %g)", worst, xlaTol)
			}
			// Log-probs (device 0 alone) read the weights the split updates wrote.
			l1, _, err := p1.LogProbs(tb)
			if err != nil {
				t.Fatal(err)
			}
			l2, _, err := p2.LogProbs(tb)
			if err != nil {
				t.Fatal(err)
			}
			if d, _ := maxAbsDiff(t, l2, l1); d > xlaTol {
				t.Errorf("log-probs after the updates differ by %.3g", d)
			}
		})
	}
}

// Asking for more devices than the backend has is refused, naming the key.
func TestDevicesRefused(t *testing.T) {
	gob, err := goBackend()
	if err != nil {
		t.Fatal(err)
	}
	c := xlaConfig()
	for _, n := range []int{2, -1, spec.MaxDevices + 1} {
		o := xlaOptions(c, nil)
		o.Devices = n
		_, err := policy.New(gob, o)
		if err == nil || !strings.Contains(err.Error(), "policy.devices") {
			t.Errorf("devices %d on the go backend: error %v, want one naming policy.devices", n, err)
		}
	}
}
