package compare

import (
	"slices"
	"strings"
	"testing"
)

// The metric names: every eval key a run writes and the train/ means, a misspelling refused
// with its closest name and the whole list, a name far from all of them with the list alone.
func TestCheckMetric(t *testing.T) {
	evals := EvalMetrics()
	if len(evals) != 26 || !slices.IsSorted(evals) || !slices.Contains(evals, DefaultMetric) ||
		!slices.Contains(evals, "eval/heldout/sampled/invalid_rate") || !slices.Contains(evals, "eval/train/greedy/errors") {
		t.Errorf("EvalMetrics() = %q", evals)
	}
	all := Metrics()
	if len(all) != 29 || !slices.IsSorted(all) || !slices.Contains(all, "train/success") || !slices.Contains(all, "train/return") {
		t.Errorf("Metrics() = %q", all)
	}
	for _, m := range all {
		if err := CheckMetric(m, all); err != nil {
			t.Errorf("%s: %v", m, err)
		}
	}
	for _, tc := range []struct{ name, want string }{
		{"eval/sucess", `"eval/sucess" is not a metric a run writes; did you mean "eval/success"? (allowed: eval/heldout/greedy/errors, `},
		{"eval/heldout/greedy/succes", `did you mean "eval/heldout/greedy/success"?`},
		{"eval/train/sampled/turn", `did you mean "eval/train/sampled/turns"?`},
		{"train/sucess", `did you mean "train/success"?`},
		{"accuracy", `"accuracy" is not a metric a run writes (allowed: eval/heldout/greedy/errors, `},
	} {
		err := CheckMetric(tc.name, all)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "train/turns)") {
			t.Errorf("%s: %v; want %q and the list", tc.name, err, tc.want)
		}
	}
	if err := CheckMetric("train/success", evals); err == nil {
		t.Error("train/success accepted among the eval metrics")
	}
}
