package policy

import (
	"math"
	"math/rand/v2"

	"github.com/graftrl/graftrl/policy/spec"
)

// initialValues draws the initial parameters on the host from a seeded generator, so that
// initialisation is identical across backends and reproducible from the seed.
func initialValues(c Config, seed uint64) [][]float32 {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	specs := spec.Params(c)
	out := make([][]float32, len(specs))
	projStd := c.InitStd / math.Sqrt(2*float64(c.Layers))
	for i, s := range specs {
		vals := make([]float32, s.Size())
		switch s.Init {
		case spec.InitNormal:
			for j := range vals {
				vals[j] = float32(rng.NormFloat64() * c.InitStd)
			}
		case spec.InitNormalProj:
			for j := range vals {
				vals[j] = float32(rng.NormFloat64() * projStd)
			}
		case spec.InitOnes:
			for j := range vals {
				vals[j] = 1
			}
		}
		out[i] = vals
	}
	return out
}
