package compare

import (
	"fmt"
	"slices"
	"strings"
)

// The parts of the eval metrics a run writes: the trainer evaluates each panel (the training
// panel and the held-out one) greedily, and also sampled with eval.sampled, and writes these
// statistics of each as eval/<panel>/<decoding>/<statistic>.
var (
	evalPanels     = []string{"train", "heldout"}
	evalDecodings  = []string{"greedy", "sampled"}
	evalStatistics = []string{"success", "return", "turns", "invalid_rate", "truncated", "errors"}
)

// EvalMetrics are the names of the metrics a run's eval lines carry in metrics.jsonl, sorted:
// eval/<panel>/<decoding>/<statistic> for panels train and heldout, decodings greedy and
// sampled, statistics success, return, turns, invalid_rate, truncated and errors, and the two
// short names eval/success (the compared default) and eval/heldout/success. A run has the
// training panel's only with a training panel (not with tasks.train: open) and the sampled ones
// only with eval.sampled; the names are the same for every run.
//
// The list is kept here, not read from the trainer, because compare and sweep build without
// GoMLX; a test of cmd/graftrl trains a run and checks its eval lines against it.
func EvalMetrics() []string {
	names := []string{DefaultMetric, "eval/heldout/success"}
	for _, p := range evalPanels {
		for _, d := range evalDecodings {
			for _, s := range evalStatistics {
				names = append(names, "eval/"+p+"/"+d+"/"+s)
			}
		}
	}
	slices.Sort(names)
	return names
}

// Metrics are the names a comparison's metric may take, sorted: EvalMetrics, and the train
// metrics an eval point carries under TrainPrefix (train/success, train/turns, train/return).
func Metrics() []string {
	names := EvalMetrics()
	for _, k := range trainMetrics() {
		names = append(names, TrainPrefix+k)
	}
	slices.Sort(names)
	return names
}

// CheckMetric refuses a metric name that is not among allowed (Metrics or EvalMetrics), naming
// it with the closest allowed name and the whole list, so that a misspelt metric is found before
// any run trains rather than when the runs are read back.
func CheckMetric(name string, allowed []string) error {
	if slices.Contains(allowed, name) {
		return nil
	}
	msg := fmt.Sprintf("%q is not a metric a run writes", name)
	if near := closest(name, allowed); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	return fmt.Errorf("%s (allowed: %s)", msg, strings.Join(allowed, ", "))
}

// closest is the name of names nearest to s in edit distance, when it is near enough to be a
// misspelling of it (at most a third of its length away); "" otherwise.
func closest(s string, names []string) string {
	best, bestD := "", len(s)/3+1
	for _, n := range names {
		if d := editDistance(s, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
