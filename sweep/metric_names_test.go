package sweep

import (
	"errors"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/compare"
	"github.com/graftrl/graftrl/config"
)

// A misspelt compare.metric or tune.metric is refused when the sweep config is read, before
// any run trains: a *config.Error naming the key, the value, the closest name and the names
// allowed. Every name a run writes is accepted.
func TestMetricNamesCheckedAtLoad(t *testing.T) {
	const tune = "tune: {key: optim.lr, values: [0.001, 0.002], seeds: [101]"
	for _, tc := range []struct{ yaml, want, near string }{
		{tuneSweep + "compare: {metric: eval/sucess}\n", `compare.metric: "eval/sucess" is not a metric a run writes`, `did you mean "eval/success"?`},
		{tuneSweep + "compare: {metric: eval/heldout/greedy/sucess}\n", `compare.metric: "eval/heldout/greedy/sucess"`, `did you mean "eval/heldout/greedy/success"?`},
		{tuneSweep + "compare: {metric: success}\n", `compare.metric: "success" is not a metric a run writes`, "allowed: "},
		{tuneSweep + tune + ", metric: eval/heldout/greedy/sucess}\n", `tune.metric: "eval/heldout/greedy/sucess" is not a metric a run writes`, `did you mean "eval/heldout/greedy/success"?`},
		{tuneSweep + tune + ", metric: eval/heldout/succes}\n", `tune.metric: "eval/heldout/succes"`, `did you mean "eval/heldout/success"?`},
		// The rule reads evaluations: a train/ mean is a comparison's metric, not a tuning one.
		{tuneSweep + tune + ", metric: train/success}\n", `tune.metric: "train/success" is not a metric a run writes`, "allowed: eval/"},
	} {
		_, err := Parse("s.yaml", []byte(tc.yaml))
		var ce *config.Error
		if !errors.As(err, &ce) || ce.File != "s.yaml" || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.near) ||
			!strings.Contains(err.Error(), "eval/train/sampled/invalid_rate") {
			t.Errorf("%q:\nerror %v\nwant a config.Error of s.yaml with %q, %q and the allowed names", tc.yaml, err, tc.want, tc.near)
		}
	}
	for _, m := range compare.Metrics() {
		if _, err := Parse("s.yaml", []byte(tuneSweep+"compare: {metric: "+m+"}\n")); err != nil {
			t.Errorf("compare.metric %s: %v", m, err)
		}
	}
	for _, m := range compare.EvalMetrics() {
		if _, err := Parse("s.yaml", []byte(tuneSweep+tune+", metric: "+m+"}\n")); err != nil {
			t.Errorf("tune.metric %s: %v", m, err)
		}
	}
}
