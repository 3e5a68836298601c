package trainer

import (
	"errors"

	"github.com/graftrl/graftrl/policy"
	"github.com/graftrl/graftrl/rollout"
)

func newHostSampler(c policy.Config, w [][]float32, slots int) (interface{ SetWeights([][]float32) error }, rollout.Decoder, error) {
	return nil, nil, errors.New("host sampler not built yet")
}
