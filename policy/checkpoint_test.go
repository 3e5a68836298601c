package policy

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/policy/spec"
)

// A checkpoint restores every variable exactly: weights, Adam moments and step, so a loaded
// policy takes the very same next update as the one that was saved.
func TestSaveLoadExact(t *testing.T) {
	c := benchConfig()
	c.MaxLen = 32
	l := spec.DefaultLossConfig()
	l.KL = spec.KLk3
	tb := SyntheticBatch(c, 4, 16, 1)
	tb.RefLogp = make([]float32, len(tb.Tokens))
	p, dir := savedPolicy(t, c, l, tb)
	q, err := New(backendT(t), Options{Model: c, Loss: l, Optim: spec.DefaultOptimConfig(), Seed: 99})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Load(dir); err != nil {
		t.Fatal(err)
	}
	wp, _ := p.Weights()
	wq, _ := q.Weights()
	if !reflect.DeepEqual(wp, wq) {
		t.Fatal("loaded weights differ from the saved ones")
	}
	sp, err := p.Update(tb, 1e-2)
	if err != nil {
		t.Fatal(err)
	}
	sq, err := q.Update(tb, 1e-2)
	if err != nil {
		t.Fatal(err)
	}
	wp, _ = p.Weights()
	wq, _ = q.Weights()
	if sp.Loss != sq.Loss || sp.GradNorm != sq.GradNorm || !reflect.DeepEqual(wp, wq) {
		t.Fatalf("the next update differs after loading (loss %g vs %g): Adam state or reference not restored", sp.Loss, sq.Loss)
	}
	// A checkpoint of another architecture is refused.
	c2 := c
	c2.DModel = 32
	r, err := New(backendT(t), Options{Model: c2, Loss: l, Optim: spec.DefaultOptimConfig(), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Load(dir); err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("loading a d_model 64 checkpoint into d_model 32: %v", err)
	}
}

// savedPolicy builds a policy, takes three Adam steps on tb and saves it; it returns the policy
// and the checkpoint directory.
func savedPolicy(t *testing.T, c Config, l LossConfig, tb *TrainBatch) (*Policy, string) {
	t.Helper()
	p := newTestPolicy(t, c, l)
	for range 3 {
		if _, err := p.Update(tb, 1e-2); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "ckpt")
	if err := p.Save(dir); err != nil {
		t.Fatal(err)
	}
	return p, dir
}
