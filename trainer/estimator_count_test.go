package trainer

import (
	"context"
	"io"
	"sync/atomic"
	"testing"

	"github.com/graftrl/graftrl/advantage"
	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/grpo"
)

// countingBuilds counts the constructions of the "counting" estimator, GRPO registered under
// another name in this test binary only.
var countingBuilds atomic.Int32

func init() {
	advantage.Register("counting", "GRPO whose constructions are counted (trainer tests)", true,
		grpo.DefaultOptions, func(o grpo.Options) (advantage.Estimator, error) {
			countingBuilds.Add(1)
			return grpo.New(o)
		})
}

// One train builds its estimator once: parsing and validating the config (twice, as a command
// and the trainer may) check its options without building it, trainer.New builds it, and the
// iterations reuse it.
func TestEstimatorBuiltOncePerTrain(t *testing.T) {
	countingBuilds.Store(0)
	cfg := tinyConfig(t, t.TempDir(), "estimator.name=counting", "estimator.eps=0.001", "iterations=2")
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := config.Parse("bad.yaml", []byte(tinyYAML), []string{"estimator.name=counting", "estimator.eps=0"}); err == nil {
		t.Error("estimator.eps=0 accepted")
	}
	if n := countingBuilds.Load(); n != 0 {
		t.Fatalf("validating the config built the estimator %d times", n)
	}
	tr, err := New(cfg, Options{Out: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := countingBuilds.Load(); n != 1 {
		t.Errorf("one train built the estimator %d times, want 1", n)
	}
}
