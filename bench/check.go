package bench

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/graftrl/graftrl/policy"
	"github.com/graftrl/graftrl/policy/spec"
)

// Check is a cross-check file: a policy's weights (after a few updates, so that they are not the
// small initial values), a batch of tokens and graftrl's logits for it. torch_ref.py --check loads
// the weights into its own implementation and compares the logits, which shows that the reference
// computes the same function.
type Check struct {
	Config  policy.Config `json:"config"`
	Names   []string      `json:"names"`
	Weights [][]float32   `json:"weights"`
	Rows    int           `json:"rows"`
	Len     int           `json:"len"`
	Tokens  []int32       `json:"tokens"`
	Logits  []float32     `json:"logits"`
}

// WriteCheck writes a Check for architecture c to path, computed on the given backend ("" for
// the default).
func WriteCheck(path string, c policy.Config, backendName string) error {
	backend, err := policy.NewBackend(policy.BackendOptions{Name: backendName})
	if err != nil {
		return err
	}
	p, err := policy.New(backend, policy.Options{Model: c, Loss: benchLoss(), Optim: spec.DefaultOptimConfig(), Seed: 5})
	if err != nil {
		return err
	}
	length := min(c.MaxLen, 48)
	for range 3 {
		if _, err := p.Update(policy.SyntheticBatch(c, 4, length, 2), 3e-2); err != nil {
			return err
		}
	}
	w, err := p.Weights()
	if err != nil {
		return err
	}
	ck := Check{Config: c, Names: spec.ParamNames(c), Weights: w, Rows: 2, Len: length}
	rng := rand.New(rand.NewPCG(9, 9))
	for range ck.Rows * ck.Len {
		ck.Tokens = append(ck.Tokens, int32(rng.IntN(c.Vocab)))
	}
	if ck.Logits, err = p.Logits(ck.Rows, ck.Len, ck.Tokens); err != nil {
		return err
	}
	data, err := json.Marshal(ck)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("bench: write check: %w", err)
	}
	return nil
}
