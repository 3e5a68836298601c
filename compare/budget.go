package compare

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// BudgetError refuses a comparison whose runs in one environment trained for different env-step
// budgets: a method that saw more environment steps would be credited for it.
type BudgetError struct {
	// Env is the environment whose runs differ.
	Env string
	// Tolerance is the relative spread allowed, (max − min)/max.
	Tolerance float64
	// Runs are the environment's runs, smallest budget first.
	Runs []*Run
}

// Spread is (max − min)/max of the runs' budgets.
func (e *BudgetError) Spread() float64 { return budgetSpread(e.Runs) }

// Error lists every run of the environment with its budget.
func (e *BudgetError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "env %s: env-step budgets differ by %.1f %% (allowed %.1f %%); compare runs of equal budget, raise the tolerance or force:",
		e.Env, 100*e.Spread(), 100*e.Tolerance)
	for _, r := range e.Runs {
		fmt.Fprintf(&b, "\n  %-10s seed %-4d %12d env steps  %s", r.Method, r.Seed, r.EnvSteps, r.Dir)
	}
	return b.String()
}

func budgetSpread(runs []*Run) float64 {
	if len(runs) == 0 {
		return 0
	}
	lo, hi := runs[0].EnvSteps, runs[0].EnvSteps
	for _, r := range runs[1:] {
		lo, hi = min(lo, r.EnvSteps), max(hi, r.EnvSteps)
	}
	if hi == 0 {
		return 0
	}
	return float64(hi-lo) / float64(hi)
}

// CheckBudgets checks that, within each environment, every run's env-step budget (its final
// env_steps) lies within tolerance of the others: (max − min)/max ≤ tolerance. Tolerance 0
// demands equal budgets. The error joins one *BudgetError per offending environment (use
// errors.As to inspect it).
func CheckBudgets(runs []*Run, tolerance float64) error {
	if tolerance < 0 || math.IsNaN(tolerance) {
		return fmt.Errorf("budget tolerance %v must be ≥ 0", tolerance)
	}
	byEnv := map[string][]*Run{}
	for _, r := range runs {
		byEnv[r.Env] = append(byEnv[r.Env], r)
	}
	var errs []error
	for _, env := range sortedKeys(byEnv) {
		rs := byEnv[env]
		if budgetSpread(rs) <= tolerance {
			continue
		}
		sorted := append([]*Run(nil), rs...)
		sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].EnvSteps < sorted[j].EnvSteps })
		errs = append(errs, &BudgetError{Env: env, Tolerance: tolerance, Runs: sorted})
	}
	return errors.Join(errs...)
}
