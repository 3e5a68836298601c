// Package all registers every advantage estimator of graftrl; commands and the packages that
// resolve a config's estimator import it for its side effect so that any estimator.name resolves:
//
//   - drgrpo: GRPO without the division by the group std (Dr.GRPO)
//   - gigpo: episode term plus anchor-state step groups; sample std by default (GiGPO, ALGORITHMS.md §2)
//   - graft: Bellman expectation on the trajectory graph, normalised per node with the population std (GRAFT, ALGORITHMS.md §4)
//   - graphgpo: shortest path to the goal on the trajectory graph, plus GiGPO's episode term; sample std by default (GraphGPO, ALGORITHMS.md §3)
//   - grpo: trajectory-level group-normalised outcome (ALGORITHMS.md §1)
//
// A test holds this list to the registry, both ways.
package all

import (
	// Registered estimators.
	_ "github.com/graftrl/graftrl/graft"
	_ "github.com/graftrl/graftrl/grpo"
)
