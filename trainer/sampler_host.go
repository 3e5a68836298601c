package trainer

import (
	"github.com/graftrl/graftrl/policy"
	"github.com/graftrl/graftrl/policy/host"
	"github.com/graftrl/graftrl/rollout"
)

// newHostSampler builds the dedicated CPU inference path for rollouts: a pure-Go copy of the
// policy that reads the very same weights after every update.
func newHostSampler(c policy.Config, w [][]float32, slots int) (*host.Model, rollout.Decoder, error) {
	h, err := host.New(c, w)
	if err != nil {
		return nil, nil, err
	}
	return h, h.NewDecoder(slots), nil
}
