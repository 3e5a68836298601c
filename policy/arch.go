package policy

import (
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/graftrl/graftrl/policy/spec"
)

// arch is the network a Policy trains: its parameters and the graph functions of its forward
// pass and its KV-cache decode step. The policy owns everything else (variables, the losses,
// Adam, checkpoints, batches), which is therefore the same for every architecture. theta holds
// the parameters' nodes in the order of params, followed by a LoRA policy's adapters.
type arch interface {
	// params lists the network's parameters in their fixed order (that of Weights and
	// Options.Init; without LoRA also of gradients, Adam moments and checkpoints, which with
	// LoRA are the adapters': Policy.Trainable).
	params() []spec.Param
	// biasHeads is the head axis of the selected queries' attention bias [B,biasHeads,Q,T]
	// (selection.attentionBias).
	biasHeads() int
	// forwardAt returns the logits [B,Q,V] at the selected positions of tokens [B,T], or
	// [B,T,V] at every position when at is nil (see forwardAt of the transformer).
	forwardAt(theta []*Node, tokens *Node, at *queries) *Node
	// cacheShapes are the shapes of the decoder's caches for batch rows of maxLen positions.
	cacheShapes(batch, maxLen int) []shapes.Shape
	// decodeStep feeds tokens[b] at position pos[b] of every row b against the caches and
	// returns the next-token logits [B,V] and the updated caches (see decodeStep).
	decodeStep(theta []*Node, tokens, pos *Node, caches []*Node) (*Node, []*Node)
}

// transformer is the policy's own decoder-only transformer (model.go) of architecture c.
type transformer struct{ c Config }

func (a transformer) params() []spec.Param { return spec.Params(a.c) }

func (a transformer) biasHeads() int { return a.c.Heads }

func (a transformer) forwardAt(theta []*Node, tokens *Node, at *queries) *Node {
	return forwardAt(a.c, assembleParams(a.c, theta), tokens, at)
}

func (a transformer) cacheShapes(batch, maxLen int) []shapes.Shape {
	out := make([]shapes.Shape, 2*a.c.Layers)
	for i := range out {
		out[i] = shapes.Make(dtypes.Float32, batch, a.c.Heads, maxLen, a.c.HeadDim())
	}
	return out
}

func (a transformer) decodeStep(theta []*Node, tokens, pos *Node, caches []*Node) (*Node, []*Node) {
	return decodeStep(a.c, assembleParams(a.c, theta), tokens, pos, caches)
}
