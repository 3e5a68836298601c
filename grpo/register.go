package grpo

import "github.com/graftrl/graftrl/advantage"

func init() {
	advantage.Register("grpo", "trajectory-level group-normalised outcome (ALGORITHMS.md §1)", true,
		DefaultOptions, func(o Options) (advantage.Estimator, error) { return New(o) })
	advantage.Register("drgrpo", "GRPO without the division by the group std (Dr.GRPO)", true,
		DefaultOptions, func(o Options) (advantage.Estimator, error) { return NewDrGRPO(o) })
	advantage.Register("gigpo", "episode term plus anchor-state step groups; sample std by default (GiGPO, ALGORITHMS.md §2)", true,
		DefaultGiGPOOptions, func(o GiGPOOptions) (advantage.Estimator, error) { return NewGiGPO(o) })
}
