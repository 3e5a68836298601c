package compare

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/graftrl/graftrl/internal/plotstyle"
)

// stepTicks labels env-step axes compactly (25k, 1.5M).
type stepTicks struct{}

// Ticks implements plot.Ticker.
func (stepTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = formatSteps(ts[i].Value)
		}
	}
	return ts
}

func formatSteps(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e6:
		return trimFloat(v/1e6) + "M"
	case a >= 1e3:
		return trimFloat(v/1e3) + "k"
	}
	return trimFloat(v)
}

func trimFloat(v float64) string { return fmt.Sprintf("%.4g", v) }

// methodIndex is a method's place in c.Methods, which fixes its colour in every figure.
func (c *Comparison) methodIndex(m string) int {
	for i, x := range c.Methods {
		if x == m {
			return i
		}
	}
	return 0
}

// band is the filled confidence band of a curve, NaN points left out, with its edges drawn thin
// in the method's colour and dashes so that overlapping bands stay apart.
func band(xs []float64, est []Estimate, i int) (*plotter.Polygon, error) {
	col := plotstyle.Colour(i)
	var upper, lower plotter.XYs
	for k, e := range est {
		if math.IsNaN(e.Lo) || math.IsNaN(e.Hi) {
			continue
		}
		upper = append(upper, plotter.XY{X: xs[k], Y: e.Hi})
		lower = append(lower, plotter.XY{X: xs[k], Y: e.Lo})
	}
	if len(upper) == 0 {
		return nil, nil
	}
	ring := append(plotter.XYs{}, upper...)
	for k := len(lower) - 1; k >= 0; k-- {
		ring = append(ring, lower[k])
	}
	poly, err := plotter.NewPolygon(ring)
	if err != nil {
		return nil, err
	}
	poly.Color = withAlpha(col, 0x30)
	poly.LineStyle.Width = vg.Points(0.7)
	poly.LineStyle.Color = withAlpha(col, 0xa0)
	poly.LineStyle.Dashes = dashes(i)
	return poly, nil
}

func curveLine(xs []float64, est []Estimate, i int) (*plotter.Line, error) {
	var pts plotter.XYs
	for k, e := range est {
		if !math.IsNaN(e.Value) {
			pts = append(pts, plotter.XY{X: xs[k], Y: e.Value})
		}
	}
	if len(pts) == 0 {
		return nil, nil
	}
	l, err := plotter.NewLine(pts)
	if err != nil {
		return nil, err
	}
	l.Color = plotstyle.Colour(i)
	l.Width = vg.Points(2)
	l.Dashes = dashes(i)
	return l, nil
}

// series is one method's line with its band.
type series struct {
	label string
	index int // place in Comparison.Methods: fixes the colour
	xs    []float64
	est   []Estimate
}

// addSeries draws every band before any line, so that no band veils another method's line, and
// returns the legend of the lines.
func addSeries(p *plot.Plot, ss []series) (*plot.Legend, error) {
	for _, s := range ss {
		poly, err := band(s.xs, s.est, s.index)
		if err != nil {
			return nil, err
		}
		if poly != nil {
			p.Add(poly)
		}
	}
	legend := plotstyle.NewLegend()
	for _, s := range ss {
		l, err := curveLine(s.xs, s.est, s.index)
		if err != nil {
			return nil, err
		}
		if l != nil {
			p.Add(l)
			legend.Add(s.label, l)
		}
	}
	return legend, nil
}

// rateTicks labels [0, 1] axes every 0.2.
type rateTicks struct{}

// Ticks implements plot.Ticker.
func (rateTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for k := 0; k <= 20; k++ {
		v := float64(k) / 20
		if v < lo-1e-9 || v > hi+1e-9 {
			continue
		}
		label := ""
		if k%4 == 0 {
			label = strconv.FormatFloat(v, 'f', 1, 64)
		}
		ts = append(ts, plot.Tick{Value: v, Label: label})
	}
	return ts
}

// CurvesFigure is the learning curve of every method in one environment: the IQM across seeds of
// the metric against env steps, with its 95 % bootstrap band.
func (c *Comparison) CurvesFigure(env string) (*plotstyle.Figure, error) {
	p := newPlot("", "environment steps trained", MetricWords(c.Options.Metric))
	p.X.Tick.Marker = stepTicks{}
	var ss []series
	for _, cv := range c.Curves {
		if cv.Env == env {
			ss = append(ss, series{fmt.Sprintf("%s (n=%d)", cv.Method, cv.N), c.methodIndex(cv.Method), cv.EnvSteps, cv.IQM})
		}
	}
	if len(ss) == 0 {
		return nil, fmt.Errorf("curves: no curve for env %q", env)
	}
	legend, err := addSeries(p, ss)
	if err != nil {
		return nil, err
	}
	if isRate(c.Options.Metric) {
		p.Y.Min, p.Y.Max = math.Min(p.Y.Min, 0), math.Max(p.Y.Max, 1)
		p.Y.Tick.Marker = rateTicks{}
	}
	title := fmt.Sprintf("%s: IQM of %s across seeds, 95 %% CI band", env, MetricWords(c.Options.Metric))
	return &plotstyle.Figure{Width: max(7.5*vg.Inch, plotstyle.TextStyle(13).Width(title)+vg.Inch/2), Height: 4.2 * vg.Inch,
		Legend: legend, Panels: [][]*plot.Plot{{p}}, Title: title}, nil
}

// MetricWords names a metric key in words for axes and titles: eval/heldout/greedy/success is
// "held-out greedy success", eval/success "success"; other keys lose their eval/ prefix and
// have / and _ read as spaces.
func MetricWords(metric string) string {
	w := strings.NewReplacer("heldout", "held-out", "/", " ", "_", " ").Replace(strings.TrimPrefix(metric, "eval/"))
	return strings.Join(strings.Fields(w), " ")
}

// isRate reports metrics that are shares in [0, 1].
func isRate(metric string) bool {
	return strings.HasSuffix(metric, "success") || strings.HasSuffix(metric, "_rate") || strings.HasSuffix(metric, "truncated")
}

// intervalPanel draws one estimate per row (first row on top): a dot at the value and a whisker
// over its interval.
// ns, when given, are the rows' numbers of runs, shown beside their names.
func (c *Comparison) intervalPanel(title, xlabel string, rows []string, ns []int, est []Estimate, ref float64) (*plot.Plot, error) {
	p := newPlot(title, xlabel, "")
	n := len(rows)
	lo, hi := math.Inf(1), math.Inf(-1)
	for k, e := range est {
		if math.IsNaN(e.Value) {
			continue
		}
		i := c.methodIndex(rows[k])
		y := float64(n - 1 - k)
		xy := plotter.XYs{{X: e.Value, Y: y}}
		if !math.IsNaN(e.Lo) {
			bars, err := plotter.NewXErrorBars(struct {
				plotter.XYer
				plotter.XErrorer
			}{xy, plotter.XErrors{{Low: e.Value - e.Lo, High: e.Hi - e.Value}}})
			if err != nil {
				return nil, err
			}
			bars.Color = plotstyle.Colour(i)
			bars.Width = vg.Points(2.5)
			bars.CapWidth = vg.Points(8)
			p.Add(bars)
			lo, hi = math.Min(lo, e.Lo), math.Max(hi, e.Hi)
		}
		dot, err := plotter.NewScatter(xy)
		if err != nil {
			return nil, err
		}
		dot.Color = plotstyle.Colour(i)
		dot.Shape = draw.CircleGlyph{}
		dot.Radius = vg.Points(4)
		p.Add(dot)
		lo, hi = math.Min(lo, e.Value), math.Max(hi, e.Value)
	}
	if !math.IsNaN(ref) {
		lo, hi = math.Min(lo, ref), math.Max(hi, ref)
		vline, err := plotter.NewLine(plotter.XYs{{X: ref, Y: -0.5}, {X: ref, Y: float64(n) - 0.5}})
		if err != nil {
			return nil, err
		}
		vline.Color = color.Gray{Y: 90}
		vline.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(vline)
	}
	if math.IsInf(lo, 0) {
		lo, hi = 0, 1
	}
	span := hi - lo
	if span == 0 {
		span = math.Max(math.Abs(hi), 1)
	}
	p.X.Min, p.X.Max = lo-0.08*span, hi+0.08*span
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	labels := make([]string, n)
	for k, m := range rows {
		labels[n-1-k] = m
		if ns != nil {
			labels[n-1-k] = fmt.Sprintf("%s (n=%d)", m, ns[k])
		}
	}
	p.NominalY(labels...)
	p.Y.Padding = 0
	return p, nil
}

// shareX gives every panel the union of their x ranges.
func shareX(panels []*plot.Plot) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range panels {
		lo, hi = math.Min(lo, p.X.Min), math.Max(hi, p.X.Max)
	}
	for _, p := range panels {
		p.X.Min, p.X.Max = lo, hi
	}
}

// panelGrid lays panels out in one row when there are at most four, else in rows of three.
func panelGrid(panels []*plot.Plot) [][]*plot.Plot {
	cols := 3
	if len(panels) <= 4 {
		cols = max(len(panels), 1)
	}
	var grid [][]*plot.Plot
	for i := 0; i < len(panels); i += cols {
		grid = append(grid, panels[i:min(i+cols, len(panels))])
	}
	return grid
}

// figureSize gives each column 3.2 inches and each row rowHeight, widening the figure when the
// title would not fit.
func figureSize(grid [][]*plot.Plot, rowHeight vg.Length, title string) (vg.Length, vg.Length) {
	cols := 0
	for _, r := range grid {
		cols = max(cols, len(r))
	}
	w := vg.Length(math.Max(3.2*float64(cols), 5.5)) * vg.Inch
	w = max(w, plotstyle.TextStyle(13).Width(title)+vg.Inch/2)
	return w, rowHeight*vg.Length(len(grid)) + 0.6*vg.Inch
}

// FinalFigure shows each method's IQM final score with its 95 % interval: one panel per
// environment, then the aggregate over environments on normalised scores.
func (c *Comparison) FinalFigure() (*plotstyle.Figure, error) {
	var panels []*plot.Plot
	for _, env := range c.Envs {
		var rows []string
		var ns []int
		var est []Estimate
		for _, m := range c.Methods {
			if cell := c.cell(env, m); cell != nil {
				rows, ns, est = append(rows, m), append(ns, cell.N()), append(est, cell.IQM)
			}
		}
		p, err := c.intervalPanel(env, "IQM of "+MetricWords(c.Options.Metric), rows, ns, est, math.NaN())
		if err != nil {
			return nil, err
		}
		panels = append(panels, p)
	}
	if len(c.Envs) > 1 {
		var rows []string
		var ns []int
		var est []Estimate
		for _, a := range c.Aggregate {
			rows, ns, est = append(rows, a.Method), append(ns, a.N), append(est, a.IQM)
		}
		p, err := c.intervalPanel("aggregate over environments", "IQM of normalised score", rows, ns, est, math.NaN())
		if err != nil {
			return nil, err
		}
		panels = append(panels, p)
	}
	if isRate(c.Options.Metric) {
		// Rates (and their [0, 1] normalisation) share the whole [0, 1] scale across panels, so
		// that a small gap looks small.
		for _, p := range panels {
			p.X.Min, p.X.Max = math.Min(p.X.Min, 0), math.Max(p.X.Max, 1)
		}
		shareX(panels)
	}
	grid := panelGrid(panels)
	title := fmt.Sprintf("Final %s: IQM across seeds with 95 %% CI", MetricWords(c.Options.Metric))
	w, h := figureSize(grid, 0.45*vg.Inch*vg.Length(len(c.Methods))+1.3*vg.Inch, title)
	return &plotstyle.Figure{Width: w, Height: h, Panels: grid, Title: title}, nil
}

// ImprovementFigure shows P(method > baseline) with its 95 % interval for every other method:
// one panel per environment, then the average over environments. 0.5 (dashed) is no difference.
func (c *Comparison) ImprovementFigure() (*plotstyle.Figure, error) {
	if len(c.Methods) < 2 {
		return nil, errors.New("improvement: one method only, nothing to compare with the baseline")
	}
	base := c.Options.Baseline
	var panels []*plot.Plot
	add := func(title string, rows []string, est []Estimate) error {
		p, err := c.intervalPanel(title, "P(a run of the method beats one of "+base+")", rows, nil, est, 0.5)
		if err != nil {
			return err
		}
		p.X.Min, p.X.Max = math.Min(p.X.Min, 0), math.Max(p.X.Max, 1)
		panels = append(panels, p)
		return nil
	}
	for _, env := range c.Envs {
		var rows []string
		var est []Estimate
		for _, m := range c.Methods[1:] {
			if cell := c.cell(env, m); cell != nil && !math.IsNaN(cell.Improvement.Value) {
				rows, est = append(rows, m), append(est, cell.Improvement)
			}
		}
		if len(rows) == 0 {
			continue
		}
		if err := add(env, rows, est); err != nil {
			return nil, err
		}
	}
	if len(c.Envs) > 1 {
		var rows []string
		var est []Estimate
		for _, a := range c.Aggregate[1:] {
			rows, est = append(rows, a.Method), append(est, a.Improvement)
		}
		if err := add("average over envs", rows, est); err != nil {
			return nil, err
		}
	}
	if len(panels) == 0 {
		return nil, errors.New("improvement: no environment has both a method and the baseline")
	}
	grid := panelGrid(panels)
	title := fmt.Sprintf("Probability of improvement over %s (final %s), 95 %% CI", base, MetricWords(c.Options.Metric))
	w, h := figureSize(grid, 0.45*vg.Inch*vg.Length(len(c.Methods)-1)+1.3*vg.Inch, title)
	return &plotstyle.Figure{Width: w, Height: h, Panels: grid, Title: title}, nil
}

// PairedFigure is the paired difference of every method from the baseline: per environment and
// over all environments (normalised), the mean difference of the final scores over the seed
// pairs, with the outer ends of its t and bootstrap intervals. It needs a paired table.
func (c *Comparison) PairedFigure() (*plotstyle.Figure, error) {
	if c.NoPairs != "" {
		return nil, errors.New("paired: " + c.NoPairs)
	}
	base := c.Options.Baseline
	var panels []*plot.Plot
	scopes := c.Envs
	if len(c.Envs) > 1 {
		scopes = append([]string{AllEnvs}, c.Envs...)
	}
	for _, env := range scopes {
		var rows []string
		var ns []int
		var est []Estimate
		for _, r := range c.PairedRows(env, MeasureFinal) {
			rows, ns = append(rows, r.Method), append(ns, r.N)
			est = append(est, Estimate{Value: r.Mean.Value, Lo: math.Min(r.Mean.Lo, r.TInterval.Lo), Hi: math.Max(r.Mean.Hi, r.TInterval.Hi)})
		}
		if len(rows) == 0 {
			continue
		}
		title := env
		if env == AllEnvs {
			title = "all envs (normalised)"
		}
		p, err := c.intervalPanel(title, "difference from "+base+" (seed pairs)", rows, ns, est, 0)
		if err != nil {
			return nil, err
		}
		panels = append(panels, p)
	}
	grid := panelGrid(panels)
	title := fmt.Sprintf("Paired difference from %s (final %s), 95 %% t and bootstrap intervals", base, MetricWords(c.Options.Metric))
	w, h := figureSize(grid, 0.45*vg.Inch*vg.Length(len(c.Methods)-1)+1.3*vg.Inch, title)
	return &plotstyle.Figure{Width: w, Height: h, Panels: grid, Title: title}, nil
}

// ProfileFigure is the aggregate performance profile: for each threshold τ, the fraction of runs
// (pooled over environments) whose normalised final score exceeds τ, with 95 % bands.
func (c *Comparison) ProfileFigure() (*plotstyle.Figure, error) {
	p := newPlot("", "normalised score τ", "fraction of runs with score > τ")
	var ss []series
	for _, pr := range c.Profiles {
		n := 0
		for _, a := range c.Aggregate {
			if a.Method == pr.Method {
				n = a.N
			}
		}
		ss = append(ss, series{fmt.Sprintf("%s (n=%d)", pr.Method, n), c.methodIndex(pr.Method), pr.Tau, pr.Frac})
	}
	legend, err := addSeries(p, ss)
	if err != nil {
		return nil, err
	}
	p.Y.Min, p.Y.Max = 0, 1
	p.Y.Tick.Marker = rateTicks{}
	if len(c.Profiles) > 0 {
		if taus := c.Profiles[0].Tau; taus[0] >= 0 && taus[len(taus)-1] <= 1 {
			p.X.Tick.Marker = rateTicks{}
		}
	}
	title := fmt.Sprintf("Performance profile of final %s over %d env(s), 95 %% CI band", MetricWords(c.Options.Metric), len(c.Envs))
	return &plotstyle.Figure{Width: max(7*vg.Inch, plotstyle.TextStyle(13).Width(title)+vg.Inch/2), Height: 4.2 * vg.Inch,
		Legend: legend, Panels: [][]*plot.Plot{{p}}, Title: title}, nil
}
