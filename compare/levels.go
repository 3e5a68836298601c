package compare

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/graftrl/graftrl/internal/plotstyle"
)

// Levels places environments on named difficulty axes (a study's bases: one env at several
// horizons and slacks, say), so that the report can show each method's paired difference from
// the baseline as a function of the levels.
type Levels struct {
	// Axes are the axis names in order: the first is the x axis of the levels figure, the
	// second, when there is one, splits the figure into panels.
	Axes []string
	// Of maps an environment to its value on each axis, in Axes order.
	Of map[string][]string
	// WasteTarget maps an environment to the share of wasted steps its warm start is meant to
	// have in its successful episodes (a study base's waste_target); an environment it lacks has
	// no target. With at least one target, the levels table and levels.csv show each warm
	// start's measured share beside its target and flag the misses (LevelRow.WasteMissed).
	WasteTarget map[string]float64
}

// Credit diagnostics a level row averages (the est/ keys of the trainer's credit_diagnostics).
const (
	diagDecision      = "est/decision_share"
	diagWastedSuccess = "est/wasted_success"
	diagWastedFail    = "est/wasted_fail"
	diagSuccessSteps  = "est/success_steps"
)

// wasteTolerance is how far a warm start's measured share of wasted steps in successes may lie
// from its target before its level is flagged: 5 points.
const wasteTolerance = 0.05

// LevelRow is one environment placed on the axes: its paired differences and what the runs
// say about how much credit assignment it asks for.
type LevelRow struct {
	Env    string
	Values []string
	// Paired are the final-score paired rows of the environment, one per non-baseline method.
	Paired []PairedRow
	// Start is the mean metric of the environment's runs before training (their warm start),
	// StartMin and StartMax its range over the runs, StartN the runs that have it.
	Start, StartMin, StartMax float64
	StartN                    int
	// Decision, WastedSuccess and WastedFail are the means over the environment's runs of each
	// run's mean est/decision_share, est/wasted_success and est/wasted_fail (NaN without them).
	Decision, WastedSuccess, WastedFail float64
	// StartWasted is the warm start's share of wasted steps in successful episodes: each run's
	// est/wasted_success on its first train line (Run.FirstTrain, a batch sampled before any
	// update), weighted by that line's est/success_steps, over the environment's runs (NaN when
	// no run has both); StartWastedMin and StartWastedMax are its range over the runs,
	// StartWastedN the runs that have it.
	StartWasted, StartWastedMin, StartWastedMax float64
	StartWastedN                                int
	// WasteTarget is the share the warm start is meant to have (Levels.WasteTarget; NaN without
	// one). WasteMissed reports a target that StartWasted misses by more than 5 points, or that
	// no run measured.
	WasteTarget float64
	WasteMissed bool
}

// levelRows builds the rows of the environments that Options.Levels places, in axis order
// (numerically where the values are numbers).
func (c *Comparison) levelRows() []LevelRow {
	lv := c.Options.Levels
	if lv == nil {
		return nil
	}
	var rows []LevelRow
	for _, env := range c.Envs {
		vals, ok := lv.Of[env]
		if !ok {
			continue
		}
		row := LevelRow{Env: env, Values: vals, Paired: c.PairedRows(env, MeasureFinal),
			StartMin: math.NaN(), StartMax: math.NaN()}
		var starts []float64
		mean := func(key string) float64 {
			var xs []float64
			for _, r := range c.Runs {
				if v, ok := r.EstimatorMeans[key]; ok && r.Env == env {
					xs = append(xs, v)
				}
			}
			if len(xs) == 0 {
				return math.NaN()
			}
			return Mean(xs)
		}
		for _, r := range c.Runs {
			if r.Env != env {
				continue
			}
			if v, ok := r.Start(c.Options.Metric); ok {
				starts = append(starts, v)
			}
		}
		row.StartN, row.Start = len(starts), math.NaN()
		if len(starts) > 0 {
			row.Start, row.StartMin, row.StartMax = Mean(starts), slices.Min(starts), slices.Max(starts)
		}
		row.Decision, row.WastedSuccess, row.WastedFail = mean(diagDecision), mean(diagWastedSuccess), mean(diagWastedFail)
		c.startWaste(&row)
		rows = append(rows, row)
	}
	slices.SortStableFunc(rows, func(a, b LevelRow) int {
		for i := len(a.Values) - 1; i >= 0; i-- { // the panel axis outermost, the x axis innermost
			if d := compareLevel(a.Values[i], b.Values[i]); d != 0 && i > 0 {
				return d
			}
		}
		return compareLevel(a.Values[0], b.Values[0])
	})
	return rows
}

// startWaste sets the row's warm-start share of wasted steps in successes, from the first
// train lines of its environment's runs, and its target with the flag of a miss.
func (c *Comparison) startWaste(row *LevelRow) {
	var shares []float64
	var wasted, steps float64
	for _, r := range c.Runs {
		share, okShare := r.FirstTrain[diagWastedSuccess]
		n, okSteps := r.FirstTrain[diagSuccessSteps]
		if r.Env != row.Env || !okShare || !okSteps || n <= 0 {
			continue
		}
		shares = append(shares, share)
		wasted += share * n
		steps += n
	}
	row.StartWasted, row.StartWastedMin, row.StartWastedMax, row.StartWastedN = math.NaN(), math.NaN(), math.NaN(), len(shares)
	if len(shares) > 0 {
		row.StartWasted, row.StartWastedMin, row.StartWastedMax = wasted/steps, slices.Min(shares), slices.Max(shares)
	}
	row.WasteTarget = math.NaN()
	if t, ok := c.Options.Levels.WasteTarget[row.Env]; ok {
		row.WasteTarget = t
		// A miss of exactly 5 points is within the tolerance: 1e-9 absorbs the rounding of
		// the shares. NaN (no run measured the share) is a miss.
		row.WasteMissed = !(math.Abs(row.StartWasted-t) <= wasteTolerance+1e-9)
	}
}

// hasWasteTargets reports whether any environment has a warm-start target: only then do the
// levels table and levels.csv show the warm start's wasted share and its target.
func (c *Comparison) hasWasteTargets() bool {
	return c.Options.Levels != nil && len(c.Options.Levels.WasteTarget) > 0
}

// compareLevel orders two axis values: numerically when both are numbers, else as text.
func compareLevel(a, b string) int {
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	if errA == nil && errB == nil {
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	return strings.Compare(a, b)
}

// levelsTable is the report's table of the level rows.
func (c *Comparison) levelsTable(rows []LevelRow) table {
	lv := c.Options.Levels
	head := append(slices.Clone(lv.Axes), "env", "warm start (mean, range)")
	targets := c.hasWasteTargets()
	if targets {
		head = append(head, "warm start's wasted share in successes (weighted, range)", "target")
	}
	for _, m := range c.Methods[1:] {
		head = append(head, m+" − "+c.Options.Baseline+" (95 % t CI; ahead/tied/behind)")
	}
	head = append(head, "decision share", "wasted in successes", "wasted in failures")
	var out [][]string
	for _, r := range rows {
		line := append(slices.Clone(r.Values), r.Env, fmt.Sprintf("%s [%s, %s] (n=%d)", fmtNum(r.Start), fmtNum(r.StartMin), fmtNum(r.StartMax), r.StartN))
		if targets {
			line = append(line, fmt.Sprintf("%s [%s, %s] (n=%d)", fmtNum(r.StartWasted), fmtNum(r.StartWastedMin), fmtNum(r.StartWastedMax), r.StartWastedN),
				wasteTargetCell(r))
		}
		for _, m := range c.Methods[1:] {
			cell := "—"
			for _, p := range r.Paired {
				if p.Method == m {
					cell = fmt.Sprintf("%+.3f [%+.3f, %+.3f]; %d/%d/%d", p.Mean.Value, p.TInterval.Lo, p.TInterval.Hi, p.Won, p.Tied, p.Lost)
				}
			}
			line = append(line, cell)
		}
		line = append(line, fmtNum(r.Decision), fmtNum(r.WastedSuccess), fmtNum(r.WastedFail))
		out = append(out, line)
	}
	return table{head: head, rows: out}
}

// wasteTargetCell is a row's target in the levels table: empty without one, "missed" after
// a target its warm start misses.
func wasteTargetCell(r LevelRow) string {
	switch {
	case math.IsNaN(r.WasteTarget):
		return ""
	case r.WasteMissed:
		return fmtNum(r.WasteTarget) + " (missed)"
	}
	return fmtNum(r.WasteTarget)
}

// wasteTargetNote is the sentence below the levels table when environments have warm-start
// targets: how the share is measured, and each level whose warm start misses its target, or
// that none does.
func (c *Comparison) wasteTargetNote(rows []LevelRow) string {
	note := fmt.Sprintf("The warm start's wasted share in successes is %s on each run's first train line (iteration 1: a batch sampled from the warm start before any update), weighted by its %s over the environment's runs, with its range over the runs; the target is the base's waste_target.",
		diagWastedSuccess, diagSuccessSteps)
	var missed []string
	for _, r := range rows {
		switch {
		case !r.WasteMissed:
		case r.StartWastedN == 0:
			missed = append(missed, fmt.Sprintf("%s (target %s, not measured: no run's first train line has %s with %s)", r.Env, fmtNum(r.WasteTarget), diagWastedSuccess, diagSuccessSteps))
		default:
			missed = append(missed, fmt.Sprintf("%s (target %s, measured %s [%s, %s], n=%d)", r.Env, fmtNum(r.WasteTarget), fmtNum(r.StartWasted), fmtNum(r.StartWastedMin), fmtNum(r.StartWastedMax), r.StartWastedN))
		}
	}
	if len(missed) == 0 {
		return note + fmt.Sprintf(" Every warm start with a target is within %.0f points of it.", 100*wasteTolerance)
	}
	return note + fmt.Sprintf(" Levels whose warm start misses its target by more than %.0f points (reported, not silently used: they stay in every table, flagged \"missed\" in this one and waste_target_missed in levels.csv): %s.",
		100*wasteTolerance, strings.Join(missed, "; "))
}

// LevelsCSV is the file of LevelsTable.
const LevelsCSV = "levels.csv"

// LevelsTable is levels.csv: a header, then one row per placed environment and non-baseline
// method (only the header without Options.Levels). With warm-start targets
// (Levels.WasteTarget) each row ends with its environment's warm-start wasted share in
// successes (weighted, min, max, runs), its target (empty without one) and whether the target
// is missed.
func (c *Comparison) LevelsTable() [][]string {
	if c.Options.Levels == nil {
		return [][]string{{"env"}}
	}
	rows := c.Levels
	head := append(slices.Clone(c.Options.Levels.Axes), "env", "method", "n", "mean_diff", "t_lo", "t_hi", "boot_lo", "boot_hi",
		"won", "tied", "lost", "p_t_holm", "start_mean", "start_min", "start_max", "decision_share", "wasted_success", "wasted_fail")
	targets := c.hasWasteTargets()
	if targets {
		head = append(head, "start_wasted_success", "start_wasted_success_min", "start_wasted_success_max", "start_wasted_success_n",
			"waste_target", "waste_target_missed")
	}
	out := [][]string{head}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for _, r := range rows {
		for _, p := range r.Paired {
			line := append(slices.Clone(r.Values), r.Env, p.Method, strconv.Itoa(p.N), f(p.Mean.Value), f(p.TInterval.Lo), f(p.TInterval.Hi),
				f(p.Mean.Lo), f(p.Mean.Hi), strconv.Itoa(p.Won), strconv.Itoa(p.Tied), strconv.Itoa(p.Lost), f(p.THolm),
				f(r.Start), f(r.StartMin), f(r.StartMax), f(r.Decision), f(r.WastedSuccess), f(r.WastedFail))
			if targets {
				target := ""
				if !math.IsNaN(r.WasteTarget) {
					target = f(r.WasteTarget)
				}
				line = append(line, f(r.StartWasted), f(r.StartWastedMin), f(r.StartWastedMax), strconv.Itoa(r.StartWastedN),
					target, strconv.FormatBool(r.WasteMissed))
			}
			out = append(out, line)
		}
	}
	return out
}

// LevelsFigure draws each method's paired final difference from the baseline (mean and 95 %
// t interval) against the first axis, one panel per value of the second axis.
func (c *Comparison) LevelsFigure() (*plotstyle.Figure, error) {
	rows := c.Levels
	if len(rows) == 0 {
		return nil, fmt.Errorf("levels: no environment is placed on the axes")
	}
	axes := c.Options.Levels.Axes
	var panels []*plot.Plot
	for _, key := range levelPanelKeys(rows, axes) {
		p, err := c.levelsPanel(rows, key)
		if err != nil {
			return nil, err
		}
		panels = append(panels, p)
	}
	shareYRange(panels)
	grid := [][]*plot.Plot{panels}
	title := fmt.Sprintf("Paired difference from %s (final %s) by %s, mean and 95 %% t interval over seed pairs", c.Options.Baseline, MetricWords(c.Options.Metric), strings.Join(axes, " and "))
	w, h := figureSize(grid, 3.6*vg.Inch, title)
	return &plotstyle.Figure{Width: w, Height: h, Panels: grid, Title: title}, nil
}

// levelPanelKey names the panel a row is drawn in: the second axis and the row's value on it,
// or "" (one panel) when there is one axis.
func levelPanelKey(r LevelRow, axes []string) string {
	if len(axes) > 1 {
		return axes[1] + " " + r.Values[1]
	}
	return ""
}

// levelPanelKeys are the panels of the levels figure, in the order of the rows.
func levelPanelKeys(rows []LevelRow, axes []string) []string {
	var keys []string
	for _, r := range rows {
		if k := levelPanelKey(r, axes); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// levelsPanel is one panel of the levels figure: every method but the baseline against the
// first axis, over the rows of the panel key, with the zero line of the baseline.
func (c *Comparison) levelsPanel(rows []LevelRow, key string) (*plot.Plot, error) {
	axes := c.Options.Levels.Axes
	p := newPlot(key, axes[0], "difference from "+c.Options.Baseline)
	methods := c.Methods[1:]
	var xs []float64
	for _, r := range rows {
		if levelPanelKey(r, axes) != key {
			continue
		}
		x, err := strconv.ParseFloat(r.Values[0], 64)
		if err != nil {
			return nil, fmt.Errorf("levels: %s value %q of %s is not a number", axes[0], r.Values[0], r.Env)
		}
		if !slices.Contains(xs, x) {
			xs = append(xs, x)
		}
	}
	slices.Sort(xs)
	step, pad := levelDodge(xs, len(methods))
	zero := true
	for k, m := range methods {
		// Methods side by side around each x, so that their intervals do not hide each other.
		off := (float64(k) - float64(len(methods)-1)/2) * step
		pts, errs := levelSeries(rows, axes, key, m, off)
		if len(pts) == 0 {
			continue
		}
		line, dots, err := addLevelSeries(p, pts, errs, c.methodIndex(m))
		if err != nil {
			return nil, err
		}
		if zero {
			p.Legend = *plotstyle.NewLegend()
			zero = false
		}
		p.Legend.Add(m, line, dots)
	}
	if len(xs) > 0 {
		if err := addLevelAxis(p, xs, pad); err != nil {
			return nil, err
		}
	}
	p.Legend.Top, p.Legend.Left = true, true
	return p, nil
}

// levelDodge is the horizontal distance between neighbouring methods' points at one x, and the
// axis' margin beyond the outer x values, for the sorted x values xs and n methods: 0.08 and
// 0.5 on axes whose values lie a unit or more apart (horizon, slack), and scaled down with the
// narrowest gap g between values (a share such as 0.15, 0.35, 0.5, 0.65) so that a level's n
// points together span at most 0.4 g and no point strays towards its neighbouring level.
func levelDodge(xs []float64, n int) (step, pad float64) {
	gap := math.Inf(1)
	for i := 1; i < len(xs); i++ {
		gap = math.Min(gap, xs[i]-xs[i-1])
	}
	step, pad = 0.08, 0.5
	if math.IsInf(gap, 1) || gap <= 0 {
		return step, pad
	}
	if n > 1 {
		step = math.Min(step, 0.4*gap/float64(n-1))
	}
	return step, math.Min(pad, gap)
}

// levelSeries is method m's points in the panel key: the mean paired difference and its t
// interval at each row's first-axis value (shifted by off). The values parse: levelsPanel
// read them first.
func levelSeries(rows []LevelRow, axes []string, key, m string, off float64) (plotter.XYs, plotter.YErrors) {
	var pts plotter.XYs
	var errs plotter.YErrors
	for _, r := range rows {
		if levelPanelKey(r, axes) != key {
			continue
		}
		x, _ := strconv.ParseFloat(r.Values[0], 64)
		for _, pr := range r.Paired {
			if pr.Method == m && !math.IsNaN(pr.Mean.Value) {
				pts = append(pts, plotter.XY{X: x + off, Y: pr.Mean.Value})
				lo, hi := pr.Mean.Value-pr.TInterval.Lo, pr.TInterval.Hi-pr.Mean.Value
				if math.IsNaN(lo) || math.IsNaN(hi) { // no spread among the pairs: no interval
					lo, hi = 0, 0
				}
				errs = append(errs, struct{ Low, High float64 }{lo, hi})
			}
		}
	}
	return pts, errs
}

// addLevelSeries draws one method's series in its colour: a line through the means, the
// interval bars and the dots; the line and dots make its legend entry.
func addLevelSeries(p *plot.Plot, pts plotter.XYs, errs plotter.YErrors, i int) (*plotter.Line, *plotter.Scatter, error) {
	line, err := plotter.NewLine(pts)
	if err != nil {
		return nil, nil, err
	}
	line.Color, line.Width, line.Dashes = plotstyle.Colour(i), vg.Points(2), dashes(i)
	bars, err := plotter.NewYErrorBars(struct {
		plotter.XYer
		plotter.YErrorer
	}{pts, errs})
	if err != nil {
		return nil, nil, err
	}
	bars.Color, bars.Width, bars.CapWidth = plotstyle.Colour(i), vg.Points(1.5), vg.Points(6)
	dots, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, nil, err
	}
	dots.Color, dots.Shape, dots.Radius = plotstyle.Colour(i), draw.CircleGlyph{}, vg.Points(3.5)
	p.Add(line, bars, dots)
	return line, dots, nil
}

// addLevelAxis draws the baseline's zero line across the sorted first-axis values xs, with the
// margin pad on both sides, and puts a tick at each of them.
func addLevelAxis(p *plot.Plot, xs []float64, pad float64) error {
	ref, err := plotter.NewLine(plotter.XYs{{X: xs[0] - pad, Y: 0}, {X: xs[len(xs)-1] + pad, Y: 0}})
	if err != nil {
		return err
	}
	ref.Color, ref.Width, ref.Dashes = color.NRGBA{A: 160}, vg.Points(1), []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(ref)
	p.X.Min, p.X.Max = xs[0]-pad, xs[len(xs)-1]+pad
	ticks := make([]plot.Tick, len(xs))
	for i, x := range xs {
		ticks[i] = plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'g', -1, 64)}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	return nil
}

// shareYRange gives every panel one y range, holding zero and every panel's data, so that the
// panels compare at a glance.
func shareYRange(panels []*plot.Plot) {
	lo, hi := 0.0, 0.0
	for _, p := range panels {
		lo, hi = math.Min(lo, p.Y.Min), math.Max(hi, p.Y.Max)
	}
	pad := 0.05 * math.Max(hi-lo, 0.02)
	for _, p := range panels {
		p.Y.Min, p.Y.Max = lo-pad, hi+pad
	}
}
