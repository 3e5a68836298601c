package graft

import "github.com/graftrl/graftrl/advantage"

func init() {
	advantage.Register("graphgpo", "shortest path to the goal on the trajectory graph (GraphGPO, ALGORITHMS.md §3)", true,
		DefaultGraphGPOOptions, func(o GraphGPOOptions) (advantage.Estimator, error) { return NewGraphGPO(o) })
	advantage.Register("graft", "Bellman expectation on the trajectory graph (GRAFT, ALGORITHMS.md §4)", false,
		DefaultOptions, func(o Options) (advantage.Estimator, error) { return New(o) })
}
