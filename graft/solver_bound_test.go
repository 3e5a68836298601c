package graft

import (
	"math"
	"testing"
)

// TestGaussSeidelErrorBound pins what the stopping rule promises. A sweep of the solver is a
// γ-contraction in the max norm (each row's weights sum to at most γ once divided by 1 − self),
// so when it stops after a sweep that changed no value by tol or more, the values are within
// γ/(1−γ)·tol of the exact solution — and no closer in general: on a two-node cycle with γ near 1
// the error is well above tol itself. Exact values by hand: x0 = 1 + γ·x1, x1 = γ·x0 give
// x0 = 1/(1 − γ²), x1 = γ/(1 − γ²).
func TestGaussSeidelErrorBound(t *testing.T) {
	for _, c := range []struct{ gamma, tol float64 }{{0.99, 1e-8}, {0.999, 1e-8}, {0.9, 1e-6}, {0.99, 1e-4}} {
		s := &system{
			nodes: []int32{0, 1}, start: []int32{0, 1, 2}, to: []int32{1, 0},
			w: []float64{c.gamma, c.gamma}, c: []float64{1, 0}, self: []float64{0, 0},
		}
		V := make([]float64, 2)
		gaussSeidel(s, V, c.tol, 1<<20)
		x0 := 1 / (1 - c.gamma*c.gamma)
		err := max(math.Abs(V[0]-x0), math.Abs(V[1]-c.gamma*x0))
		bound := c.gamma / (1 - c.gamma) * c.tol
		if err > bound {
			t.Errorf("γ %g, tol %g: error %.3g above the bound γ/(1−γ)·tol = %.3g", c.gamma, c.tol, err, bound)
		}
		if c.gamma >= 0.99 && err <= c.tol {
			t.Errorf("γ %g, tol %g: error %.3g within tol: the case no longer shows tol is not an error bound", c.gamma, c.tol, err)
		}
	}
}
