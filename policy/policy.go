// Package policy is the agent: a decoder-only transformer on GoMLX — its own, or a pretrained
// Llama decoder (Options.Pretrained) — with its vocabulary, backend selection, incremental
// KV-cache decoding for sampling, per-token log-probs, the clipped policy-gradient loss, Adam,
// and checkpoints. It knows nothing about environments.
package policy

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/distributed"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"

	"github.com/graftrl/graftrl/internal/gobackend"
	"github.com/graftrl/graftrl/policy/pretrained"
	"github.com/graftrl/graftrl/policy/spec"
)

// Policy is a transformer policy with its optimizer state on one GoMLX backend. It is not safe for
// concurrent use.
type Policy struct {
	cfg     Config
	arch    arch
	llama   *pretrained.Config // the architecture of a pretrained policy, nil for the transformer
	loss    LossConfig
	optim   OptimConfig
	backend backends.Backend
	ctx     *context.Context

	theta, m, v []*context.Variable // parameters (arch.params order) and Adam moments (trainable's)
	ref         []*context.Variable // frozen reference parameters (KL), nil when KL is off or with LoRA
	step        *context.Variable   // Adam step counter t
	global      *context.Variable   // GoMLX's global step: updates applied (int64)
	actionBias  []float32           // additive logit bias at action positions (nil: no mask)
	devices     int                 // devices an update is split over (1: no split)
	mesh        *distributed.DeviceMesh
	rowSpec     *distributed.ShardingSpec // split along the first axis (rows) over mesh
	trainInputs int                       // inputs of the train graph, as its sharding specs count them
	bucketed    bool                      // pad minibatches to bucketed shapes (xla backends; see shapes.go)
	shapesSeen  map[string]bool           // input shapes each executable has met (see exec)
	compiled    Compilations

	kl bool // KL is on: updates take reference log-probs (RefLogProbs)
	// With LoRA (lora.go): theta is the frozen base, adapters are A and B of every targeted
	// matrix (spec.LoRAParams order), and the reference policy is theta alone.
	lora         *spec.LoRA
	adapters     []*context.Variable
	adapterSpecs []spec.Param
	trainable    []*context.Variable // what Adam updates: the adapters with LoRA, else theta

	train, logp, refLogp, logits, decode *context.Exec
	merge                                *context.Exec // LoRA: the merged weights (mergeGraph)
}

// Options gathers everything New needs.
type Options struct {
	Model Config
	Loss  LossConfig
	Optim OptimConfig
	// Seed draws the initial weights.
	Seed uint64
	// Init, when set, are the initial weights instead of a draw from Seed: one array per
	// parameter in the order and shapes of ParamNames/ParamShapes (spec.LlamaParams for a
	// pretrained policy), flattened row-major (as Weights and ReadCheckpointWeights return
	// them). The optimiser starts fresh, and the KL reference is these weights. With LoRA they
	// are the frozen base.
	Init [][]float32
	// Pretrained, when set, makes the policy a pretrained Llama decoder instead of the
	// transformer Model describes; Model then gives only the vocabulary and the longest
	// sequence (see Pretrained).
	Pretrained *Pretrained
	// LoRA, when set, trains low-rank adapters of a pretrained policy (Pretrained must be set)
	// with its base weights frozen; Seed draws the adapters' A (see lora.go).
	LoRA *spec.LoRA
	// ActionTokens, when set, are the only token ids an action may consist of (the env's action
	// words and the end-of-action token): at action positions every other token's logit is
	// masked out, in sampling and in the loss alike. Nil allows every token.
	ActionTokens []int32
	// Devices splits every update's minibatch by rows over this many devices of the backend
	// (data parallel): each device computes the loss terms and gradients of its rows, an
	// all-reduce sums them, and every device applies the same Adam step to its copy of the
	// weights. 0 or 1 is one device. The backend must have that many (see
	// BackendOptions.Devices; the go backend has one). Log-probs and sampling run on device 0.
	Devices int
}

// checkDevices checks Options.Devices against the backend; errors name the key policy.devices.
func checkDevices(b backends.Backend, n int) error {
	switch {
	case n < 0 || n > spec.MaxDevices:
		return fmt.Errorf("policy.devices: %d is out of range (allowed 0 or 1 = one device, up to %d)", n, spec.MaxDevices)
	case n > b.NumDevices():
		return fmt.Errorf("policy.devices: %d, but backend %s has %d device(s) (the go backend has one; "+
			"xla:cpu exposes as many host devices as asked for, xla:cuda one per GPU)", n, b.Name(), b.NumDevices())
	}
	return nil
}

// New builds a freshly initialised policy on the backend.
func New(backend backends.Backend, o Options) (*Policy, error) {
	a, cfg, init, err := archOf(o)
	if err != nil {
		return nil, err
	}
	if err := o.Loss.Validate(); err != nil {
		return nil, err
	}
	if err := o.Optim.Validate(); err != nil {
		return nil, err
	}
	if err := checkDevices(backend, o.Devices); err != nil {
		return nil, err
	}
	p := &Policy{cfg: cfg, arch: a, loss: o.Loss, optim: o.Optim, backend: backend, ctx: context.New(),
		devices: max(o.Devices, 1), bucketed: !gobackend.Is(backend), shapesSeen: map[string]bool{},
		kl: o.Loss.KL != spec.KLNone}
	if o.Pretrained != nil {
		lc := o.Pretrained.Config
		p.llama = &lc
	}
	if o.LoRA != nil {
		l := *o.LoRA
		l.Targets = slices.Clone(l.Targets)
		p.lora = &l
	}
	if o.ActionTokens != nil {
		p.actionBias = make([]float32, cfg.Vocab)
		for i := range p.actionBias {
			p.actionBias[i] = maskedLogit
		}
		for _, id := range o.ActionTokens {
			if id < 0 || int(id) >= cfg.Vocab {
				return nil, fmt.Errorf("policy: action token %d outside the vocabulary of %d", id, cfg.Vocab)
			}
			p.actionBias[id] = 0
		}
	}
	root := p.ctx.Checked(false)
	if p.lora != nil {
		p.addLoRAVariables(root, init, o.Seed)
	} else {
		p.addVariables(root, init)
	}
	p.step = root.In("adam").VariableWithValue("step", float32(0)).SetTrainable(false)
	// GoMLX's checkpoints name files after (and create) the global step counter; it counts the
	// applied updates.
	p.global = optimizers.GetGlobalStepVar(p.ctx)
	if err := p.buildExecs(); err != nil {
		return nil, err
	}
	return p, nil
}

// addVariables creates a policy's parameters (from init), their Adam moments and, when KL is
// on, the reference parameters; every parameter is trainable.
func (p *Policy) addVariables(root *context.Context, init [][]float32) {
	for i, s := range p.arch.params() {
		// "block0/wq" becomes variable wq in scope …/block0: a name must not hold the scope
		// separator, or a checkpoint would load it into a different variable.
		scope, name := path.Split(s.Name)
		in := func(top string) *context.Context {
			if scope == "" { // a pretrained policy's flat names ("blk.0.attn_q")
				return root.In(top)
			}
			return root.In(top).In(strings.TrimSuffix(scope, "/"))
		}
		val := tensors.FromFlatDataAndDimensions(init[i], s.Shape...)
		p.theta = append(p.theta, in("policy").VariableWithValue(name, val))
		p.m = append(p.m, in("adam_m").VariableWithValue(name, tensors.FromShape(val.Shape())).SetTrainable(false))
		p.v = append(p.v, in("adam_v").VariableWithValue(name, tensors.FromShape(val.Shape())).SetTrainable(false))
		if p.kl {
			refVal := tensors.FromFlatDataAndDimensions(append([]float32(nil), init[i]...), s.Shape...)
			p.ref = append(p.ref, in("reference").VariableWithValue(name, refVal).SetTrainable(false))
		}
	}
	p.trainable = p.theta
}

// archOf returns the network Options describe, the policy's Config and the starting weights
// (checked against the network's parameters).
func archOf(o Options) (arch, Config, [][]float32, error) {
	if o.Pretrained != nil {
		return llamaArchOf(o)
	}
	if o.LoRA != nil {
		return nil, Config{}, nil, fmt.Errorf("policy.lora: LoRA adapters need a pretrained model (Options.Pretrained); " +
			"the policy's own transformer trains every weight")
	}
	if err := o.Model.Validate(); err != nil {
		return nil, Config{}, nil, err
	}
	init := o.Init
	if init == nil {
		init = initialValues(o.Model, o.Seed)
	} else if err := spec.CheckWeights(o.Model, init); err != nil {
		return nil, Config{}, nil, err
	}
	return transformer{o.Model}, o.Model, init, nil
}

// Config returns the architecture. For a pretrained policy only Vocab and MaxLen are set (the
// network is Llama's; see Llama).
func (p *Policy) Config() Config { return p.cfg }

// Llama returns the architecture of a pretrained policy, and false for the policy's own
// transformer.
func (p *Policy) Llama() (pretrained.Config, bool) {
	if p.llama == nil {
		return pretrained.Config{}, false
	}
	return *p.llama, true
}

// Params lists the policy's parameters in their fixed order (that of Weights and
// Options.Init): spec.Params(Config()) for the transformer, spec.LlamaParams for a pretrained
// policy (with LoRA too: see Trainable for what an update changes).
func (p *Policy) Params() []spec.Param { return p.arch.params() }

// Backend returns the GoMLX backend the policy runs on.
func (p *Policy) Backend() backends.Backend { return p.backend }

// Context returns the GoMLX context holding every variable (for checkpoints).
func (p *Policy) Context() *context.Context { return p.ctx }

// forwardVars are the variables the forward pass reads: the parameters, then the adapters
// with LoRA.
func (p *Policy) forwardVars() []*context.Variable {
	if p.lora == nil {
		return p.theta
	}
	return append(slices.Clip(p.theta), p.adapters...)
}

// refVars are the reference policy's parameters (KL): a copy of the starting weights, or the
// frozen base of a LoRA policy.
func (p *Policy) refVars() []*context.Variable {
	if p.lora != nil {
		return p.theta
	}
	return p.ref
}

// paramNodes reads variables into graph g.
func paramNodes(g *Graph, vars []*context.Variable) []*Node {
	out := make([]*Node, len(vars))
	for i, v := range vars {
		out[i] = v.ValueGraph(g)
	}
	return out
}

func (p *Policy) buildExecs() error {
	var err error
	mk := func(fn func(ctx *context.Context, in []*Node) []*Node) *context.Exec {
		if err != nil {
			return nil
		}
		var e *context.Exec
		e, err = context.NewExec(p.backend, p.ctx, fn)
		if e != nil {
			e.SetMaxCache(64)
		}
		return e
	}
	c, a := p.cfg, p.arch
	p.logits = mk(func(_ *context.Context, in []*Node) []*Node {
		return []*Node{a.forwardAt(paramNodes(in[0].Graph(), p.forwardVars()), in[0], nil)}
	})
	logpFn := func(vars func() []*context.Variable) func(*context.Context, []*Node) []*Node {
		return func(_ *context.Context, in []*Node) []*Node {
			tokens, targets := in[0], in[1]
			lg := a.forwardAt(paramNodes(tokens.Graph(), vars()), tokens, nil)
			if p.actionBias != nil {
				lg = Add(lg, in[2])
			}
			lp, ent := tokenLogProbs(lg, targets, c.Vocab)
			return []*Node{lp, ent}
		}
	}
	p.logp = mk(logpFn(p.forwardVars))
	if p.kl {
		p.refLogp = mk(logpFn(p.refVars))
	}
	p.decode = mk(func(_ *context.Context, in []*Node) []*Node {
		lg, caches := a.decodeStep(paramNodes(in[0].Graph(), p.forwardVars()), in[0], in[1], in[2:])
		return append([]*Node{lg}, caches...)
	})
	p.train = mk(p.trainGraph)
	if err == nil && p.lora != nil {
		p.merge, err = context.NewExec(p.backend, p.ctx, p.mergeGraph)
	}
	if err == nil && p.devices > 1 {
		err = p.distributeTrain()
	}
	return err
}

// distributeTrain makes the update data parallel over p.devices: the train graph is compiled for
// a one-axis device mesh with every input split by rows and the weights, optimiser state and
// outputs replicated; XLA partitions it (GSPMD/Shardy), so each device computes its rows' loss
// and gradients and an all-reduce sums them before the Adam step, which every device applies to
// its replica. (GoMLX v0.26's explicit SPMD mode cannot take context variables with the XLA
// backend: their replicated sharding spec names a mesh the SPMD builder never registers.)
func (p *Policy) distributeTrain() error {
	var err error
	if p.mesh, err = distributed.NewDeviceMesh([]int{p.devices}, []string{"data"}); err != nil {
		return err
	}
	if p.rowSpec, err = distributed.BuildSpec(p.mesh).S("data").Done(); err != nil {
		return err
	}
	inputs := 8 // tokens, index, bias, targets, oldLogp, adv, weight, lr
	if p.kl {
		inputs++
	}
	if p.loss.Objective == spec.ObjectiveStep {
		inputs += 3
	}
	if p.actionBias != nil {
		inputs++
	}
	p.trainInputs = inputs
	specs := make([]*distributed.ShardingSpec, inputs)
	for i := range specs {
		specs[i] = p.rowSpec
	}
	specs[inputs-1] = distributed.NewReplicatedShardingSpec(p.mesh)
	p.train.AutoSharding(p.mesh).WithInputShardingSpecs(specs...).
		WithOutputShardingSpecs(distributed.NewReplicatedShardingSpec(p.mesh))
	return nil
}

// Devices is the number of devices an update is split over.
func (p *Policy) Devices() int { return p.devices }

// trainGraph is one clipped policy-gradient update on a minibatch, computed at the selected
// (action) positions only (see selection and forwardAt). Inputs: tokens [B,T] int32; the selection
// index [B,Q,2] int32 and its attention bias [B,H,Q,T]; targets [B,Q] int32; oldLogp, adv, weight
// [B,Q]; refLogp [B,Q] when KL is on; for the step objective, stepOf [B,Q] int32, stepAdv and
// stepWeight [B,S]; the action-token logit bias [B,Q,V] when actions are constrained; lr scalar.
func (p *Policy) trainGraph(_ *context.Context, in []*Node) []*Node {
	c := p.cfg
	tokens, at := in[0], &queries{idx: in[1], bias: in[2]}
	targets, oldLogp, adv, weight := in[3], in[4], in[5], in[6]
	i := 7
	var refLogp *Node
	if p.kl {
		refLogp = in[i]
		i++
	}
	var stepOf, stepAdv, stepWeight *Node
	if p.loss.Objective == spec.ObjectiveStep {
		stepOf, stepAdv, stepWeight = in[i], in[i+1], in[i+2]
		i += 3
	}
	var bias *Node
	if p.actionBias != nil {
		bias = in[i]
		i++
	}
	lr := in[i]
	g := tokens.Graph()
	theta := paramNodes(g, p.theta)
	trainable := theta
	if p.lora != nil { // the base is read, never differentiated: gradients flow to the adapters only
		trainable = paramNodes(g, p.adapters)
		theta = append(theta, trainable...)
	}
	logits := p.arch.forwardAt(theta, tokens, at)
	if bias != nil {
		logits = Add(logits, bias)
	}
	logp, entropy := tokenLogProbs(logits, targets, c.Vocab)
	if p.loss.EntropyCoef == 0 {
		entropy = StopGradient(entropy) // logged only: no gradient to build
	}
	var t lossTerms
	switch p.loss.Objective {
	case spec.ObjectiveStep:
		t = stepLoss(p.loss, logp, entropy, oldLogp, weight, refLogp, stepOf, stepAdv, stepWeight)
	case spec.ObjectiveCrossEntropy:
		t = crossEntropyLoss(p.loss, logp, entropy, weight, refLogp)
	default:
		t = tokenLoss(p.loss, logp, entropy, oldLogp, adv, weight, refLogp)
	}
	grads := Gradient(t.total, trainable...)
	newTheta, newM, newV, newStep, gradNorm, ok := adamUpdate(p.optim, lr, t.total, trainable, grads,
		paramNodes(g, p.m), paramNodes(g, p.v), p.step.ValueGraph(g))
	for j := range trainable {
		p.trainable[j].SetValueGraph(newTheta[j])
		p.m[j].SetValueGraph(newM[j])
		p.v[j].SetValueGraph(newV[j])
	}
	p.step.SetValueGraph(newStep)
	gs := p.global.ValueGraph(g)
	p.global.SetValueGraph(Where(ok, OnePlus(gs), gs))
	return []*Node{t.total, t.pg, t.entropy, t.kl, t.approxKL, t.clipFrac, gradNorm, ConvertDType(ok, dtypes.Float32), logp}
}

// maskedLogit is the bias of a token an action may not use: exp underflows to exactly 0 while
// p·log p stays finite (0·−1e9 = 0).
const maskedLogit = -1e9

// actionBiasTensor lays out the action-token logit bias for a batch: ActionBias at positions with
// Weight > 0 (action tokens), 0 elsewhere, as [Rows,Len,Vocab]. It is built on the host because
// broadcasting a [V] row over selected positions costs more on the Go backend than adding a
// ready tensor. Nil when actions are unconstrained.
func (p *Policy) actionBiasTensor(b *TrainBatch) *tensors.Tensor {
	if p.actionBias == nil {
		return nil
	}
	v := p.cfg.Vocab
	out := make([]float32, b.Rows*b.Len*v)
	for i, w := range b.Weight {
		if w > 0 {
			copy(out[i*v:(i+1)*v], p.actionBias)
		}
	}
	return tensors.FromFlatDataAndDimensions(out, b.Rows, b.Len, v)
}

// ActionBias is the additive logit bias at action positions (nil when actions are unconstrained);
// samplers add it to the logits of every action token they draw.
func (p *Policy) ActionBias() []float32 { return p.actionBias }

// TrainBatch is one minibatch laid out as Rows × Len token positions (row-major). Position t of a
// row holds the input token Tokens[t] and the target Targets[t] (the next token of the sequence).
type TrainBatch struct {
	Rows, Len int
	Tokens    []int32   // input ids
	Targets   []int32   // next-token ids
	OldLogp   []float32 // log π_old(target), used where Weight > 0
	Adv       []float32 // Â of the target's step
	Weight    []float32 // aggregation weight; 0 for context and padding (see spec.AggregationWeights)
	RefLogp   []float32 // log π_ref(target) when KL is on (see RefLogProbs)
	// Step objective only: StepOf[i] is the step index (within the row) of target i or −1;
	// StepAdv and StepWeight are Rows × Steps.
	Steps      int
	StepOf     []int32
	StepAdv    []float32
	StepWeight []float32
}

// TrainStats are the scalar results of one update.
type TrainStats struct {
	Loss, PGLoss, Entropy, KL, ApproxKL, ClipFrac, GradNorm float64
	// Skipped is set when the loss or gradient was not finite and the update was not applied.
	Skipped bool
	// LogProbs are log π(target) [Rows·Len] under the weights *before* this update (the forward
	// pass the gradient came from), at the positions the loss reads (Weight > 0); the update does
	// not compute the others, which hold 0.
	LogProbs []float32
}

// Update applies one Adam step of the configured loss on the minibatch with learning rate lr.
// With more than one device the rows are split over the devices (see Options.Devices).
func (p *Policy) Update(b *TrainBatch, lr float64) (TrainStats, error) {
	n := b.Rows * b.Len
	if len(b.Tokens) != n || len(b.Targets) != n || len(b.OldLogp) != n || len(b.Adv) != n || len(b.Weight) != n {
		return TrainStats{}, fmt.Errorf("policy: train batch arrays must hold rows×len = %d values", n)
	}
	if b.Len > p.cfg.MaxLen {
		return TrainStats{}, fmt.Errorf("policy: sequence length %d exceeds max_len %d", b.Len, p.cfg.MaxLen)
	}
	if p.kl && len(b.RefLogp) != n {
		return TrainStats{}, errors.New("policy: KL is on but the batch has no reference log-probs")
	}
	if p.loss.Objective == spec.ObjectiveStep &&
		(b.Steps < 1 || len(b.StepOf) != n || len(b.StepAdv) != b.Rows*b.Steps || len(b.StepWeight) != b.Rows*b.Steps) {
		return TrainStats{}, errors.New("policy: the step objective needs StepOf, StepAdv and StepWeight")
	}
	rows, length, steps := p.shapeFor(b.Rows, b.Len, b.Steps)
	padded := padBatch(b, rows, length, steps)
	sel := selectPositions(padded, bucket(mostSelected(padded), padded.Len))
	args := p.trainArgs(padded, sel, lr)
	if p.devices > 1 {
		var err error
		if args, err = p.shardArgs(args); err != nil {
			return TrainStats{}, fmt.Errorf("policy: update: %w", err)
		}
	}
	out, err := p.exec("train", p.train, args...)
	if err != nil {
		return TrainStats{}, fmt.Errorf("policy: update: %w", err)
	}
	defer func() {
		for _, t := range out {
			t.FinalizeAll()
		}
	}()
	// With several devices the outputs come device by device, each a replica of the whole:
	// device 0's are read.
	s := make([]float64, 8)
	for i, t := range out[:8] {
		s[i] = float64(tensors.ToScalar[float32](t))
	}
	logp := unpad(sel.scatter(tensors.MustCopyFlatData[float32](out[8])), b.Rows, b.Len, padded.Len)
	return TrainStats{Loss: s[0], PGLoss: s[1], Entropy: s[2], KL: s[3], ApproxKL: s[4], ClipFrac: s[5],
		GradNorm: s[6], Skipped: s[7] == 0, LogProbs: logp}, nil
}

// trainArgs are the train graph's inputs for a minibatch (see trainGraph): every one but the
// learning rate has the rows as its first axis.
func (p *Policy) trainArgs(b *TrainBatch, sel *selection, lr float64) []any {
	args := []any{
		tensors.FromFlatDataAndDimensions(b.Tokens, b.Rows, b.Len),
		sel.index(), sel.attentionBias(p.arch.biasHeads()),
		sel.ints(b.Targets, 0), sel.floats(b.OldLogp), sel.floats(b.Adv), sel.floats(b.Weight),
	}
	if p.kl {
		args = append(args, sel.floats(b.RefLogp))
	}
	if p.loss.Objective == spec.ObjectiveStep {
		args = append(args, sel.ints(b.StepOf, -1),
			tensors.FromFlatDataAndDimensions(b.StepAdv, b.Rows, b.Steps),
			tensors.FromFlatDataAndDimensions(b.StepWeight, b.Rows, b.Steps))
	}
	if p.actionBias != nil {
		args = append(args, sel.actionBias(p.actionBias))
	}
	return append(args, tensors.FromScalar(float32(lr)))
}

// shardArgs splits the train graph's inputs by rows over the devices (the learning rate is
// replicated), as the train exec's input sharding specs say.
func (p *Policy) shardArgs(args []any) ([]any, error) {
	if len(args) != p.trainInputs {
		return nil, fmt.Errorf("%d train inputs, but the sharding specs are for %d", len(args), p.trainInputs)
	}
	out := make([]any, len(args))
	for i, a := range args {
		spec := p.rowSpec
		if i == len(args)-1 {
			spec = distributed.NewReplicatedShardingSpec(p.mesh)
		}
		d, err := distributed.ShardTensor(spec, a.(*tensors.Tensor))
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}

// LogProbs returns log π(target) and the policy entropy at every position of the batch, with
// the current weights. Positions with Weight > 0 are action positions (see Options.ActionTokens).
func (p *Policy) LogProbs(b *TrainBatch) (logp, entropy []float32, err error) {
	return p.runLogProbs("logp", p.logp, b)
}

// RefLogProbs is LogProbs under the frozen reference policy (KL must be on): the starting
// weights, or with LoRA the base without its adapters.
func (p *Policy) RefLogProbs(b *TrainBatch) ([]float32, error) {
	if p.refLogp == nil {
		return nil, errors.New("policy: no reference policy (update.kl is none)")
	}
	lp, _, err := p.runLogProbs("ref-logp", p.refLogp, b)
	return lp, err
}

func (p *Policy) runLogProbs(name string, e *context.Exec, b *TrainBatch) ([]float32, []float32, error) {
	n := b.Rows * b.Len
	if len(b.Tokens) != n || len(b.Targets) != n || len(b.Weight) != n {
		return nil, nil, fmt.Errorf("policy: log-prob batch arrays must hold rows×len = %d values", n)
	}
	pb := b
	if p.bucketed {
		rows, length, _ := p.shapeFor(b.Rows, b.Len, 0)
		pb = &TrainBatch{Rows: rows, Len: length, Tokens: padded(b.Tokens, b.Rows, b.Len, rows, length),
			Targets: padded(b.Targets, b.Rows, b.Len, rows, length), Weight: padded(b.Weight, b.Rows, b.Len, rows, length)}
	}
	args := []any{tensors.FromFlatDataAndDimensions(pb.Tokens, pb.Rows, pb.Len),
		tensors.FromFlatDataAndDimensions(pb.Targets, pb.Rows, pb.Len)}
	if bias := p.actionBiasTensor(pb); bias != nil {
		args = append(args, bias)
	}
	out, err := p.exec(name, e, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("policy: log-probs: %w", err)
	}
	lp := unpad(tensors.MustCopyFlatData[float32](out[0]), b.Rows, b.Len, pb.Len)
	ent := unpad(tensors.MustCopyFlatData[float32](out[1]), b.Rows, b.Len, pb.Len)
	out[0].FinalizeAll()
	out[1].FinalizeAll()
	return lp, ent, nil
}

// Logits runs the full forward pass on a Rows × Len batch and returns logits [rows·len·vocab].
func (p *Policy) Logits(rows, length int, tokens []int32) ([]float32, error) {
	out, err := p.exec("logits", p.logits, tensors.FromFlatDataAndDimensions(tokens, rows, length))
	if err != nil {
		return nil, fmt.Errorf("policy: forward: %w", err)
	}
	defer out[0].FinalizeAll()
	return tensors.MustCopyFlatData[float32](out[0]), nil
}

// Decoder samples incrementally with a per-row KV cache on the GoMLX backend.
type Decoder struct {
	p      *Policy
	batch  int
	caches []*tensors.Tensor
	ran    bool // a step ran: the input shapes, fixed for the decoder, are compiled and counted
}

// NewDecoder returns a decoder for batch rows, each with its own cache of MaxLen positions.
func (p *Policy) NewDecoder(batch int) *Decoder {
	d := &Decoder{p: p, batch: batch}
	for _, shape := range p.arch.cacheShapes(batch, p.cfg.MaxLen) {
		d.caches = append(d.caches, tensors.FromShape(shape))
	}
	return d
}

// Step feeds tokens[b] at position pos[b] for every row and returns the next-token logits
// [batch·vocab]. A row restarts a sequence simply by feeding position 0 again: entries beyond a
// row's position are never attended to.
func (d *Decoder) Step(tokens, pos []int32) ([]float32, error) {
	if len(tokens) != d.batch || len(pos) != d.batch {
		return nil, fmt.Errorf("policy: decoder step needs %d tokens and positions", d.batch)
	}
	for _, q := range pos {
		if q < 0 || int(q) >= d.p.cfg.MaxLen {
			return nil, fmt.Errorf("policy: position %d outside the context (max_len %d)", q, d.p.cfg.MaxLen)
		}
	}
	args := make([]any, 0, 2+len(d.caches))
	args = append(args, tensors.FromFlatDataAndDimensions(tokens, d.batch), tensors.FromFlatDataAndDimensions(pos, d.batch))
	for _, c := range d.caches {
		args = append(args, c)
	}
	var out []*tensors.Tensor
	var err error
	if d.ran {
		out, err = d.p.decode.Exec(args...) // the per-token path: no compilation bookkeeping
	} else {
		out, err = d.p.exec("decode", d.p.decode, args...)
	}
	if err != nil {
		return nil, fmt.Errorf("policy: decode: %w", err)
	}
	d.ran = true
	for _, c := range d.caches {
		c.FinalizeAll()
	}
	d.caches = out[1:]
	logits := tensors.MustCopyFlatData[float32](out[0])
	out[0].FinalizeAll()
	return logits, nil
}

// Weights returns a host copy of the current parameters, in the fixed parameter order
// (see ParamNames; Params), each flattened row-major. With LoRA every adapted matrix is merged
// with its adapter: W + (α/r)·B·A.
func (p *Policy) Weights() ([][]float32, error) {
	if p.lora != nil {
		return p.mergedWeights()
	}
	out := make([][]float32, len(p.theta))
	for i, v := range p.theta {
		t, err := v.Value()
		if err != nil {
			return nil, fmt.Errorf("policy: read %s: %w", v.Name(), err)
		}
		out[i] = tensors.MustCopyFlatData[float32](t)
	}
	return out, nil
}
