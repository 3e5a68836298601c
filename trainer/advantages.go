package trainer

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/gonum/stat"

	"github.com/graftrl/graftrl/advantage"
	"github.com/graftrl/graftrl/grpo"
	"github.com/graftrl/graftrl/rollout"
)

// EstimatorRun is one estimator of CompareAdvantages: its label in the comparison, its
// registered name and its options.
type EstimatorRun struct {
	Label   string
	Name    string
	Options map[string]any
}

// AdvantageComparison holds several estimators' advantages on one frozen batch.
type AdvantageComparison struct {
	Labels []string
	Batch  *rollout.Batch
	Adv    []rollout.Advantages
	Diag   []rollout.Diagnostics
}

// CompareAdvantages runs every estimator on the same batch (errored episodes excluded).
func CompareAdvantages(b *rollout.Batch, runs []EstimatorRun) (*AdvantageComparison, error) {
	valid := b.WithoutErrors()
	c := &AdvantageComparison{Batch: valid}
	for _, r := range runs {
		est, err := advantage.New(r.Name, r.Options)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.Label, err)
		}
		c.Labels = append(c.Labels, r.Label)
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
