package compare

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
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

// newPlot is a panel of the comparison report.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	return NewPanel(title, xlabel, ylabel, PanelText{Title: 12, TitlePad: vg.Points(6), Label: 11, Tick: 9})
}

// dashes keeps methods apart when the palette wraps around.
func dashes(i int) []vg.Length {
	if i < NumColours {
		return nil
	}
	return []vg.Length{vg.Points(5), vg.Points(3)}
}

func withAlpha(c color.NRGBA, a uint8) color.NRGBA {
	c.A = a
	return c
}

func textStyle(size vg.Length) draw.TextStyle {
	sty := plot.New().Title.TextStyle
	sty.Font = Sans(size)
	return sty
}
