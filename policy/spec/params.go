package spec

import "fmt"

// Init says how a parameter is initialised.
type Init int

// The initialisations of Param.Init.
const (
	InitNormal     Init = iota // N(0, std²)
	InitNormalProj             // N(0, (std/√(2·layers))²): residual projections, GPT-2 style
	InitZeros
	InitOnes
)

// Param is one named parameter of the transformer.
type Param struct {
	// Name is "scope/name", e.g. "block0/wq".
	Name string
	// Shape is the parameter's dimensions.
	Shape []int
	// Init is how it is initialised.
	Init Init
}

// Params lists every trainable parameter in a fixed order (the order of gradients, Adam moments,
// checkpoints and the host-side weight copy).
func Params(c Config) []Param {
	d, f, v := c.DModel, c.Hidden(), c.Vocab
	specs := []Param{
		{"embed/tok", []int{v, d}, InitNormal},
		{"embed/pos", []int{c.MaxLen, d}, InitNormal},
	}
	for l := range c.Layers {
		b := fmt.Sprintf("block%d/", l)
		specs = append(specs,
			Param{b + "ln1_g", []int{d}, InitOnes},
			Param{b + "ln1_b", []int{d}, InitZeros},
			Param{b + "wq", []int{d, d}, InitNormal},
			Param{b + "bq", []int{d}, InitZeros},
			Param{b + "wk", []int{d, d}, InitNormal},
			Param{b + "bk", []int{d}, InitZeros},
			Param{b + "wv", []int{d, d}, InitNormal},
			Param{b + "bv", []int{d}, InitZeros},
			Param{b + "wo", []int{d, d}, InitNormalProj},
			Param{b + "bo", []int{d}, InitZeros},
			Param{b + "ln2_g", []int{d}, InitOnes},
			Param{b + "ln2_b", []int{d}, InitZeros},
			Param{b + "w1", []int{d, f}, InitNormal},
			Param{b + "b1", []int{f}, InitZeros},
			Param{b + "w2", []int{f, d}, InitNormalProj},
			Param{b + "b2", []int{d}, InitZeros},
		)
	}
	specs = append(specs,
		Param{"final/ln_g", []int{d}, InitOnes},
		Param{"final/ln_b", []int{d}, InitZeros},
		Param{"head/w", []int{d, v}, InitNormal},
		Param{"head/b", []int{v}, InitZeros},
	)
	return specs
}

// Size is the number of values of the parameter.
func (s Param) Size() int {
	n := 1
	for _, d := range s.Shape {
		n *= d
	}
	return n
}

// ParamNames lists the parameter names of a configuration in the fixed order of Params.
func ParamNames(c Config) []string {
	specs := Params(c)
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return names
}

// CheckWeights checks that w holds one array per parameter of c, each of the size of its shape
// (the layout of policy.Policy.Weights); errors name the first parameter that differs.
func CheckWeights(c Config, w [][]float32) error {
	return CheckParamWeights(Params(c), w)
}

// CheckParamWeights checks that w holds one array per parameter of specs, in their order, each
// of the size of its shape; errors name the first parameter that differs.
func CheckParamWeights(specs []Param, w [][]float32) error {
	if len(w) != len(specs) {
		return fmt.Errorf("policy: %d weight arrays for a policy of %d parameters", len(w), len(specs))
	}
	for i, s := range specs {
		if len(w[i]) != s.Size() {
			return fmt.Errorf("policy: weight %s has %d values, want %d (shape %v)", s.Name, len(w[i]), s.Size(), s.Shape)
		}
	}
	return nil
}

// ParamShapes lists the parameter shapes in the order of ParamNames.
func ParamShapes(c Config) [][]int {
	specs := Params(c)
	out := make([][]int, len(specs))
	for i, s := range specs {
		out[i] = s.Shape
	}
	return out
}
