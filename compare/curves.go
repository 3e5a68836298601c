package compare

import (
	"errors"
	"fmt"
	"math"
)

// Interpolate samples a learning curve at the given env-step budgets. Runs evaluate after fixed
// iterations, and an iteration's env steps depend on how long its episodes were, so the runs of
// a comparison are evaluated at different env-step counts; sampling every curve on one grid of
// budgets aligns them. Between two evaluations the value is interpolated linearly in env steps;
// outside [first, last] evaluation it is NaN (never extrapolated). pts must be sorted by
// EnvSteps (Run.Curve is); at repeated env steps the later evaluation wins.
func Interpolate(pts []Point, grid []float64) []float64 {
	out := make([]float64, len(grid))
	j := 0
	for k, x := range grid {
		out[k] = math.NaN()
		if len(pts) == 0 || x < pts[0].EnvSteps || x > pts[len(pts)-1].EnvSteps {
			continue
		}
		// Advance to the last point at or before x (grids are usually increasing, but any
		// order works because j restarts when x moves back).
		if j > 0 && pts[j].EnvSteps > x {
			j = 0
		}
		for j+1 < len(pts) && pts[j+1].EnvSteps <= x {
			j++
		}
		if pts[j].EnvSteps == x || j+1 == len(pts) {
			out[k] = pts[j].Value
			continue
		}
		a, b := pts[j], pts[j+1]
		w := (x - a.EnvSteps) / (b.EnvSteps - a.EnvSteps)
		out[k] = a.Value + w*(b.Value-a.Value)
	}
	return out
}

// CommonGrid returns n budgets evenly spaced over the env-step span every curve covers: from the
// latest first evaluation to the earliest last evaluation. With eval.at_start every curve starts
// at 0 env steps; the grid then ends at the smallest final budget, so no run is extrapolated.
func CommonGrid(curves [][]Point, n int) ([]float64, error) {
	if n < 2 {
		return nil, fmt.Errorf("curve grid: %d points (need at least 2)", n)
	}
	if len(curves) == 0 {
		return nil, errors.New("curve grid: no curves")
	}
	lo, hi := math.Inf(-1), math.Inf(1)
	for _, c := range curves {
		if len(c) == 0 {
			return nil, errors.New("curve grid: a run has no evaluation of the metric")
		}
		lo = math.Max(lo, c[0].EnvSteps)
		hi = math.Min(hi, c[len(c)-1].EnvSteps)
	}
	if lo > hi {
		return nil, fmt.Errorf("curve grid: the runs' evaluations share no env-step span (latest start %.0f, earliest end %.0f)", lo, hi)
	}
	grid := make([]float64, n)
	for k := range grid {
		grid[k] = lo + (hi-lo)*float64(k)/float64(n-1)
	}
	return grid, nil
}
