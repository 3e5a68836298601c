package graft

import "github.com/graftrl/graftrl/advantage"

func init() {
	advantage.Register("graphgpo", "shortest path to the goal on the trajectory graph, plus GiGPO's episode term; sample std by default (GraphGPO, ALGORITHMS.md §3)", true,
		DefaultGraphGPOOptions, func(o GraphGPOOptions) (advantage.Estimator, error) { return NewGraphGPO(o) })
	advantage.Register("graft", "Bellman expectation on the trajectory graph, normalised per node with the population std (GRAFT, ALGORITHMS.md §4)", false,
		DefaultOptions, func(o Options) (advantage.Estimator, error) { return New(o) })
}
