package policy

import (
	"reflect"
	"slices"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// GoMLX v0.26 builds the gradient of DotGeneral as a broadcast multiply plus a reduction, which
// materialises a [tokens × in × out] tensor per dense layer. XLA fuses that away; the pure-Go
// backend does not, and training runs ~5× slower with ~5× the memory. The registration below
// replaces it with the textbook form: each operand's gradient is itself one DotGeneral of the
// output gradient with the other operand, followed by a transpose back to the operand's axes.
// The gradient check in dotgrad_test.go pins it against finite differences; gomlx is pinned at
// v0.26.0 because the axes are read from an unexported field of the node.
func init() {
	VJPRegistration[NodeTypeDotGeneral] = func(node *Node, vjps []*Node, _ shapes.Shape) []*Node {
		return dotGeneralVJP(node, vjps[0])
	}
}

// dotAxes are the axes of a DotGeneral node.
type dotAxes struct {
	lhsContracting, lhsBatch, rhsContracting, rhsBatch []int
}

// readDotAxes recovers the axes a DotGeneral node was built with.
func readDotAxes(node *Node) dotAxes {
	in := reflect.ValueOf(node).Elem().FieldByName("inputs").Elem().Elem()
	ints := func(field string) []int {
		f := in.FieldByName(field)
		out := make([]int, f.Len())
		for i := range out {
			out[i] = int(f.Index(i).Int())
		}
		return out
	}
	return dotAxes{
		lhsContracting: ints("lhsContractingAxes"),
		lhsBatch:       ints("lhsBatchAxes"),
		rhsContracting: ints("rhsContractingAxes"),
		rhsBatch:       ints("rhsBatchAxes"),
	}
}

// freeAxes lists the axes of a rank-r operand that are neither contracted nor batch, in order.
func freeAxes(rank int, contracting, batch []int) []int {
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
func dotGeneralVJP(node, v *Node) []*Node {
	ax := readDotAxes(node)
	lhs, rhs := node.Inputs()[0], node.Inputs()[1]
	nb := len(ax.lhsBatch)
	lhsFree := freeAxes(lhs.Rank(), ax.lhsContracting, ax.lhsBatch)
	rhsFree := freeAxes(rhs.Rank(), ax.rhsContracting, ax.rhsBatch)
	outBatch := axisRange(0, nb)
	outLhsFree := axisRange(nb, len(lhsFree))
	outRhsFree := axisRange(nb+len(lhsFree), len(rhsFree))

	// ∂L/∂lhs = v · rhs, contracting rhs's free axes: result [batch…, lhsFree…, rhsContracting (rhs order)…].
	gl := DotGeneral(v, outRhsFree, outBatch, rhs, rhsFree, ax.rhsBatch)
	gl = transposeBack(gl, lhs.Rank(), ax.lhsBatch, lhsFree, ax.lhsContracting, ax.rhsContracting)

	// ∂L/∂rhs = v · lhs, contracting lhs's free axes: result [batch…, rhsFree…, lhsContracting (lhs order)…].
	gr := DotGeneral(v, outLhsFree, outBatch, lhs, lhsFree, ax.lhsBatch)
	gr = transposeBack(gr, rhs.Rank(), ax.rhsBatch, rhsFree, ax.rhsContracting, ax.lhsContracting)
	return []*Node{gl, gr}
}

// transposeBack permutes a gradient laid out as [batch…, free…, contracted…] into the operand's own
// axis order. The contracted axes arrive sorted by the *other* operand's axis numbers: this
// operand's contracting axis i pairs with otherContracting[i].
func transposeBack(g *Node, rank int, batch, free, contracting, otherContracting []int) *Node {
	pos := make([]int, rank) // pos[a] = axis of g that holds operand axis a
	for i, a := range batch {
		pos[a] = i
	}
	for i, a := range free {
		pos[a] = len(batch) + i
	}
	sorted := slices.Clone(otherContracting)
	slices.Sort(sorted)
	for i, a := range contracting {
		pos[a] = len(batch) + len(free) + slices.Index(sorted, otherContracting[i])
	}
	identity := true
	for a, p := range pos {
		identity = identity && a == p
	}
	if identity {
		return g
	}
	return TransposeAllAxes(g, pos...)
}

func axisRange(start, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = start + i
	}
	return out
}
