package plotstyle

import (
	"bytes"
	"image/png"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// A figure of two panels with a legend encodes as a PNG of its size at PNGDPI and as an SVG; any
// other format is refused.
func TestFigureEncode(t *testing.T) {
	p := NewPanel("panel", "x", "y", PanelText{Title: 11, TitlePad: vg.Points(5), Label: 10, Tick: 9})
	l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		t.Fatal(err)
	}
	l.Color = Colour(1)
	p.Add(l)
	legend := NewLegend()
	legend.Add("line", l)
	f := &Figure{Width: 4 * vg.Inch, Height: 2 * vg.Inch, Title: "a figure", Panels: [][]*plot.Plot{{p, nil}}, Legend: legend}

	var buf bytes.Buffer
	if err := f.Encode(&buf, "png"); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 4*PNGDPI || b.Dy() != 2*PNGDPI {
		t.Errorf("PNG is %d×%d pixels, want %d×%d", b.Dx(), b.Dy(), 4*PNGDPI, 2*PNGDPI)
	}
	buf.Reset()
	if err := f.Encode(&buf, "svg"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "<svg") {
		t.Error("SVG output has no <svg element")
	}
	if err := f.Encode(&buf, "gif"); err == nil {
		t.Error("Encode as gif: no error")
	}
}

// The palette wraps around after NumColours colours.
func TestColourWraps(t *testing.T) {
	if Colour(NumColours+2) != Colour(2) || Colour(0) == Colour(1) {
		t.Error("Colour does not cycle through NumColours distinct colours")
	}
}
