package trainer

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/graftrl/graftrl/rundir"
)

// The closing summary reads held-out first, each panel as start → final; a panel the start lacks
// shows its final value alone, a panel the run does not have is left out.
func TestGainSummary(t *testing.T) {
	start := Metrics{"eval/train/greedy/success": 0.0625, "eval/heldout/greedy/success": 0.03125}
	final := Metrics{"eval/train/greedy/success": 0.875, "eval/heldout/greedy/success": 0.53125}
	open := Metrics{"eval/heldout/greedy/success": 0.5}
	for _, tc := range []struct {
		name         string
		start, final Metrics
		want         string
	}{
		{"both panels", start, final, "greedy success held-out 0.031 → 0.531, train 0.062 → 0.875"},
		{"no start", nil, final, "greedy success held-out 0.531, train 0.875"},
		{"open training tasks", Metrics{"eval/heldout/greedy/success": 0.0}, open, "greedy success held-out 0.000 → 0.500"},
		{"no evaluation", start, nil, "no evaluation"},
	} {
		if got := GainSummary(tc.start, tc.final); got != tc.want {
			t.Errorf("%s: GainSummary = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// StartEval is the first line of metrics.jsonl when it is iteration 0's evaluation, and nil when
// the run has no such line (eval.at_start off) or no metrics file.
func TestStartEval(t *testing.T) {
	for _, tc := range []struct {
		name, metrics string
		want          any // eval/heldout/success of the line found; nil: none
	}{
		{"at start", `{"type":"eval","iter":0,"eval/heldout/success":0.25}` + "\n" +
			`{"type":"train","iter":1}` + "\n" + `{"type":"eval","iter":1,"eval/heldout/success":0.75}` + "\n", 0.25},
		{"at_start off", `{"type":"train","iter":1}` + "\n" + `{"type":"eval","iter":1,"eval/heldout/success":0.75}` + "\n", nil},
		{"empty", "", nil},
		{"no file", "-", nil},
	} {
		dir := t.TempDir()
		if tc.metrics != "-" {
			if err := os.WriteFile(filepath.Join(dir, rundir.MetricsFile), []byte(tc.metrics), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		m := StartEval(dir)
		if tc.want == nil {
			if m != nil {
				t.Errorf("%s: StartEval = %v, want nil", tc.name, m)
			}
			continue
		}
		if m == nil || m["eval/heldout/success"] != tc.want {
			t.Errorf("%s: StartEval = %v, want the iteration-0 line (held-out %v)", tc.name, m, tc.want)
		}
	}
}
