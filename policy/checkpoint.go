package policy

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/context/checkpoints"

	"github.com/graftrl/graftrl/policy/spec"
)

// Save writes every variable (parameters, Adam moments and step, the reference policy, the
// global step) into dir through GoMLX's checkpoints package. dir must be empty or absent. A
// LoRA policy's checkpoint leaves the frozen base out: it holds the adapters, their Adam
// moments, the Adam step and the global step.
func (p *Policy) Save(dir string) error {
	prev := p.ctx.Loader()
	cfg := checkpoints.Build(p.ctx).Dir(dir).Keep(-1)
	if p.lora != nil {
		cfg = cfg.ExcludeVars(p.theta...)
	}
	if p.llama != nil {
		// gzip saves a few percent of a pretrained model's float32 weights and moments, for
		// ~40 s per save and as long a load (SmolLM2-135M: 1.6 GB); Load reads either format.
		cfg = cfg.WithCompression(checkpoints.BinUncompressed)
	}
	h, err := cfg.Done()
	if err != nil {
		return fmt.Errorf("policy: checkpoint %s: %w", dir, err)
	}
	defer p.ctx.SetLoader(prev) // the handler installs itself as the context's loader
	if err := h.Save(); err != nil {
		return fmt.Errorf("policy: checkpoint %s: %w", dir, err)
	}
	return nil
}

// Load replaces every variable with the values saved in dir by Save (with LoRA, every variable
// but the frozen base). The checkpoint is read into a scratch context first and checked — the
// same variables, the same shapes and dtypes — so a checkpoint of another architecture, of a
// LoRA policy into a fully trained one or the reverse, or a damaged one, is refused without
// touching the policy.
func (p *Policy) Load(dir string) (err error) {
	defer func() {
		if r := recover(); r != nil { // GoMLX panics on unreadable data
			err = fmt.Errorf("policy: load checkpoint %s: %v", dir, r)
		}
	}()
	scratch := context.New()
	if _, err := checkpoints.Load(scratch).Dir(dir).Immediate().Done(); err != nil {
		return fmt.Errorf("policy: load checkpoint %s: %w", dir, err)
	}
	loaded := map[string]*tensors.Tensor{}
	for v := range scratch.IterVariables() {
		t, err := v.Value()
		if err != nil {
			return fmt.Errorf("policy: load checkpoint %s: %s: %w", dir, v.ParameterName(), err)
		}
		loaded[v.ParameterName()] = t
	}
	var mine []*context.Variable
	for v := range p.ctx.IterVariables() {
		if p.lora == nil || !slices.Contains(p.theta, v) {
			mine = append(mine, v)
		}
	}
	if err := p.checkLoRAKind(dir, loaded); err != nil {
		return err
	}
	var missing, extra []string
	for _, v := range mine {
		t, ok := loaded[v.ParameterName()]
		if !ok {
			missing = append(missing, v.ParameterName())
			continue
		}
		if !t.Shape().Equal(v.Shape()) {
			return fmt.Errorf("policy: checkpoint %s: %s has shape %s, this policy %s (different architecture?)",
				dir, v.ParameterName(), t.Shape(), v.Shape())
		}
	}
	for name := range loaded {
		if !slices.ContainsFunc(mine, func(v *context.Variable) bool { return v.ParameterName() == name }) {
			extra = append(extra, name)
		}
	}
	if len(missing) > 0 || len(extra) > 0 {
		slices.Sort(missing)
		slices.Sort(extra)
		return fmt.Errorf("policy: checkpoint %s does not match this policy (missing %v, unexpected %v)", dir, missing, extra)
	}
	for _, v := range mine {
		if err := v.SetValue(loaded[v.ParameterName()]); err != nil {
			return fmt.Errorf("policy: load checkpoint %s: %s: %w", dir, v.ParameterName(), err)
		}
	}
	return nil
}

// ReadCheckpointWeights reads the parameters of a checkpoint written by Save for a policy of
// architecture c, in the order and shapes of ParamNames/ParamShapes (the Init of Options). The
// optimiser state in the checkpoint is ignored. A checkpoint of another architecture, a missing
// parameter or unreadable data is an error naming what differs.
func ReadCheckpointWeights(dir string, c Config) ([][]float32, error) {
	return ReadCheckpointParams(dir, spec.Params(c))
}

// ReadCheckpointParams is ReadCheckpointWeights for the parameters specs, in their order:
// spec.LlamaParams for a pretrained policy (Policy.Params).
func ReadCheckpointParams(dir string, specs []spec.Param) (w [][]float32, err error) {
	defer func() {
		if r := recover(); r != nil { // GoMLX panics on unreadable data
			w, err = nil, fmt.Errorf("policy: read checkpoint %s: %v", dir, r)
		}
	}()
	scratch := context.New()
	if _, err := checkpoints.Load(scratch).Dir(dir).Immediate().Done(); err != nil {
		return nil, fmt.Errorf("policy: read checkpoint %s: %w", dir, err)
	}
	loaded := map[string]*context.Variable{}
	for v := range scratch.IterVariables() {
		loaded[v.Scope()+"/"+v.Name()] = v
	}
	w = make([][]float32, len(specs))
	for i, s := range specs {
		name := s.Name
		v, ok := loaded["/policy/"+name]
		if !ok && slices.ContainsFunc(slices.Collect(maps.Keys(loaded)), isAdapterName) {
			return nil, fmt.Errorf("policy: checkpoint %s holds LoRA adapters only, not the parameter %s: build the "+
				"policy from the base model with the same policy.lora, then Load it (Policy.Weights gives the merged weights)", dir, name)
		}
		if !ok {
			return nil, fmt.Errorf("policy: checkpoint %s has no parameter %s (a policy of another architecture?)", dir, name)
		}
		t, err := v.Value()
		if err != nil {
			return nil, fmt.Errorf("policy: read checkpoint %s: %s: %w", dir, name, err)
		}
		if !slices.Equal(t.Shape().Dimensions, s.Shape) {
			return nil, fmt.Errorf("policy: checkpoint %s: %s has shape %v, this policy %v (different architecture or vocabulary size)",
				dir, name, t.Shape().Dimensions, s.Shape)
		}
		w[i] = tensors.MustCopyFlatData[float32](t)
	}
	return w, nil
}

// isAdapterName tells whether a checkpoint variable is a LoRA adapter (spec.LoRAParams).
func isAdapterName(name string) bool {
	return strings.HasSuffix(name, ".lora_a") || strings.HasSuffix(name, ".lora_b")
}

// checkLoRAKind refuses a checkpoint of a LoRA policy for a policy trained in full, and the
// reverse, naming the difference.
func (p *Policy) checkLoRAKind(dir string, loaded map[string]*tensors.Tensor) error {
	hasAdapters := slices.ContainsFunc(slices.Collect(maps.Keys(loaded)), isAdapterName)
	switch {
	case hasAdapters && p.lora == nil:
		return fmt.Errorf("policy: checkpoint %s holds LoRA adapters (a policy.lora run), but this policy trains every weight (no policy.lora)", dir)
	case !hasAdapters && p.lora != nil:
		return fmt.Errorf("policy: checkpoint %s holds a policy trained in full (no LoRA adapters), but this policy trains "+
			"LoRA adapters (policy.lora rank %d, targets %v)", dir, p.lora.Rank, p.lora.Targets)
	}
	return nil
}
