package trainer

import "github.com/graftrl/graftrl/advantage"

// Estimator turns a batch of trajectories into one advantage per step (advantage.Estimator).
type Estimator = advantage.Estimator

// EstimatorNames lists the registered estimators, sorted (advantage.Names).
func EstimatorNames() []string { return advantage.Names() }

// NewEstimator builds the named estimator from its config options (advantage.New).
func NewEstimator(name string, options map[string]any) (Estimator, error) {
	return advantage.New(name, options)
}
