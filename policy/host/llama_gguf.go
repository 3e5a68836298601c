package host

import (
	"fmt"

	"github.com/graftrl/graftrl/modelfile"
	"github.com/graftrl/graftrl/policy/pretrained"
)

// LoadLlamaGGUF builds the Llama decoder of a llama GGUF (its architecture and weights read by
// pretrained.FromGGUF, which refuses another architecture or a missing or misshapen tensor by
// name).
func LoadLlamaGGUF(g *modelfile.GGUF) (*Llama, error) {
	c, w, err := pretrained.FromGGUF(g)
	if err != nil {
		return nil, err
	}
	m, err := NewLlama(c, w)
	if err != nil {
		return nil, fmt.Errorf("host: llama GGUF: %w", err)
	}
	return m, nil
}
