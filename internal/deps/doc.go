// Package deps holds the test that keeps GoMLX out of the packages that have no use for it:
// the config, the sweep, the comparison, the host sampler, the rollouts and the estimators.
package deps
