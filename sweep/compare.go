package sweep

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/graftrl/graftrl/compare"
)

// CompareRuns loads the sweep's runs for a comparison, relabelled with the sweep's env and
// method names (so that variants of one estimator, or one env with different options, stay
// apart). Runs that are not finished are an error naming them; with partial they are left out
// and returned as skipped. Cancelling ctx stops the reading with an error wrapping
// compare.ErrInterrupted.
func CompareRuns(ctx context.Context, dir string, m *Manifest, partial bool) (runs []*compare.Run, skipped []string, err error) {
	var dirs []string
	var keep []*Run
	var unfinished []string
	for i := range m.Runs {
		r := &m.Runs[i]
		st := Check(dir, r, "")
		if st.State != Finished {
			msg := fmt.Sprintf("%s (%s", r.Name, st.State)
			if st.Detail != "" {
				msg += ": " + st.Detail
			}
			unfinished = append(unfinished, msg+")")
			skipped = append(skipped, r.Name)
			continue
		}
		dirs = append(dirs, filepath.Join(dir, r.RunPath()))
		keep = append(keep, r)
	}
	if len(unfinished) > 0 && !partial {
		finish := "graftrl sweep"
		if _, err := os.Stat(filepath.Join(dir, TuneFile)); err == nil {
			finish = "graftrl study" // a study with a selection: graftrl sweep refuses its config
		}
		return nil, nil, fmt.Errorf("sweep %s: %d of %d runs are not finished: %s; finish them (%s --config %s) or compare the finished ones with --partial",
			m.Name, len(unfinished), len(m.Runs), strings.Join(unfinished, "; "), finish, m.SweepConfig)
	}
	if len(dirs) == 0 {
		return nil, skipped, fmt.Errorf("sweep %s: no run is finished yet", m.Name)
	}
	runs, err = compare.LoadRunsContext(ctx, dirs)
	if err != nil {
		return nil, nil, err
	}
	for i, r := range runs {
		r.Env, r.Method = keep[i].Env, keep[i].Method
	}
	return runs, skipped, nil
}

// CompareOptions are the comparison options of the sweep's compare section.
func (m *Manifest) CompareOptions() compare.Options {
	c := m.Compare
	o := compare.Options{Metric: c.Metric, Baseline: c.Baseline, Final: c.Final, BudgetTolerance: c.BudgetTol,
		Force: c.Force, Title: c.Title, Holm: c.Holm}
	if o.Final == "" {
		o.Final = compare.FinalCommonBudget
	}
	return o
}

// Title is the default report title of a comparison of the sweep's runs.
func (m *Manifest) Title(runs []*compare.Run, metric string) string {
	if metric == "" {
		metric = compare.DefaultMetric
	}
	var methods, envs []string
	for _, r := range runs {
		if !slices.Contains(methods, r.Method) {
			methods = append(methods, r.Method)
		}
		if !slices.Contains(envs, r.Env) {
			envs = append(envs, r.Env)
		}
	}
	return fmt.Sprintf("Sweep %s: %s on %s (%s)", m.Name, strings.Join(methods, " vs "), strings.Join(envs, ", "), metric)
}

// Levels places the sweep's envs on its bases' difficulty axes, with their bases' warm-start
// targets (waste_target); nil when the bases name none.
func (m *Manifest) Levels() *compare.Levels {
	var lv *compare.Levels
	for _, r := range m.Runs {
		if len(r.Levels) == 0 {
			continue
		}
		if lv == nil {
			lv = &compare.Levels{Of: map[string][]string{}}
			for _, l := range r.Levels {
				k, _, _ := strings.Cut(l, "=")
				lv.Axes = append(lv.Axes, k)
			}
		}
		vals := make([]string, len(r.Levels))
		for i, l := range r.Levels {
			_, vals[i], _ = strings.Cut(l, "=")
		}
		lv.Of[r.Env] = vals
		if r.WasteTarget != nil {
			if lv.WasteTarget == nil {
				lv.WasteTarget = map[string]float64{}
			}
			lv.WasteTarget[r.Env] = *r.WasteTarget
		}
	}
	return lv
}

// Notes explain a sweep comparison to the reader of its report: where the runs come from,
// how their budgets were fixed and read, and how many tokens each method trained on.
func (m *Manifest) Notes(runs []*compare.Run, opts compare.Options, skipped []string) []string {
	var notes []string
	var seeds []string
	var budgets []int64
	for _, r := range m.Runs {
		if s := fmt.Sprint(r.Seed); !slices.Contains(seeds, s) {
			seeds = append(seeds, s)
		}
		if !slices.Contains(budgets, r.EnvSteps) {
			budgets = append(budgets, r.EnvSteps)
		}
	}
	if len(m.Bases) > 1 {
		notes = append(notes, fmt.Sprintf("Sweep %s: %d runs from %s (base configs %s, one per environment), seeds %s. Every run trained in its own process from its environment's base config; only the grid values differ.",
			m.Name, len(m.Runs), m.SweepConfig, strings.Join(m.Bases, ", "), strings.Join(seeds, ", ")))
	} else {
		notes = append(notes, fmt.Sprintf("Sweep %s: %d runs from %s (base config %s), seeds %s. Every run trained in its own process from the same base config; only the grid values differ.",
			m.Name, len(m.Runs), m.SweepConfig, m.Base, strings.Join(seeds, ", ")))
	}
	if len(skipped) > 0 {
		notes = append(notes, fmt.Sprintf("Partial comparison: %d unfinished run(s) left out (%s).", len(skipped), strings.Join(skipped, ", ")))
	}
	budget := "an iteration cap and no env-step budget"
	if len(budgets) == 1 && budgets[0] > 0 {
		budget = fmt.Sprintf("the same budget of %d environment steps (env_steps)", budgets[0])
	} else if len(budgets) > 1 {
		budget = fmt.Sprintf("env-step budgets %v", budgets)
	}
	lo, hi := int64(-1), int64(0)
	for _, r := range runs {
		if lo < 0 || r.EnvSteps < lo {
			lo = r.EnvSteps
		}
		hi = max(hi, r.EnvSteps)
	}
	notes = append(notes, fmt.Sprintf("Equal budgets: every run had %s. The trainer stops after the iteration that reaches the budget, so runs end a little past it, by less than one iteration (here between %d and %d env steps).",
		budget, lo, hi))
	if opts.Final == compare.FinalCommonBudget {
		notes = append(notes, "Final scores are read at the common budget: each run's learning curve (its evaluations against env steps) is read at the smallest end budget of its environment, interpolating linearly between the two evaluations around it, so every method is scored at exactly the same number of environment steps and none is credited for overshooting.")
	} else {
		notes = append(notes, "Final scores are each run's last evaluation; the runs' end budgets must agree within the budget tolerance (compare refuses otherwise unless forced).")
	}
	var tok []string
	byMethod := map[string][]int64{}
	var methods []string
	for _, r := range runs {
		if _, ok := byMethod[r.Method]; !ok {
			methods = append(methods, r.Method)
		}
		byMethod[r.Method] = append(byMethod[r.Method], r.Tokens)
	}
	for _, meth := range methods {
		ts := byMethod[meth]
		var sum int64
		for _, t := range ts {
			sum += t
		}
		tok = append(tok, fmt.Sprintf("%s %d–%d (mean %d)", meth, slices.Min(ts), slices.Max(ts), sum/int64(len(ts))))
	}
	oneToken := true
	for _, r := range runs {
		oneToken = oneToken && r.Tokens == r.EnvSteps
	}
	tokNote := "The budget is fixed in environment steps; a method whose actions take more or fewer tokens sees as many steps but more or fewer tokens."
	if oneToken {
		tokNote = "Here every action is one token, so tokens equal env steps."
	}
	notes = append(notes, "Tokens trained on (action tokens that entered the update, at the end of each run): "+strings.Join(tok, "; ")+". "+tokNote)
	return notes
}
