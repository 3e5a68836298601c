package compare

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/graftrl/graftrl/internal/plotstyle"
)

// newPlot is a panel of the comparison report.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	return plotstyle.NewPanel(title, xlabel, ylabel, plotstyle.PanelText{Title: 12, TitlePad: vg.Points(6), Label: 11, Tick: 9})
}

// dashes keeps methods apart when the palette wraps around.
func dashes(i int) []vg.Length {
	if i < plotstyle.NumColours {
		return nil
	}
	return []vg.Length{vg.Points(5), vg.Points(3)}
}

func withAlpha(c color.NRGBA, a uint8) color.NRGBA {
	c.A = a
	return c
}
