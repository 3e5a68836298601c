// Package gradients registers graftrl's gradients of two GoMLX ops, DotGeneral and
// BroadcastInDim, in place of GoMLX v0.26's. They are graph-level rewrites, not executors: the
// gradient graph they build runs on every backend, and on every backend it is the faster one.
// GoMLX's DotGeneral gradient materialises a [tokens × in × out] product per dense layer, which
// neither the pure-Go backend nor XLA fuses away; graftrl's is two DotGenerals.
//
// Nothing happens on import: Register patches GoMLX's gradient table, once per process, and the
// backend selection (policy.NewBackend) calls it before any graph is built, whichever backend is
// chosen. The package reads gomlx v0.26.0 internals (see dot.go); gomlx is pinned and the tests
// fail if those internals move.
package gradients

import "sync"

// registerOnce guards Register: the broadcast registration wraps the gradient it finds, so
// registering twice would wrap graftrl's own.
var registerOnce sync.Once

// Register replaces GoMLX's gradients of DotGeneral and BroadcastInDim with graftrl's, once per
// process; later calls do nothing. Graphs built before the first call keep GoMLX's gradients.
func Register() {
	registerOnce.Do(func() {
		registerDot()
		registerBroadcast()
	})
}
