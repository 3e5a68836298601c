package audit

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/graftrl/graftrl/internal/plotstyle"
)

// newPlot is a panel of the audit's figures: the figures' style (plotstyle), with smaller text
// than the comparison report's.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	return plotstyle.NewPanel(title, xlabel, ylabel, plotstyle.PanelText{Title: 11, TitlePad: vg.Points(5), Label: 10, Tick: 9})
}

func fmtShort(v Num) string {
	if math.IsNaN(float64(v)) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", float64(v))
}

// ScatterFigure draws, for each estimator, its scale-matched advantage c·Â of every audited
// step against the step's true advantage A = Q − V, coloured by the trajectory's result, with
// the diagonal y = x: an unbiased estimator's points straddle it.
func ScatterFigure(r *Result) (*plotstyle.Figure, error) {
	lo, hi := math.Inf(1), math.Inf(-1)
	grow := func(v float64) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	for _, s := range r.Steps {
		grow(float64(s.A))
	}
	for e, m := range r.Metrics {
		for _, s := range r.Steps {
			grow(float64(m.Scale) * s.Est[e])
		}
	}
	if lo > hi {
		lo, hi = -1, 1
	}
	pad := 0.05 * math.Max(hi-lo, 1e-3)
	lo, hi = lo-pad, hi+pad
	cols := min(4, max(1, len(r.Metrics)))
	var panels [][]*plot.Plot
	var legend *plot.Legend
	for e, m := range r.Metrics {
		title := fmt.Sprintf("%s: r %s, ρ %s, c %.3g", m.Label, fmtShort(m.Pearson), fmtShort(m.Spearman), float64(m.Scale))
		p := newPlot(title, "true advantage A = Q − V", "scale-matched estimate c·Â")
		diag, err := plotter.NewLine(plotter.XYs{{X: lo, Y: lo}, {X: hi, Y: hi}})
		if err != nil {
			return nil, err
		}
		diag.Color = color.Gray{Y: 110}
		diag.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(diag)
		var series [2]plotter.XYs
		for _, s := range r.Steps {
			k := 0
			if s.Success {
				k = 1
			}
			if math.IsNaN(float64(s.A)) {
				continue
			}
			series[k] = append(series[k], plotter.XY{X: float64(s.A), Y: float64(m.Scale) * s.Est[e]})
		}
		names := [2]string{"step of a failed trajectory", "step of a successful trajectory"}
		cs := [2]color.NRGBA{plotstyle.Colour(1), plotstyle.Colour(0)}
		var scatters [2]*plotter.Scatter
		for k := range series {
			sc, err := plotter.NewScatter(series[k])
			if err != nil {
				return nil, err
			}
			c := cs[k]
			c.A = 150
			sc.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(1.8), Shape: draw.CircleGlyph{}}
			p.Add(sc)
			scatters[k] = sc
		}
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = lo, hi, lo, hi
		if legend == nil {
			legend = plotstyle.NewLegend()
			legend.Add(names[1], scatters[1])
			legend.Add(names[0], scatters[0])
			legend.Add("y = x", diag)
		}
		if e%cols == 0 {
			panels = append(panels, nil)
		}
		panels[len(panels)-1] = append(panels[len(panels)-1], p)
	}
	w := vg.Points(210)*vg.Length(cols) + vg.Points(190)
	h := vg.Points(200)*vg.Length(len(panels)) + vg.Points(30)
	title := fmt.Sprintf("Advantage audit, %s, iteration %d: %d steps, Q and V from %d continuations each; r, ρ weighted to the batch",
		r.Env, r.Iter, len(r.Steps), r.Settings.MC)
	return &plotstyle.Figure{Width: w, Height: h, Title: title, Panels: panels, Legend: legend}, nil
}

// CheckpointsFigure draws each estimator's Pearson r, Spearman ρ, sign agreement and NMSE
// against the truth over the audited checkpoints (results in iteration order).
func CheckpointsFigure(results []*Result) (*plotstyle.Figure, error) {
	if len(results) == 0 {
		return nil, fmt.Errorf("audit: no results to plot")
	}
	stats := []struct {
		title string
		get   func(m Metrics) Num
	}{
		{"Pearson r with the truth", func(m Metrics) Num { return m.Pearson }},
		{"Spearman ρ with the truth", func(m Metrics) Num { return m.Spearman }},
		{"sign agreement (resolved steps)", func(m Metrics) Num { return m.Sign }},
		{"NMSE after scale matching", func(m Metrics) Num { return m.NMSE }},
	}
	labels := results[len(results)-1].Estimators
	// An estimator whose statistics are within 0.001 of an earlier one's at every checkpoint
	// (graft-paper and graft-td are equal by construction, up to the paper mode's hop tolerance
	// and the rank ties it breaks: ALGORITHMS.md §4) is drawn once, its label joined to the
	// earlier one's.
	names := make([]string, len(labels))
	same := make([]bool, len(labels))
	values := make([][]float64, len(labels))
	for e, label := range labels {
		names[e] = label
		for _, r := range results {
			for _, m := range r.Metrics {
				if m.Label == label {
					for _, st := range stats {
						values[e] = append(values[e], float64(st.get(m)))
					}
				}
			}
		}
		for first := range e {
			if !same[first] && within(values[first], values[e], 1e-3) {
				names[first] += " = " + label
				same[e] = true
				break
			}
		}
	}
	legend := plotstyle.NewLegend()
	var row []*plot.Plot
	for si, st := range stats {
		p := newPlot(st.title, "training iteration", "")
		for e, label := range labels {
			if same[e] {
				continue
			}
			var pts plotter.XYs
			for _, r := range results {
				for _, m := range r.Metrics {
					if m.Label == label && !math.IsNaN(float64(st.get(m))) {
						pts = append(pts, plotter.XY{X: float64(r.Iter), Y: float64(st.get(m))})
					}
				}
			}
			if len(pts) == 0 {
				continue
			}
			l, sc, err := plotter.NewLinePoints(pts)
			if err != nil {
				return nil, err
			}
			l.Color = plotstyle.Colour(e)
			l.Width = vg.Points(1.4)
			if e >= plotstyle.NumColours/2 {
				l.Dashes = []vg.Length{vg.Points(5), vg.Points(2.5)}
			}
			sc.Color = plotstyle.Colour(e)
			sc.Radius = vg.Points(2)
			sc.Shape = glyph(e)
			p.Add(l, sc)
			if si == 0 {
				legend.Add(names[e], l, sc)
			}
		}
		row = append(row, p)
	}
	panels := [][]*plot.Plot{row[:2], row[2:]}
	return &plotstyle.Figure{Width: vg.Points(640), Height: vg.Points(470), Panels: panels, Legend: legend,
		Title: fmt.Sprintf("Advantage audit over training checkpoints, %s", results[0].Env)}, nil
}

// within reports whether a and b have the same length and differ by at most tol everywhere (NaNs
// matching NaNs).
func within(a, b []float64, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.IsNaN(a[i]) != math.IsNaN(b[i]) || math.Abs(a[i]-b[i]) > tol {
			return false
		}
	}
	return true
}

func glyph(i int) draw.GlyphDrawer {
	switch i % 4 {
	case 0:
		return draw.CircleGlyph{}
	case 1:
		return draw.SquareGlyph{}
	case 2:
		return draw.TriangleGlyph{}
	}
	return draw.PlusGlyph{}
}
