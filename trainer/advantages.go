package trainer

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/gonum/stat"

	"github.com/graftrl/graftrl/grpo"
	"github.com/graftrl/graftrl/rollout"
)

// EstimatorRun names an estimator and its options for CompareAdvantages.
type EstimatorRun struct {
	Name    string
	Options map[string]any
}

// ParseEstimatorRuns reads "grpo,gigpo,graft" plus options "graft.mode=td" into runs. An
// estimator may appear twice with a label: "graft:td" takes options "graft:td.mode=td".
func ParseEstimatorRuns(list string, opts []string) ([]EstimatorRun, []string, error) {
	var runs []EstimatorRun
	var labels []string
	index := map[string]int{}
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, nil, fmt.Errorf("--estimators %q: an empty name in the list (allowed: name or name:label, comma-separated; names: %s)",
				list, strings.Join(EstimatorNames(), ", "))
		}
		name, _, _ := strings.Cut(item, ":")
		if _, dup := index[item]; dup {
			return nil, nil, fmt.Errorf("--estimators: %q listed twice (label repeats as name:label)", item)
		}
		index[item] = len(runs)
		runs = append(runs, EstimatorRun{Name: name, Options: map[string]any{}})
		labels = append(labels, item)
	}
	if len(runs) == 0 {
		return nil, nil, fmt.Errorf("--estimators: empty list (allowed: %s)", strings.Join(EstimatorNames(), ", "))
	}
	for _, o := range opts {
		kv, value, ok := strings.Cut(o, "=")
		label, key, ok2 := strings.Cut(kv, ".")
		if !ok || !ok2 {
			return nil, nil, fmt.Errorf("--opt %q: expected estimator.key=value, e.g. graft.mode=td", o)
		}
		i, found := index[label]
		if !found {
			return nil, nil, fmt.Errorf("--opt %q: %q is not in --estimators", o, label)
		}
		runs[i].Options[key] = ParseScalar(value)
	}
	for i, r := range runs {
		if _, err := NewEstimator(r.Name, r.Options); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", labels[i], err)
		}
	}
	return runs, labels, nil
}

// ParseScalar reads a command-line value as a number or boolean when it is one, else a string.
func ParseScalar(s string) any {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return int(v)
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		return v
	}
	if v, err := strconv.ParseBool(s); err == nil {
		return v
	}
	return s
}

// AdvantageComparison holds several estimators' advantages on one frozen batch.
type AdvantageComparison struct {
	Labels []string
	Batch  *rollout.Batch
	Adv    []rollout.Advantages
	Diag   []rollout.Diagnostics
}

// CompareAdvantages runs every estimator on the same batch (errored episodes excluded).
func CompareAdvantages(b *rollout.Batch, runs []EstimatorRun, labels []string) (*AdvantageComparison, error) {
	valid := validTrajectories(b)
	c := &AdvantageComparison{Labels: labels, Batch: valid}
	for _, r := range runs {
		est, err := NewEstimator(r.Name, r.Options)
		if err != nil {
			return nil, err
		}
		a, d := est.Estimate(valid)
		c.Adv = append(c.Adv, a)
		c.Diag = append(c.Diag, d)
	}
	return c, nil
}

func (c *AdvantageComparison) flat(i int) []float64 {
	var out []float64
	for _, row := range c.Adv[i] {
		out = append(out, row...)
	}
	return out
}

// WriteSteps prints one line per step: task, trajectory, step, state key, action, reward,
// outcome, then each estimator's advantage. maxRows ≤ 0 prints all.
func (c *AdvantageComparison) WriteSteps(w io.Writer, maxRows int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "task\ttraj\tstep\tkey\taction\treward\toutcome\t%s\t\n", strings.Join(c.Labels, "\t"))
	n := 0
	for i := range c.Batch.Trajs {
		tr := &c.Batch.Trajs[i]
		for s, st := range tr.Steps {
			if maxRows > 0 && n >= maxRows {
				tw.Flush()
				fmt.Fprintf(w, "… (%d more steps; --rows 0 prints all)\n", c.Batch.NumSteps()-n)
				return
			}
			n++
			fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%q\t%.3g\t%.3g\t", tr.Task, i, s, st.Key, st.Action, st.Reward, tr.Outcome)
			for e := range c.Adv {
				fmt.Fprintf(tw, "%+.4f\t", c.Adv[e][i][s])
			}
			fmt.Fprintln(tw)
		}
	}
	tw.Flush()
}

// WriteSummary prints per-estimator statistics and pairwise agreement (Pearson correlation and
// the share of steps where the signs agree, counting 0 as its own sign).
func (c *AdvantageComparison) WriteSummary(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "estimator\tsteps\tmean\tstd\tzero share\tpositive share\t")
	flats := make([][]float64, len(c.Adv))
	for e := range c.Adv {
		flats[e] = c.flat(e)
		x := flats[e]
		mean, std := stat.PopMeanStdDev(x, nil)
		zero, pos := 0, 0
		for _, v := range x {
			if v == 0 {
				zero++
			} else if v > 0 {
				pos++
			}
		}
		nf := math.Max(float64(len(x)), 1)
		fmt.Fprintf(tw, "%s\t%d\t%+.4f\t%.4f\t%.3f\t%.3f\t\n", c.Labels[e], len(x), mean, std, float64(zero)/nf, float64(pos)/nf)
	}
	tw.Flush()
	if len(c.Adv) < 2 {
		return
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "pair\tpearson r\tsign agreement\t")
	for a := range c.Adv {
		for b := a + 1; b < len(c.Adv); b++ {
			r := math.NaN()
			if len(flats[a]) > 1 {
				r = stat.Correlation(flats[a], flats[b], nil)
			}
			agree := 0
			for i := range flats[a] {
				if grpo.Sign(flats[a][i]) == grpo.Sign(flats[b][i]) {
					agree++
				}
			}
			fmt.Fprintf(tw, "%s vs %s\t%.3f\t%.3f\t\n", c.Labels[a], c.Labels[b], r,
				float64(agree)/math.Max(float64(len(flats[a])), 1))
		}
	}
	tw.Flush()
}
