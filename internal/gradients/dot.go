package gradients

import (
	"errors"
	"slices"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/graftrl/graftrl/internal/gomlxfields"
)

// GoMLX v0.26 builds the gradient of DotGeneral as a broadcast multiply plus a reduction, which
// materialises a [tokens × in × out] tensor per dense layer. Neither backend fuses it away: on the
// pure-Go backend training runs ~5× slower with ~5× the memory, and XLA (measured on xla:cpu)
// keeps the product too, 20–30× slower than this form. The registration below replaces it with the
// textbook form: each operand's gradient is itself one DotGeneral of the output gradient with the
// other operand, followed by a transpose back to the operand's axes. The gradient checks in
// dot_test.go pin it against finite differences; gomlx is pinned at v0.26.0 because the axes are
// read from an unexported field of the node (internal/gomlxfields; a node without them gets
// GoMLX's own gradient, and TestReadAxes fails).
func registerDot() {
	upstream := VJPRegistration[NodeTypeDotGeneral]
	VJPRegistration[NodeTypeDotGeneral] = func(node *Node, vjps []*Node, out shapes.Shape) []*Node {
		ax, err := readDotAxes(node)
		if err != nil { // not gomlx v0.26.0's node: GoMLX's own (slower) gradient is still right
			return upstream(node, vjps, out)
		}
		return dotGeneralVJP(node, ax, vjps[0])
	}
}

// dotAxes are the axes of a DotGeneral node.
type dotAxes struct {
	lhsContracting, lhsBatch, rhsContracting, rhsBatch []int
}

// readDotAxes recovers the axes a DotGeneral node was built with, from its inputs struct (field
// names of gomlx v0.26.0).
func readDotAxes(node *Node) (ax dotAxes, err error) {
	var errs [4]error
	ax.lhsContracting, errs[0] = gomlxfields.Ints(node, "inputs", "lhsContractingAxes")
	ax.lhsBatch, errs[1] = gomlxfields.Ints(node, "inputs", "lhsBatchAxes")
	ax.rhsContracting, errs[2] = gomlxfields.Ints(node, "inputs", "rhsContractingAxes")
	ax.rhsBatch, errs[3] = gomlxfields.Ints(node, "inputs", "rhsBatchAxes")
	return ax, errors.Join(errs[:]...)
}

// smallDotCross is the largest per-example lhs×rhs cross size the Go backend multiplies with its
// unblocked "small" DotGeneral; above it, operands are copied into padded 32×32 blocks, which
// would multiply a vector contraction's work by 32.
const smallDotCross = 16 * 32 * 32

// FreeAxes lists the axes of a rank-r DotGeneral operand that are neither contracted nor batch,
// in order.
func FreeAxes(rank int, contracting, batch []int) []int {
	var free []int
	for a := range rank {
		if !slices.Contains(contracting, a) && !slices.Contains(batch, a) {
			free = append(free, a)
		}
	}
	return free
}

// dotGeneralVJP returns [∂L/∂lhs, ∂L/∂rhs] given v = ∂L/∂out.
// out axes are [batch…, lhsFree…, rhsFree…] (the DotGeneral convention).
func dotGeneralVJP(node *Node, ax dotAxes, v *Node) []*Node {
	lhs, rhs := node.Inputs()[0], node.Inputs()[1]
	nb := len(ax.lhsBatch)
	lhsFree := FreeAxes(lhs.Rank(), ax.lhsContracting, ax.lhsBatch)
	rhsFree := FreeAxes(rhs.Rank(), ax.rhsContracting, ax.rhsBatch)
	outBatch := axisRange(0, nb)
	outLhsFree := axisRange(nb, len(lhsFree))
	outRhsFree := axisRange(nb+len(lhsFree), len(rhsFree))

	// ∂L/∂lhs = v · rhs, contracting rhs's free axes; ∂L/∂rhs = v · lhs, contracting lhs's free axes.
	gl := operandGrad(v, outBatch, outRhsFree, rhs, ax.rhsBatch, rhsFree,
		operandAxes{lhs.Rank(), ax.lhsBatch, lhsFree, ax.lhsContracting}, ax.rhsContracting)
	gr := operandGrad(v, outBatch, outLhsFree, lhs, ax.lhsBatch, lhsFree,
		operandAxes{rhs.Rank(), ax.rhsBatch, rhsFree, ax.rhsContracting}, ax.lhsContracting)
	return []*Node{gl, gr}
}

// operandAxes describes the operand a gradient is computed for.
type operandAxes struct {
	rank                     int
	batch, free, contracting []int
}

// operandGrad returns ∂L/∂x for the operand x described by xa, given v = ∂L/∂out (whose axes
// vBatch are the batch axes and vOther the other operand's free axes) and the other operand y
// (batch axes yBatch, free axes yFree, contracting axes yContracting paired with xa.contracting).
// The product is one DotGeneral; of its two operand orders, the one whose result already has x's
// axis order is used, so that no transpose is needed when either order gives it. When y has no
// free axes the product is an outer product (nothing to contract), built with broadcasts instead:
// a DotGeneral would pad its empty contraction to a whole block on the Go backend.
func operandGrad(v *Node, vBatch, vOther []int, y *Node, yBatch, yFree []int, xa operandAxes, yContracting []int) *Node {
	if len(yFree) == 0 {
		g := outerProduct(v, y, yBatch) // [batch…, x free…, y's other axes in y's order]
		return permuteTo(g, gradPositions(xa, yContracting, false))
	}
	natural := gradPositions(xa, yContracting, false) // DotGeneral(v, y): [batch…, x free…, contracted…]
	swapped := gradPositions(xa, yContracting, true)  // DotGeneral(y, v): [batch…, contracted…, x free…]
	if isIdentity(swapped) && !isIdentity(natural) {
		return splitDot(y, yFree, yBatch, v, vOther, vBatch)
	}
	return permuteTo(splitDot(v, vOther, vBatch, y, yFree, yBatch), natural)
}

// minSplitContraction is the contraction size from which splitDot halves a weight gradient.
const minSplitContraction = 2048

// splitDot is DotGeneral(a, aContracting, aBatch, b, bContracting, bBatch). A product without
// batch axes, with a long contraction and a small result — the gradient of a weight, Σ over every
// token — is computed as two halves of the contraction, as a batch of two, then summed: the Go
// backend runs the examples of a batch on separate cores, while it runs a single product of that
// size on one.
func splitDot(a *Node, aContracting, aBatch []int, b *Node, bContracting, bBatch []int) *Node {
	if len(aBatch) > 0 || len(aContracting) == 0 {
		return DotGeneral(a, aContracting, aBatch, b, bContracting, bBatch)
	}
	contraction := 1
	for _, ax := range aContracting {
		contraction *= a.Shape().Dimensions[ax]
	}
	first := a.Shape().Dimensions[aContracting[0]]
	if contraction < minSplitContraction || first%2 != 0 || a.Shape().Size()/contraction*(b.Shape().Size()/contraction) > smallDotCross {
		return DotGeneral(a, aContracting, aBatch, b, bContracting, bBatch)
	}
	a2, aC := splitAxis(a, aContracting)
	b2, bC := splitAxis(b, bContracting)
	halves := DotGeneral(a2, aC, []int{aContracting[0]}, b2, bC, []int{bContracting[0]})
	return ReduceSum(halves, 0)
}

// splitAxis reshapes x so that its axis contracting[0], of size s, becomes two axes [2, s/2], and
// returns the contracting axes renumbered (the half-size axis replaces the original; the new
// axis of size 2 sits at contracting[0]).
func splitAxis(x *Node, contracting []int) (*Node, []int) {
	at := contracting[0]
	dims := x.Shape().Dimensions
	nd := make([]int, 0, len(dims)+1)
	nd = append(nd, dims[:at]...)
	nd = append(nd, 2, dims[at]/2)
	nd = append(nd, dims[at+1:]...)
	out := make([]int, len(contracting))
	for i, ax := range contracting {
		out[i] = ax
		if ax >= at {
			out[i] = ax + 1
		}
	}
	return Reshape(x, nd...), out
}

// gradPositions returns, for each axis a of operand x, the axis of the computed gradient that
// holds it. The gradient is laid out as [batch…, free…, contracted…], or [batch…, contracted…,
// free…] when contractedFirst; the contracted axes arrive sorted by the *other* operand's axis
// numbers: x's contracting axis i pairs with otherContracting[i].
func gradPositions(xa operandAxes, otherContracting []int, contractedFirst bool) []int {
	nb, nf, nc := len(xa.batch), len(xa.free), len(xa.contracting)
	freeAt, contractedAt := nb, nb+nf
	if contractedFirst {
		freeAt, contractedAt = nb+nc, nb
	}
	pos := make([]int, xa.rank)
	for i, a := range xa.batch {
		pos[a] = i
	}
	for i, a := range xa.free {
		pos[a] = freeAt + i
	}
	sorted := slices.Clone(otherContracting)
	slices.Sort(sorted)
	for i, a := range xa.contracting {
		pos[a] = contractedAt + slices.Index(sorted, otherContracting[i])
	}
	return pos
}

func isIdentity(pos []int) bool {
	for a, p := range pos {
		if a != p {
			return false
		}
	}
	return true
}

// permuteTo returns g with its axes permuted so that axis a of the result is axis pos[a] of g.
func permuteTo(g *Node, pos []int) *Node {
	if isIdentity(pos) {
		return g
	}
	return TransposeAllAxes(g, pos...)
}

// outerProduct returns out[batch…, vFree…, yRest…] = v[batch…, vFree…] · y[batch…, yRest…], where
// v's batch axes lead and y's batch axes are yBatch (paired in order) and yRest are y's remaining
// axes in order.
func outerProduct(v, y *Node, yBatch []int) *Node {
	nb := len(yBatch)
	yRest := FreeAxes(y.Rank(), nil, yBatch)
	yOrder := append(slices.Clone(yBatch), yRest...)
	dims := slices.Clone(v.Shape().Dimensions)
	for _, a := range yRest {
		dims = append(dims, y.Shape().Dimensions[a])
	}
	restAxes := axisRange(v.Rank(), len(yRest)) // where y's own axes go in the result
	out := ExpandAndBroadcast(v, dims, restAxes)
	yt := permuteTo(y, yOrder)
	vFreeAxes := axisRange(nb, v.Rank()-nb) // where v's free axes go in the result
	return Mul(out, ExpandAndBroadcast(yt, dims, vFreeAxes))
}

func axisRange(start, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = start + i
	}
	return out
}
