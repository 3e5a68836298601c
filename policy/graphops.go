package policy

import (
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
)

// The pure-Go backend runs a graph node by node, and its per-element cost differs a lot between
// ops that compute the same thing. Measured on the build machine with the backend's own executors
// (ns per element, float32): same-shape binary op 0.6, op with a scalar 0.35, binary op with
// implicit broadcasting 4.6–5, GoMLX's Softmax ~30. The helpers below are the cheap forms, which
// graftrl's Go-backend executors (internal/gobackend) run fastest: explicit broadcasts and reductions over the last
// axis instead of implicit broadcasting and Softmax. They compute the same function: only the
// order of float32 additions differs.

// sumLast sums x over its last axis.
func sumLast(x *Node) *Node {
	return ReduceSum(x, -1)
}

// broadcastLast repeats v (shape dims[:r−1]) along a new last axis of size dims[r−1].
func broadcastLast(v *Node, dims []int) *Node {
	return ExpandAndBroadcast(v, dims, []int{len(dims) - 1})
}

// broadcastLeading repeats v (shape dims[len(dims)−v.Rank():]) over the leading axes of dims.
func broadcastLeading(v *Node, dims []int) *Node {
	lead := make([]int, len(dims)-v.Rank())
	for i := range lead {
		lead[i] = i
	}
	return ExpandAndBroadcast(v, dims, lead)
}

// addBias adds a bias over the last axis of y with an explicit broadcast: cheaper on the Go backend
// than an implicitly broadcast Add, and its gradient is the same reduction.
func addBias(y, b *Node) *Node {
	return Add(y, broadcastLeading(b, y.Shape().Dimensions))
}
