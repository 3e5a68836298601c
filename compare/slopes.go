package compare

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"
)

// SlopesCSV is the file of SlopesTable.
const SlopesCSV = "slopes.csv"

// SlopeRow is the trend of one method's paired final difference from the baseline along the
// first levels axis, within one panel (one combination of the other axes' values): the
// least-squares slope of the pair differences on each environment's x, over every pair of the
// panel's environments.
type SlopeRow struct {
	// Panel names the other axes' values ("lr=1e-4"; "" with one axis).
	Panel, Method string
	// X says what the slope is taken against: the warm start's measured wasted share in
	// successes (LevelRow.StartWasted) where the environments have waste targets, else the first
	// axis' value.
	X string
	// N is the number of pairs, Envs the number of environments they come from.
	N, Envs int
	// Slope is the difference's change per unit of X, SE its standard error, Lo and Hi its
	// t interval (n − 2 degrees of freedom) at the comparison's confidence.
	Slope, SE, Lo, Hi float64
	// T, DF and P are the t-test of a zero slope (two-sided); PHolm its p after Holm's
	// correction over every slope of the comparison (one family of its own).
	T, DF, P, PHolm float64
}

// slopeRows fits the slopes of every panel and non-baseline method along the first axis;
// nil without levels, without pairs, or where no panel has two distinct x values.
func (c *Comparison) slopeRows() []SlopeRow {
	if len(c.Levels) == 0 || c.NoPairs != "" {
		return nil
	}
	xOf, label := c.slopeX()
	var rows []SlopeRow
	for _, panel := range c.slopePanels() {
		for _, m := range c.Methods[1:] {
			var xs, ys []float64
			envs := 0
			for _, lr := range c.Levels {
				x, ok := xOf(lr)
				if !ok || panelOf(c.Options.Levels.Axes, lr.Values) != panel {
					continue
				}
				n := len(xs)
				for _, p := range c.Pairs {
					if p.Env != lr.Env || p.Run.Method != m {
						continue
					}
					a, oka := c.measureOf(p.Run, MeasureFinal)
					b, okb := c.measureOf(p.Base, MeasureFinal)
					if oka && okb {
						xs, ys = append(xs, x), append(ys, a-b)
					}
				}
				if len(xs) > n {
					envs++
				}
			}
			if r, ok := c.fitSlope(xs, ys); ok {
				r.Panel, r.Method, r.X, r.Envs = panel, m, label, envs
				rows = append(rows, r)
			}
		}
	}
	var ps []float64
	for _, r := range rows {
		ps = append(ps, r.P)
	}
	for i, p := range Holm(ps) {
		rows[i].PHolm = p
	}
	return rows
}

// slopeX returns each level row's x and what it is: the measured wasted share when the
// environments have waste targets, else the first axis' value where it is a number.
func (c *Comparison) slopeX() (func(LevelRow) (float64, bool), string) {
	if c.hasWasteTargets() {
		return func(r LevelRow) (float64, bool) { return r.StartWasted, !math.IsNaN(r.StartWasted) },
			"the warm start's wasted share in successes (measured)"
	}
	return func(r LevelRow) (float64, bool) {
		v, err := strconv.ParseFloat(r.Values[0], 64)
		return v, err == nil
	}, c.Options.Levels.Axes[0]
}

// slopePanels lists the panels of the level rows in their order.
func (c *Comparison) slopePanels() []string {
	var out []string
	for _, r := range c.Levels {
		if p := panelOf(c.Options.Levels.Axes, r.Values); !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// panelOf names the values of the axes after the first: "lr=1e-4, task=maze".
func panelOf(axes, values []string) string {
	var parts []string
	for i := 1; i < len(axes) && i < len(values); i++ {
		parts = append(parts, axes[i]+"="+values[i])
	}
	return strings.Join(parts, ", ")
}

// fitSlope is the least-squares line y = a + b·x: b = Σ(x−x̄)(y−ȳ)/Σ(x−x̄)², its standard error
// √(s²/Σ(x−x̄)²) with s² the residuals' Σ/(n − 2), and the t-test of b = 0 on n − 2 degrees of
// freedom. ok is false with fewer than 3 points or fewer than 2 distinct x.
func (c *Comparison) fitSlope(xs, ys []float64) (SlopeRow, bool) {
	n := len(xs)
	if n < 3 {
		return SlopeRow{}, false
	}
	mx, my := Mean(xs), Mean(ys)
	var sxx, sxy float64
	for i := range xs {
		sxx += (xs[i] - mx) * (xs[i] - mx)
		sxy += (xs[i] - mx) * (ys[i] - my)
	}
	if sxx == 0 {
		return SlopeRow{}, false
	}
	b := sxy / sxx
	var rss float64
	for i := range xs {
		e := ys[i] - (my + b*(xs[i]-mx))
		rss += e * e
	}
	df := float64(n - 2)
	se := math.Sqrt(rss / df / sxx)
	r := SlopeRow{N: n, Slope: b, SE: se, DF: df, T: math.NaN(), P: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	if se > 0 {
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
		half := t.Quantile(1-(1-c.Options.Bootstrap.Confidence)/2) * se
		r.T = b / se
		r.P = 2 * t.CDF(-math.Abs(r.T))
		r.Lo, r.Hi = b-half, b+half
	}
	return r, true
}

// SlopesTable is slopes.csv: a header, then one row per panel and method (only the header when
// there are no slopes).
func (c *Comparison) SlopesTable() [][]string {
	out := [][]string{{"panel", "method", "x", "n", "envs", "slope", "se", "t_lo", "t_hi", "t", "df", "p_t", "p_t_holm"}}
	for _, r := range c.Slopes {
		out = append(out, []string{r.Panel, r.Method, r.X, strconv.Itoa(r.N), strconv.Itoa(r.Envs), csvNum(r.Slope), csvNum(r.SE),
			csvNum(r.Lo), csvNum(r.Hi), csvNum(r.T), csvNum(r.DF), csvNum(r.P), csvNum(r.PHolm)})
	}
	return out
}

// slopesSection is the report's paragraph and table of the slopes, below the levels table.
func (c *Comparison) slopesSection() doc {
	if len(c.Slopes) == 0 {
		return nil
	}
	_, label := c.slopeX()
	t := table{head: []string{"panel", "method", "slope (95 % t CI)", "pairs (envs)", "p", "Holm p"}}
	tested := 0
	for _, r := range c.Slopes {
		if !math.IsNaN(r.P) {
			tested++
		}
		t.rows = append(t.rows, []string{cmp.Or(r.Panel, "—"), r.Method + " − " + c.Options.Baseline,
			fmt.Sprintf("%+.3f [%+.3f, %+.3f]", r.Slope, r.Lo, r.Hi), fmt.Sprintf("%d (%d)", r.N, r.Envs),
			fmtPValue(r.P), fmtPValue(r.PHolm)})
	}
	return doc{para(fmt.Sprintf("Trend along the first axis: per panel and method, the least-squares slope of the paired final differences from %s on %s, over every pair of the panel's environments, with its 95 %% t interval (n − 2 degrees of freedom); Holm's correction runs over the %d slope(s) with a test, a family of its own. A slope is the change of the difference per unit of x (for a share: per 1.0, that is per 100 points). Every number: %s.",
		c.Options.Baseline, label, tested, SlopesCSV)), t}
}
