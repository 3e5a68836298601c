package policy

import (
	"fmt"

	"github.com/gomlx/gomlx/pkg/ml/context/checkpoints"
)

// Save writes every variable (parameters, Adam moments and step, reference policy) into dir
// through GoMLX's checkpoints package. dir must be empty or absent.
func (p *Policy) Save(dir string) error {
	prev := p.ctx.Loader()
	h, err := checkpoints.Build(p.ctx).Dir(dir).Keep(-1).Done()
	if err != nil {
		return fmt.Errorf("policy: checkpoint %s: %w", dir, err)
	}
	defer p.ctx.SetLoader(prev) // the handler installs itself as the context's loader
	if err := h.Save(); err != nil {
		return fmt.Errorf("policy: checkpoint %s: %w", dir, err)
	}
	return nil
}

// Load replaces every variable with the values saved in dir by Save. The architecture must match.
func (p *Policy) Load(dir string) (err error) {
	defer func() {
		if r := recover(); r != nil { // GoMLX panics on a shape mismatch
			err = fmt.Errorf("policy: load checkpoint %s: %v", dir, r)
		}
	}()
	prev := p.ctx.Loader()
	defer p.ctx.SetLoader(prev)
	h, err := checkpoints.Load(p.ctx).Dir(dir).Immediate().Done()
	if err != nil {
		return fmt.Errorf("policy: load checkpoint %s: %w", dir, err)
	}
	if left := h.LoadedVariables(); len(left) > 0 {
		return fmt.Errorf("policy: checkpoint %s holds %d variables this policy does not have (different architecture?)", dir, len(left))
	}
	for _, v := range p.theta {
		t, err := v.Value()
		if err != nil || t == nil {
			return fmt.Errorf("policy: checkpoint %s lacks %s", dir, v.Name())
		}
	}
	return nil
}
