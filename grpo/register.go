package grpo

import "github.com/graftrl/graftrl/advantage"

// drGRPOOptions are Options under Dr.GRPO's registry name, so that their errors name drgrpo.
type drGRPOOptions Options

// Validate reports the first option whose value is out of range, as Dr.GRPO's.
func (o drGRPOOptions) Validate() error { return Options(o).validate("drgrpo") }

func init() {
	advantage.Register("grpo", "trajectory-level group-normalised outcome (ALGORITHMS.md §1)", true,
		DefaultOptions, func(o Options) (advantage.Estimator, error) { return New(o) })
	advantage.Register("drgrpo", "GRPO without the division by the group std (Dr.GRPO)", true,
		func() drGRPOOptions { return drGRPOOptions(DefaultOptions()) },
		func(o drGRPOOptions) (advantage.Estimator, error) { return NewDrGRPO(Options(o)) })
	advantage.Register("gigpo", "episode term plus anchor-state step groups (GiGPO, ALGORITHMS.md §2)", true,
		DefaultGiGPOOptions, func(o GiGPOOptions) (advantage.Estimator, error) { return NewGiGPO(o) })
}
