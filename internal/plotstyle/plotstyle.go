// Package plotstyle is the look of graftrl's figures, shared by the comparison report (compare)
// and the audit (audit): the colour-blind-safe palette, the typeface, panels and legends in one
// style, and Figure, a titled grid of panels with one legend, written as PNG or SVG.
package plotstyle

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// NumColours is the number of colours Colour has before it wraps around.
const NumColours = 8

// Colour is colour i (mod NumColours) of the Okabe–Ito colour-blind-safe palette, its yellow left
// out (unreadable on white). Method i of a comparison has colour i in every figure; the audit's
// figures colour their estimators the same way.
func Colour(i int) color.NRGBA {
	return [NumColours]color.NRGBA{
		{0x00, 0x72, 0xB2, 0xff}, // blue
		{0xD5, 0x5E, 0x00, 0xff}, // vermillion
		{0x00, 0x9E, 0x73, 0xff}, // bluish green
		{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
		{0xE6, 0x9F, 0x00, 0xff}, // orange
		{0x56, 0xB4, 0xE9, 0xff}, // sky blue
		{0x00, 0x00, 0x00, 0xff}, // black
		{0x88, 0x88, 0x88, 0xff}, // grey
	}[i%NumColours]
}

// Sans is the figures' typeface, Liberation Sans, at size.
func Sans(size vg.Length) font.Font {
	return font.From(font.Font{Typeface: "Liberation", Variant: "Sans"}, size)
}

// TextStyle is the style of a figure's free text (its title) at size.
func TextStyle(size vg.Length) draw.TextStyle {
	sty := plot.New().Title.TextStyle
	sty.Font = Sans(size)
	return sty
}

// PanelText sizes the text of a panel: its title and the gap below it, the axis labels and the
// tick labels.
type PanelText struct {
	Title, TitlePad, Label, Tick vg.Length
}

// NewPanel returns a panel in the figures' style: sans-serif text of the given sizes and a light
// grid behind the data.
func NewPanel(title, xlabel, ylabel string, size PanelText) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = Sans(size.Title)
	p.Title.Padding = size.TitlePad
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = Sans(size.Label)
		a.Tick.Label.Font = Sans(size.Tick)
	}
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 225}
	g.Horizontal.Color = color.Gray{Y: 225}
	p.Add(g)
	return p
}

// NewLegend returns a legend in the figures' style, for Figure.Legend.
func NewLegend() *plot.Legend {
	l := plot.NewLegend()
	l.TextStyle.Font = Sans(10)
	l.Padding = vg.Points(4)
	return &l
}

// PNGDPI is the resolution of PNG figures.
const PNGDPI = 150

// Figure is a titled grid of plot panels with one legend at the right, ready to be written as
// PNG or SVG.
type Figure struct {
	Width, Height vg.Length
	// Title is drawn centred above the panels.
	Title string
	// Panels are the plots, row-major; nil cells stay empty. Panels are aligned so that their
	// data areas have equal sizes.
	Panels [][]*plot.Plot
	// Legend, when set, is drawn in a column right of the panels.
	Legend *plot.Legend
}

// Save writes the figure to path; the extension chooses the format (.png, .svg).
func (f *Figure) Save(path string) error {
	var buf bytes.Buffer
	if err := f.Encode(&buf, strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}

// Encode writes the figure as "png" (at PNGDPI) or "svg".
func (f *Figure) Encode(w io.Writer, format string) error {
	var c vg.CanvasWriterTo
	switch format {
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(f.Width, f.Height), vgimg.UseDPI(PNGDPI))}
	case "svg":
		c = vgsvg.New(f.Width, f.Height)
	default:
		return fmt.Errorf("unsupported figure format %q (png, svg)", format)
	}
	f.Draw(draw.New(c))
	_, err := c.WriteTo(w)
	return err
}

// Draw draws the figure on a canvas.
func (f *Figure) Draw(dc draw.Canvas) {
	dc.FillPolygon(color.White, []vg.Point{dc.Min, {X: dc.Max.X, Y: dc.Min.Y}, dc.Max, {X: dc.Min.X, Y: dc.Max.Y}})
	pad := vg.Points(8)
	dc.Min.X += pad
	dc.Min.Y += pad
	dc.Max.X -= pad
	dc.Max.Y -= pad
	if f.Title != "" {
		sty := TextStyle(13)
		if w := sty.Width(f.Title); w > dc.Max.X-dc.Min.X {
			// Shrink a title too long for the figure rather than cut it off.
			sty = TextStyle(max(13*(dc.Max.X-dc.Min.X)/w, 7))
		}
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		dc.FillText(sty, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Max.Y}, f.Title)
		dc.Max.Y -= sty.Height(f.Title) + vg.Points(6)
	}
	if f.Legend != nil {
		r := f.Legend.Rectangle(dc)
		w := r.Max.X - r.Min.X
		legend := dc
		legend.Min.X = dc.Max.X - w
		legend.Max.Y -= vg.Points(16) // level with the top of the data area, below panel titles
		f.Legend.Top, f.Legend.Left = true, true
		f.Legend.Draw(legend)
		dc.Max.X -= w + vg.Points(12)
	}
	rows := len(f.Panels)
	if rows == 0 {
		return
	}
	cols := 0
	for _, r := range f.Panels {
		cols = max(cols, len(r))
	}
	grid := make([][]*plot.Plot, rows)
	for i, r := range f.Panels {
		grid[i] = make([]*plot.Plot, cols)
		copy(grid[i], r)
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(14), PadY: vg.Points(14)}
	canvases := plot.Align(grid, tiles, dc)
	for i := range grid {
		for j, p := range grid[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
}
