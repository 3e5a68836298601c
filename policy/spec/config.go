// Package spec holds the plain types of the policy: its architecture (Config), the loss and
// optimiser settings, the backend names, and the parameter layout (names, shapes, weight checks).
// It does not depend on GoMLX, so that the config, the sweep, the host sampler and the
// estimators can use them without linking it; package policy builds the model from them.
package spec

import "fmt"

// Config is the architecture of the policy: a decoder-only transformer.
type Config struct {
	// Vocab is the number of token ids (set from the vocabulary, not from YAML).
	Vocab int `yaml:"-" json:"vocab"`
	// DModel is the width of the residual stream.
	DModel int `yaml:"d_model" json:"d_model"`
	// Layers is the number of transformer blocks.
	Layers int `yaml:"layers" json:"layers"`
	// Heads is the number of attention heads; it must divide DModel.
	Heads int `yaml:"heads" json:"heads"`
	// DFF is the hidden width of the MLP (0 means 4·DModel).
	DFF int `yaml:"d_ff" json:"d_ff"`
	// MaxLen is the longest token sequence (the position table size and the KV-cache length).
	MaxLen int `yaml:"max_len" json:"max_len"`
	// InitStd is the standard deviation of the normal initialisation of embeddings and weights.
	InitStd float64 `yaml:"init_std" json:"init_std"`
}

// LayerNormEps is the LayerNorm ε, shared by the graph and the host inference engine.
const LayerNormEps = 1e-5

// MaxDevices is the largest number of devices an update is split over (policy.devices).
const MaxDevices = 64

// DefaultConfig is the quickstart model: d_model 64, 2 layers, 4 heads.
func DefaultConfig() Config {
	return Config{DModel: 64, Layers: 2, Heads: 4, DFF: 256, MaxLen: 128, InitStd: 0.02}
}

// HeadDim is DModel / Heads.
func (c Config) HeadDim() int { return c.DModel / c.Heads }

// Hidden is the MLP width.
func (c Config) Hidden() int {
	if c.DFF == 0 {
		return 4 * c.DModel
	}
	return c.DFF
}

// Validate checks the architecture; errors name the key (under policy.) and what is allowed.
func (c Config) Validate() error {
	switch {
	case c.DModel < 4 || c.DModel > 4096:
		return fmt.Errorf("policy.d_model: %d is out of range (allowed 4..4096)", c.DModel)
	case c.Layers < 1 || c.Layers > 64:
		return fmt.Errorf("policy.layers: %d is out of range (allowed 1..64)", c.Layers)
	case c.Heads < 1 || c.DModel%c.Heads != 0:
		return fmt.Errorf("policy.heads: %d must be ≥ 1 and divide d_model %d", c.Heads, c.DModel)
	case c.DFF < 0 || c.DFF > 65536:
		return fmt.Errorf("policy.d_ff: %d is out of range (allowed 0 (= 4·d_model) .. 65536)", c.DFF)
	case c.MaxLen < 8 || c.MaxLen > 8192:
		return fmt.Errorf("policy.max_len: %d is out of range (allowed 8..8192)", c.MaxLen)
	case !(c.InitStd > 0 && c.InitStd <= 1):
		return fmt.Errorf("policy.init_std: %g is out of range (allowed (0, 1])", c.InitStd)
	case c.Vocab < 2:
		return fmt.Errorf("policy vocabulary has %d tokens (need ≥ 2)", c.Vocab)
	}
	return nil
}

// NumParams is the number of trainable parameters.
func (c Config) NumParams() int {
	d, f, v := c.DModel, c.Hidden(), c.Vocab
	block := 2*2*d + 4*(d*d+d) + d*f + f + f*d + d
	return v*d + c.MaxLen*d + c.Layers*block + 2*d + d*v + v
}
