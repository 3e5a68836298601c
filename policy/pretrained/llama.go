package pretrained

import "fmt"

// Config is the architecture of a Llama decoder (as in Hugging Face transformers'
// modeling_llama.py): RMSNorm, grouped-query attention with RoPE, a SwiGLU MLP, and the output
// layer tied to the token embedding.
type Config struct {
	Layers   int     // decoder blocks
	DModel   int     // embedding width
	Hidden   int     // width of the MLP's gate and up projections
	Heads    int     // query heads
	KVHeads  int     // key/value heads; each serves Heads/KVHeads query heads
	HeadDim  int     // width of one head (even, for RoPE's pairs)
	Vocab    int     // token embedding rows
	RopeBase float64 // RoPE's θ base
	NormEps  float64 // RMSNorm's ε
}

// Validate reports the first size that cannot describe a Llama decoder.
func (c Config) Validate() error {
	switch {
	case c.Layers < 1 || c.DModel < 1 || c.Hidden < 1 || c.Vocab < 1:
		return fmt.Errorf("pretrained: llama sizes must be positive: %+v", c)
	case c.Heads < 1 || c.KVHeads < 1 || c.Heads%c.KVHeads != 0:
		return fmt.Errorf("pretrained: llama heads %d must be a positive multiple of the KV heads %d", c.Heads, c.KVHeads)
	case c.HeadDim < 2 || c.HeadDim%2 != 0:
		return fmt.Errorf("pretrained: llama head dim %d must be even and positive", c.HeadDim)
	case c.RopeBase <= 1 || c.NormEps <= 0:
		return fmt.Errorf("pretrained: llama RoPE base %v must exceed 1 and the norm ε %v be positive", c.RopeBase, c.NormEps)
	}
	return nil
}

// Weights are a Llama decoder's parameters as float32, each matrix row-major [out, in]
// (PyTorch's nn.Linear layout, which is also a GGUF tensor's row order). The query and key
// projections are in GGUF's layout: within each head, the rows that RoPE rotates together are
// adjacent (2i, 2i+1), where transformers keeps them half a head apart (i, i+hd/2). Both give
// the same attention; Llama applies RoPE to the adjacent pairs.
type Weights struct {
	TokenEmbd  []float32 // [Vocab, DModel], also the output layer
	Layers     []LayerWeights
	OutputNorm []float32 // [DModel]
}

// LayerWeights are one decoder block's parameters (see Weights for the layouts).
type LayerWeights struct {
	AttnNorm []float32 // [DModel]
	Q        []float32 // [Heads·HeadDim, DModel]
	K, V     []float32 // [KVHeads·HeadDim, DModel]
	O        []float32 // [DModel, Heads·HeadDim]
	FFNNorm  []float32 // [DModel]
	Gate, Up []float32 // [Hidden, DModel]
	Down     []float32 // [DModel, Hidden]
}

// NumParams is the number of parameters (the output layer tied to the embedding, counted once).
func (c Config) NumParams() int {
	q, k := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	block := 2*c.DModel + c.DModel*(q+2*k) + q*c.DModel + 3*c.DModel*c.Hidden
	return c.Vocab*c.DModel + c.Layers*block + c.DModel
}
