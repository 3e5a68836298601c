package compare

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
)

// A cancelled context (a stop signal) stops reading, computing and writing, each with an error
// wrapping ErrInterrupted, and leaves no report behind.
func TestCompareInterrupted(t *testing.T) {
	dirs := suite(t, t.TempDir(), []string{"maze"}, map[string]float64{"grpo": 0.5, "graft": 0.6}, 3)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := LoadRunsContext(ctx, dirs); !errors.Is(err, ErrInterrupted) {
		t.Errorf("LoadRunsContext: %v", err)
	}
	runs, err := LoadRuns(dirs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CompareContext(ctx, runs, Options{}); !errors.Is(err, ErrInterrupted) {
		t.Errorf("CompareContext: %v", err)
	}
	c, err := Compare(runs, Options{Bootstrap: Bootstrap{Resamples: 200}})
	if err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	if err := WriteReportContext(ctx, filepath.Join(parent, "report"), c); !errors.Is(err, ErrInterrupted) {
		t.Errorf("WriteReportContext: %v", err)
	}
	if got := list(t, parent); !slices.Equal(got, []string{"."}) {
		t.Errorf("an interrupted report left %q", got)
	}
}
