package policy

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// initKind says how a parameter is initialised.
type initKind int

const (
	initNormal     initKind = iota // N(0, std²)
	initNormalProj                 // N(0, (std/√(2·layers))²): residual projections, GPT-2 style
	initZeros
	initOnes
)

// paramSpec is one named parameter of the transformer.
type paramSpec struct {
	name  string // "scope/name", e.g. "block0/wq"
	shape []int
	init  initKind
}

// paramSpecs lists every trainable parameter in a fixed order (the order of gradients, Adam moments
// and the host-side weight copy).
func paramSpecs(c Config) []paramSpec {
	d, f, v := c.DModel, c.Hidden(), c.Vocab
	specs := []paramSpec{
		{"embed/tok", []int{v, d}, initNormal},
		{"embed/pos", []int{c.MaxLen, d}, initNormal},
	}
	for l := range c.Layers {
		b := fmt.Sprintf("block%d/", l)
		specs = append(specs,
			paramSpec{b + "ln1_g", []int{d}, initOnes},
			paramSpec{b + "ln1_b", []int{d}, initZeros},
			paramSpec{b + "wq", []int{d, d}, initNormal},
			paramSpec{b + "bq", []int{d}, initZeros},
			paramSpec{b + "wk", []int{d, d}, initNormal},
			paramSpec{b + "bk", []int{d}, initZeros},
			paramSpec{b + "wv", []int{d, d}, initNormal},
			paramSpec{b + "bv", []int{d}, initZeros},
			paramSpec{b + "wo", []int{d, d}, initNormalProj},
			paramSpec{b + "bo", []int{d}, initZeros},
			paramSpec{b + "ln2_g", []int{d}, initOnes},
			paramSpec{b + "ln2_b", []int{d}, initZeros},
			paramSpec{b + "w1", []int{d, f}, initNormal},
			paramSpec{b + "b1", []int{f}, initZeros},
			paramSpec{b + "w2", []int{f, d}, initNormalProj},
			paramSpec{b + "b2", []int{d}, initZeros},
		)
	}
	specs = append(specs,
		paramSpec{"final/ln_g", []int{d}, initOnes},
		paramSpec{"final/ln_b", []int{d}, initZeros},
		paramSpec{"head/w", []int{d, v}, initNormal},
		paramSpec{"head/b", []int{v}, initZeros},
	)
	return specs
}

func (s paramSpec) size() int {
	n := 1
	for _, d := range s.shape {
		n *= d
	}
	return n
}

// initialValues draws the initial parameters on the host from a seeded generator, so that
// initialisation is identical across backends and reproducible from the seed.
func initialValues(c Config, seed uint64) [][]float32 {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	specs := paramSpecs(c)
	out := make([][]float32, len(specs))
	projStd := c.InitStd / math.Sqrt(2*float64(c.Layers))
	for i, s := range specs {
		vals := make([]float32, s.size())
		switch s.init {
		case initNormal:
			for j := range vals {
				vals[j] = float32(rng.NormFloat64() * c.InitStd)
			}
		case initNormalProj:
			for j := range vals {
				vals[j] = float32(rng.NormFloat64() * projStd)
			}
		case initOnes:
			for j := range vals {
				vals[j] = 1
			}
		}
		out[i] = vals
	}
	return out
}
