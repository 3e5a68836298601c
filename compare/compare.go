package compare

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/graftrl/graftrl/rundir"
)

// Final-score rules (Options.Final).
const (
	// FinalLast takes each run's last evaluation; the budget check applies.
	FinalLast = "last"
	// FinalCommonBudget reads each run's curve at its environment's common budget (the smallest
	// last-evaluation env-step count among the environment's runs), interpolating linearly
	// between the two evaluations around it. Budgets are then equal by construction.
	FinalCommonBudget = "common-budget"
)

// Options configure a comparison. The zero value compares greedy training-panel success
// (eval/success) at the last evaluation, against grpo when present, with exact equal budgets.
type Options struct {
	// Metric is the eval metric compared (default DefaultMetric, "eval/success").
	Metric string
	// Baseline is the method every other is tested against (default "grpo" when present, else
	// the first method in alphabetical order).
	Baseline string
	// Final is FinalLast (default) or FinalCommonBudget.
	Final string
	// Ranges normalise each environment's scores for the aggregate; an environment without an
	// entry uses [0, 1], right for success rates (the default metric) and wrong for returns.
	Ranges map[string]Range
	// Bootstrap configures the confidence intervals (default 2000 resamples, 95 %, seed 0).
	// Each statistic of each cell draws from its own generator, seeded from Bootstrap.Seed and
	// the statistic's, environment's and method's names, so adding a method or an environment
	// leaves the other intervals unchanged.
	Bootstrap Bootstrap
	// BudgetTolerance is the relative budget spread allowed within an environment,
	// (max − min)/max (default 0: equal budgets).
	BudgetTolerance float64
	// Force compares runs whose budgets differ; the report then says so in a warning.
	Force bool
	// CurvePoints is the number of env-step budgets on each environment's learning-curve grid
	// (default 50).
	CurvePoints int
	// ProfilePoints is the number of thresholds τ of the performance profile (default 101).
	ProfilePoints int
	// Title heads the report (default "Comparison: <metric>").
	Title string
	// Notes are paragraphs the report shows under a Notes heading after its opening line, for
	// what the caller knows about the runs (how a sweep fixed their budgets, for example).
	Notes []string
	// Levels, when given, places environments on difficulty axes: the report then shows the
	// paired differences along them (levels.csv, the levels figure).
	Levels *Levels
	// Holm is the family of Holm's correction of the paired tests: HolmEnv (default: within
	// each environment and measure) or HolmFamily (once per measure over every environment's
	// and method's comparison with the baseline).
	Holm string
}

// Comparison holds every number of a comparison; WriteReport renders it.
type Comparison struct {
	// Options are the options used, defaults filled in.
	Options Options
	// Envs are the environments, sorted.
	Envs []string
	// Methods are the methods, the baseline first and the others sorted.
	Methods []string
	// Runs are the runs compared.
	Runs []*Run
	// Cells are the per-environment results, env-major in Envs × Methods order (a method
	// absent from an environment has no cell).
	Cells []Cell
	// Aggregate has one row per method, over the environments it ran on.
	Aggregate []AggregateRow
	// Curves are the learning curves, one per environment and method.
	Curves []Curve
	// Profiles are the aggregate performance profiles, one per method.
	Profiles []Profile
	// Rankings are the methods ordered by IQM in each environment and over all (last), with
	// the probability of improvement of every pair.
	Rankings []Ranking
	// Protocol describes how the runs were trained and evaluated.
	Protocol Protocol
	// Configs are the distinct run configurations (name and seed left out).
	Configs []ConfigGroup
	// ConfigDiff lists the keys whose values differ between Configs.
	ConfigDiff []ConfigDiffRow
	// finals are the runs' final scores.
	finals map[*Run]float64
	// Pairs are the seed pairs: each run of a method with the baseline's run of the same
	// environment, seed and initial weights.
	Pairs []SeedPair
	// Paired are the paired differences against the baseline: per measure (final, gain), per
	// environment and over all (AllEnvs), one row per method.
	Paired []PairedRow
	// NoPairs says why there is no paired table ("" when there is one).
	NoPairs string
	// Levels are the environments Options.Levels places on its axes, in axis order, with
	// their paired differences (none without Options.Levels).
	Levels []LevelRow
	// Unpaired names the runs left out of the paired tables, and why.
	Unpaired []string
	// Variance is the variance decomposition (method × seed) of each environment with at least
	// two methods and two fully paired seeds.
	Variance []VarianceRow
	// Gains are the gains over the start: per cell, then per method over all environments
	// (Env AllEnvs, normalised).
	Gains []GainRow
	// NoStart names the runs without an evaluation before training, left out of Gains.
	NoStart []string
	// StepSizes are the step-size diagnostics of every cell (the updates' advantage scale,
	// gradient norm, approximate KL, clip fraction and weight change), env-major; none when no
	// run logged any.
	StepSizes []StepSizeRow
	// Slopes are the trends of the paired differences along the first levels axis, one per
	// panel and method (none without levels).
	Slopes []SlopeRow
	// Warnings are the caveats a reader must see (forced budgets, incomplete runs, unequal
	// seeds, mixed configs under one method, scores outside the normalisation range).
	Warnings []string
}

// Cell is one method in one environment.
type Cell struct {
	Env, Method string
	// Runs are the cell's runs, by seed.
	Runs []*Run
	// Scores are the final scores of Runs, in the same order.
	Scores []float64
	// BudgetMin and BudgetMax are the smallest and largest env-step budgets of the runs.
	BudgetMin, BudgetMax int64
	// Mean and Std are the mean and sample standard deviation (NaN for one run) of Scores.
	Mean, Std float64
	// Median is the median of Scores.
	Median float64
	// OptimalityGap is rliable's optimality gap of the normalised Scores: 1 − mean(min(x, 1)).
	OptimalityGap float64
	// IQM is the interquartile mean of Scores with its bootstrap interval.
	IQM Estimate
	// Improvement is P(this method > baseline) with its bootstrap interval (NaN for the baseline).
	Improvement Estimate
	// Welch is Welch's t-test of this method against the baseline (NaN for the baseline).
	Welch WelchResult
}

// N is the number of runs.
func (c *Cell) N() int { return len(c.Scores) }

// Seeds are the runs' seeds.
func (c *Cell) Seeds() []uint64 {
	s := make([]uint64, len(c.Runs))
	for i, r := range c.Runs {
		s[i] = r.Seed
	}
	return s
}

// AggregateRow is one method over all environments, on normalised scores.
type AggregateRow struct {
	Method string
	// Envs is the number of environments the method ran on; N its number of runs.
	Envs, N int
	// IQM is the IQM of the normalised final scores pooled over environments.
	IQM Estimate
	// Mean is the mean of the same scores.
	Mean Estimate
	// Median is rliable's aggregate median: the median over environments of the per-environment
	// mean normalised score.
	Median Estimate
	// OptimalityGap is rliable's optimality gap of the pooled normalised scores,
	// 1 − mean(min(x, 1)): lower is better.
	OptimalityGap Estimate
	// Improvement is P(method > baseline), averaged over the environments both ran on.
	Improvement Estimate
}

// Curve is a method's learning curve in one environment: per grid budget, the IQM across runs
// with its bootstrap band.
type Curve struct {
	Env, Method string
	// N is the number of runs.
	N int
	// EnvSteps is the environment's grid of budgets (shared by its methods).
	EnvSteps []float64
	// IQM is one estimate per grid budget.
	IQM []Estimate
}

// Profile is a method's aggregate performance profile: per threshold τ on normalised scores,
// the fraction of runs scoring above τ, with its bootstrap band.
type Profile struct {
	Method string
	Tau    []float64
	Frac   []Estimate
}

// EnvBudget is the range of env-step budgets in one environment.
type EnvBudget struct {
	Env string
	// Min and Max are the smallest and largest final env_steps of its runs.
	Min, Max int64
	// Common is the budget the final scores are read at under FinalCommonBudget (0 otherwise).
	Common int64
}

// Protocol is how the compared runs were trained and evaluated, as their configs say. Lists hold
// the distinct values over runs (one value when the protocol is uniform).
type Protocol struct {
	Metric string
	// Panel is "training panel" or "held-out panel"; Decoding is greedy or sampled.
	Panel, Decoding string
	// EvalEpisodes is the number of episodes per evaluation (the panel size: one per task).
	EvalEpisodes []int
	// Seeds are the run seeds; SeedsMin and SeedsMax the fewest and most runs in a cell.
	Seeds              []uint64
	SeedsMin, SeedsMax int
	Iterations         []int
	EvalEvery          []int
	GroupSize          []int
	PerIter            []int
	PanelSeed          []int64
	Budgets            []EnvBudget
	// Final says how final scores were read.
	Final string
}

// ErrInterrupted is wrapped by the error of a comparison stopped by its context (a stop
// signal): nothing of its report was written, and running it again starts it over.
var ErrInterrupted = errors.New("comparison interrupted")

// interrupted is the error of a comparison stopped by its context while doing what.
func interrupted(doing string) error {
	return fmt.Errorf("compare: %w while %s; no report was written", ErrInterrupted, doing)
}

// MaxMagnitude is the largest magnitude of a compared metric's value that a comparison takes.
// Its statistics square differences of scores and add the squares up (standard deviations,
// Welch's and the paired t-tests, the variance decomposition): beyond about 1e150 they overflow
// float64 to infinities, and then to NaN in the intervals and plots. Such a value is refused,
// naming its run, rather than turned into numbers that mean nothing.
const MaxMagnitude = 1e150

// Compare computes a comparison of runs on opts.Metric. Runs are grouped by environment and
// method. It refuses (with a *BudgetError, see CheckBudgets) runs whose budgets differ beyond
// the tolerance unless opts.Force, refuses two runs of one method and environment with the
// same seed (usually two variants sharing an estimator name: relabel Run.Method), and refuses a
// value of the metric beyond ±MaxMagnitude (a *LoadError naming the run's metrics.jsonl, the
// metric, the value and its iteration).
func Compare(runs []*Run, opts Options) (*Comparison, error) {
	return CompareContext(context.Background(), runs, opts)
}

// CompareContext is Compare that stops between its stages when ctx is cancelled, with an error
// wrapping ErrInterrupted.
func CompareContext(ctx context.Context, runs []*Run, opts Options) (*Comparison, error) {
	if len(runs) == 0 {
		return nil, errors.New("compare: no runs")
	}
	opts, err := resolveOptions(opts)
	if err != nil {
		return nil, err
	}
	if err := checkMagnitudes(runs, opts.Metric); err != nil {
		return nil, err
	}
	stage := func(run func() error) error {
		if ctx.Err() != nil {
			return interrupted("computing the statistics")
		}
		return run()
	}
	c := &Comparison{Options: opts, Runs: runs}
	byCell := map[[2]string][]*Run{}
	envSet, methodSet := map[string]bool{}, map[string]bool{}
	for _, r := range runs {
		k := [2]string{r.Env, r.Method}
		for _, o := range byCell[k] {
			if o.Seed == r.Seed {
				return nil, fmt.Errorf("compare: env %s, method %s: runs %s and %s have the same seed %d (two variants of one estimator? give them distinct methods)",
					r.Env, r.Method, o.Dir, r.Dir, r.Seed)
			}
		}
		byCell[k] = append(byCell[k], r)
		envSet[r.Env], methodSet[r.Method] = true, true
	}
	c.Envs = sortedKeys(envSet)
	if err := c.orderMethods(sortedKeys(methodSet)); err != nil {
		return nil, err
	}
	if err := c.checkBudgets(); err != nil {
		return nil, err
	}
	finals, common, err := c.finalScores()
	if err != nil {
		return nil, err
	}
	c.finals = finals
	for _, env := range c.Envs {
		for _, m := range c.Methods {
			rs := byCell[[2]string{env, m}]
			if len(rs) == 0 {
				continue
			}
			sort.Slice(rs, func(i, j int) bool { return rs[i].Seed < rs[j].Seed })
			cell := Cell{Env: env, Method: m, Runs: rs, BudgetMin: rs[0].EnvSteps, BudgetMax: rs[0].EnvSteps}
			for _, r := range rs {
				cell.Scores = append(cell.Scores, finals[r])
				cell.BudgetMin, cell.BudgetMax = min(cell.BudgetMin, r.EnvSteps), max(cell.BudgetMax, r.EnvSteps)
			}
			c.Cells = append(c.Cells, cell)
		}
	}
	for _, run := range []func() error{c.cellStats, c.aggregate, c.rankings, c.paired,
		func() error { c.variances(); return nil }, c.gains, c.curves} {
		if err := stage(run); err != nil {
			return nil, err
		}
	}
	c.protocol(common)
	c.configs()
	c.warn()
	c.Levels = c.levelRows()
	c.Slopes = c.slopeRows()
	c.StepSizes = c.stepSizes()
	return c, nil
}

// checkMagnitudes refuses a value of metric beyond ±MaxMagnitude (or not a number: a train/
// mean that overflowed) in any evaluation of the runs, naming the run's metrics.jsonl.
func checkMagnitudes(runs []*Run, metric string) error {
	for _, r := range runs {
		for _, e := range r.Evals {
			if v, ok := e.Values[metric]; ok && !(math.Abs(v) <= MaxMagnitude) {
				return &LoadError{File: filepath.Join(r.Dir, rundir.MetricsFile), Err: fmt.Errorf(
					"run %s: %s is %g at iter %d, beyond ±%g, the largest magnitude a comparison takes (its statistics add up squared differences of scores, which overflow float64 beyond it)",
					r.Name, metric, v, e.Iter, MaxMagnitude)}
			}
		}
	}
	return nil
}

func resolveOptions(o Options) (Options, error) {
	if o.Metric == "" {
		o.Metric = DefaultMetric
	}
	if o.Final == "" {
		o.Final = FinalLast
	}
	if o.Final != FinalLast && o.Final != FinalCommonBudget {
		return o, fmt.Errorf("compare: final %q is not one of %s, %s", o.Final, FinalLast, FinalCommonBudget)
	}
	if o.Holm == "" {
		o.Holm = HolmEnv
	}
	if o.Holm != HolmEnv && o.Holm != HolmFamily {
		return o, fmt.Errorf("compare: holm %q is not one of %s, %s", o.Holm, HolmEnv, HolmFamily)
	}
	if o.CurvePoints == 0 {
		o.CurvePoints = 50
	}
	if o.ProfilePoints == 0 {
		o.ProfilePoints = 101
	}
	if o.CurvePoints < 2 || o.ProfilePoints < 2 {
		return o, fmt.Errorf("compare: curve points %d and profile points %d must be at least 2", o.CurvePoints, o.ProfilePoints)
	}
	if o.BudgetTolerance < 0 || math.IsNaN(o.BudgetTolerance) {
		return o, fmt.Errorf("compare: budget tolerance %v must be ≥ 0", o.BudgetTolerance)
	}
	for env, r := range o.Ranges {
		if !r.Valid() {
			return o, fmt.Errorf("compare: normalisation range of env %s [%v, %v] needs finite Lo < Hi", env, r.Lo, r.Hi)
		}
	}
	b, err := o.Bootstrap.resolved()
	if err != nil {
		return o, fmt.Errorf("compare: %w", err)
	}
	o.Bootstrap = b
	if o.Title == "" {
		o.Title = "Comparison: " + o.Metric
	}
	return o, nil
}

func (c *Comparison) orderMethods(methods []string) error {
	base := c.Options.Baseline
	switch {
	case base == "" && slices.Contains(methods, "grpo"):
		base = "grpo"
	case base == "":
		base = methods[0]
	case !slices.Contains(methods, base):
		return fmt.Errorf("compare: baseline %q is not among the methods (%s)", base, strings.Join(methods, ", "))
	}
	c.Options.Baseline = base
	c.Methods = append([]string{base}, slices.DeleteFunc(methods, func(m string) bool { return m == base })...)
	return nil
}

func (c *Comparison) checkBudgets() error {
	if c.Options.Final == FinalCommonBudget {
		return nil
	}
	err := CheckBudgets(c.Runs, c.Options.BudgetTolerance)
	if err == nil {
		return nil
	}
	if !c.Options.Force {
		return fmt.Errorf("compare: %w", err)
	}
	for _, e := range unjoin(err) {
		var be *BudgetError
		if errors.As(e, &be) {
			c.Warnings = append(c.Warnings, fmt.Sprintf("forced: env %s compares runs whose env-step budgets differ by %.1f %% (tolerance %.1f %%)",
				be.Env, 100*be.Spread(), 100*be.Tolerance))
		}
	}
	return nil
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// finalScores reads each run's final score under the Final rule; common holds the common budget
// per environment under FinalCommonBudget.
func (c *Comparison) finalScores() (map[*Run]float64, map[string]int64, error) {
	finals := map[*Run]float64{}
	common := map[string]int64{}
	m := c.Options.Metric
	if c.Options.Final == FinalCommonBudget {
		for _, r := range c.Runs {
			pts := r.Curve(m)
			if len(pts) == 0 {
				return nil, nil, fmt.Errorf("compare: run %s has no evaluation of %q", r.Dir, m)
			}
			end := int64(pts[len(pts)-1].EnvSteps)
			if b, ok := common[r.Env]; !ok || end < b {
				common[r.Env] = end
			}
		}
	}
	for _, r := range c.Runs {
		if c.Options.Final == FinalLast {
			v, err := r.Final(m)
			if err != nil {
				return nil, nil, fmt.Errorf("compare: %w", err)
			}
			finals[r] = v
			continue
		}
		b := common[r.Env]
		v := Interpolate(r.Curve(m), []float64{float64(b)})[0]
		if math.IsNaN(v) {
			return nil, nil, fmt.Errorf("compare: run %s: %q has no evaluation at or before %d env steps to interpolate from", r.Dir, m, b)
		}
		finals[r] = v
	}
	return finals, common, nil
}

// seeded derives an independent, order-free bootstrap seed for one statistic of one cell, so
// that adding a method or environment leaves the other intervals unchanged.
func (c *Comparison) seeded(parts ...string) Bootstrap {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	b := c.Options.Bootstrap
	b.Seed ^= h.Sum64()
	return b
}

func (c *Comparison) cell(env, method string) *Cell {
	for i := range c.Cells {
		if c.Cells[i].Env == env && c.Cells[i].Method == method {
			return &c.Cells[i]
		}
	}
	return nil
}

func (c *Comparison) cellStats() error {
	base := c.Options.Baseline
	for i := range c.Cells {
		cell := &c.Cells[i]
		cell.Mean = Mean(cell.Scores)
		cell.Median = Median(cell.Scores)
		r := c.rangeOf(cell.Env)
		normalized := make([]float64, len(cell.Scores))
		for k, v := range cell.Scores {
			normalized[k] = r.Normalize(v)
		}
		cell.OptimalityGap = OptimalityGap(Strata[float64]{normalized}, 1)
		cell.Std = math.NaN()
		if cell.N() > 1 {
			cell.Std = stat.StdDev(cell.Scores, nil)
		}
		var err error
		cell.IQM, err = IQMCI(Strata[float64]{cell.Scores}, c.seeded("iqm", cell.Env, cell.Method))
		if err != nil {
			return err
		}
		cell.Improvement, cell.Welch = NaNEstimate(), WelchResult{math.NaN(), math.NaN(), math.NaN()}
		b := c.cell(cell.Env, base)
		if cell.Method == base || b == nil {
			continue
		}
		cell.Improvement, err = ProbImprovementCI(Strata[float64]{cell.Scores}, Strata[float64]{b.Scores},
			c.seeded("poi", cell.Env, cell.Method))
		if err != nil {
			return err
		}
		cell.Welch = WelchTTest(cell.Scores, b.Scores)
	}
	return nil
}

// normalized returns a method's normalised final scores as strata in Envs order (empty where
// the method did not run).
func (c *Comparison) normalized(method string) Strata[float64] {
	s := make(Strata[float64], len(c.Envs))
	for i, env := range c.Envs {
		cell := c.cell(env, method)
		if cell == nil {
			continue
		}
		r := c.rangeOf(env)
		for _, v := range cell.Scores {
			s[i] = append(s[i], r.Normalize(v))
		}
	}
	return s
}

func (c *Comparison) rangeOf(env string) Range {
	if r, ok := c.Options.Ranges[env]; ok {
		return r
	}
	return Range{0, 1}
}

func (c *Comparison) aggregate() error {
	base := c.normalized(c.Options.Baseline)
	all := []float64{0, 1}
	for _, m := range c.Methods {
		s := c.normalized(m)
		row := AggregateRow{Method: m, Improvement: NaNEstimate()}
		for _, st := range s {
			if len(st) > 0 {
				row.Envs++
				row.N += len(st)
			}
			all = append(all, st...)
		}
		var err error
		if row.IQM, err = IQMCI(s, c.seeded("agg-iqm", m)); err != nil {
			return err
		}
		if row.Mean, err = MeanCI(s, c.seeded("agg-mean", m)); err != nil {
			return err
		}
		if row.Median, err = AggregateMedianCI(s, c.seeded("agg-median", m)); err != nil {
			return err
		}
		if row.OptimalityGap, err = OptimalityGapCI(s, 1, c.seeded("agg-optgap", m)); err != nil {
			return err
		}
		if m != c.Options.Baseline {
			if row.Improvement, err = ProbImprovementCI(s, base, c.seeded("agg-poi", m)); err != nil {
				return err
			}
		}
		c.Aggregate = append(c.Aggregate, row)
	}
	// τ spans [0, 1] and any normalised score beyond it.
	lo, hi := slices.Min(all), slices.Max(all)
	taus := make([]float64, c.Options.ProfilePoints)
	for k := range taus {
		taus[k] = lo + (hi-lo)*float64(k)/float64(len(taus)-1)
	}
	for _, m := range c.Methods {
		frac, err := PerformanceProfile(c.normalized(m), taus, c.seeded("profile", m))
		if err != nil {
			return err
		}
		c.Profiles = append(c.Profiles, Profile{Method: m, Tau: taus, Frac: frac})
	}
	return nil
}

func (c *Comparison) curves() error {
	m := c.Options.Metric
	for _, env := range c.Envs {
		var all [][]Point
		for _, r := range c.Runs {
			if r.Env == env {
				all = append(all, r.Curve(m))
			}
		}
		grid, err := CommonGrid(all, c.Options.CurvePoints)
		if err != nil {
			return fmt.Errorf("compare: env %s: %w", env, err)
		}
		for _, method := range c.Methods {
			cell := c.cell(env, method)
			if cell == nil {
				continue
			}
			var s Strata[[]float64] = [][][]float64{nil}
			for _, r := range cell.Runs {
				s[0] = append(s[0], Interpolate(r.Curve(m), grid))
			}
			est, err := CurveIQMCI(s, c.seeded("curve", env, method))
			if err != nil {
				return err
			}
			c.Curves = append(c.Curves, Curve{Env: env, Method: method, N: cell.N(), EnvSteps: grid, IQM: est})
		}
	}
	return nil
}

func (c *Comparison) protocol(common map[string]int64) {
	m := c.Options.Metric
	p := Protocol{Metric: m, Panel: "training panel", Decoding: "greedy, one episode per task"}
	heldout := strings.Contains(m, "heldout")
	if heldout {
		p.Panel = "held-out panel"
	}
	switch {
	case strings.Contains(m, "/sampled/"):
		p.Decoding = "sampled from the policy, one episode per task"
	case !strings.HasPrefix(m, "eval/"):
		p.Panel, p.Decoding = "unknown", "unknown"
	}
	for _, r := range c.Runs {
		if r.Config.OpenTasks && m == DefaultMetric {
			heldout = true // open training tasks: eval/success is measured on the held-out panel
			p.Panel = "held-out panel (the runs train on open tasks)"
		}
		if heldout {
			p.EvalEpisodes = appendUnique(p.EvalEpisodes, r.Config.EvalTasks)
		} else {
			p.EvalEpisodes = appendUnique(p.EvalEpisodes, r.Config.TrainTasks)
		}
		p.Seeds = appendUnique(p.Seeds, r.Seed)
		p.Iterations = appendUnique(p.Iterations, r.Iterations)
		p.EvalEvery = appendUnique(p.EvalEvery, r.Config.EvalEvery)
		p.GroupSize = appendUnique(p.GroupSize, r.Config.GroupSize)
		p.PerIter = appendUnique(p.PerIter, r.Config.PerIter)
		p.PanelSeed = appendUnique(p.PanelSeed, r.Config.PanelSeed)
	}
	p.SeedsMin = math.MaxInt
	for _, cell := range c.Cells {
		p.SeedsMin, p.SeedsMax = min(p.SeedsMin, cell.N()), max(p.SeedsMax, cell.N())
	}
	for _, env := range c.Envs {
		b := EnvBudget{Env: env, Min: math.MaxInt64, Common: common[env]}
		for _, r := range c.Runs {
			if r.Env == env {
				b.Min, b.Max = min(b.Min, r.EnvSteps), max(b.Max, r.EnvSteps)
			}
		}
		p.Budgets = append(p.Budgets, b)
	}
	p.Final = "last evaluation of each run"
	if c.Options.Final == FinalCommonBudget {
		p.Final = "each run's curve read at its environment's common budget (linear interpolation between evaluations)"
	}
	for _, l := range [][]int{p.EvalEpisodes, p.Iterations, p.EvalEvery, p.GroupSize, p.PerIter} {
		slices.Sort(l)
	}
	slices.Sort(p.Seeds)
	slices.Sort(p.PanelSeed)
	c.Protocol = p
}

func appendUnique[T comparable](s []T, v T) []T {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

func (c *Comparison) warn() {
	for _, r := range c.Runs {
		if !r.Complete {
			c.Warnings = append(c.Warnings, fmt.Sprintf("run %s has no %s: it did not finish (its budget is where it stopped)", r.Dir, rundir.SummaryFile))
		}
	}
	for _, env := range c.Envs {
		var ns []string
		equal := true
		var first int
		for _, m := range c.Methods {
			cell := c.cell(env, m)
			if cell == nil {
				c.Warnings = append(c.Warnings, fmt.Sprintf("env %s has no run of method %s", env, m))
				continue
			}
			if len(ns) == 0 {
				first = cell.N()
			}
			equal = equal && cell.N() == first
			ns = append(ns, fmt.Sprintf("%s %d", m, cell.N()))
		}
		if !equal {
			c.Warnings = append(c.Warnings, fmt.Sprintf("env %s: methods have unequal numbers of runs (%s)", env, strings.Join(ns, ", ")))
		}
		if _, ok := c.Options.Ranges[env]; !ok {
			for _, m := range c.Methods {
				if cell := c.cell(env, m); cell != nil && (slices.Min(cell.Scores) < 0 || slices.Max(cell.Scores) > 1) {
					c.Warnings = append(c.Warnings, fmt.Sprintf("env %s: scores outside [0, 1] with the default normalisation range; give Ranges for %q", env, c.Options.Metric))
					break
				}
			}
		}
	}
	if len(c.Envs) > 1 {
		for _, m := range c.Methods {
			var counts []int
			for _, env := range c.Envs {
				if cell := c.cell(env, m); cell != nil {
					counts = appendUnique(counts, cell.N())
				}
			}
			if len(counts) > 1 {
				c.Warnings = append(c.Warnings, fmt.Sprintf("method %s has different numbers of runs per env: its pooled aggregate weighs envs unequally", m))
			}
		}
	}
	for _, cell := range c.Cells {
		var groups []string
		for _, r := range cell.Runs {
			groups = appendUnique(groups, c.configOf(r))
		}
		if len(groups) > 1 {
			c.Warnings = append(c.Warnings, fmt.Sprintf("env %s, method %s: runs use %d different configs (%s); see the config diff",
				cell.Env, cell.Method, len(groups), strings.Join(groups, ", ")))
		}
	}
}
