package gobackend

import (
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/graftrl/graftrl/internal/kernels"
	"github.com/graftrl/graftrl/internal/workers"
)

// The Go backend runs a graph op by op, each element-wise op a full sweep over memory: a chain
// such as the tanh-GELU, h·(1 + tanh(h·(c₁ + c₃·h²))), and its gradient reads and writes a
// [batch, tokens, d_ff] tensor a dozen times. Fusing compiles every such chain into one node
// that runs the chain's ops on a block of a few hundred values at a time, in L1, and writes only
// the chain's result: the intermediate values that nothing else reads are never stored.
//
// A chain is a graph of float32 Add, Sub, Mul, Div, Neg, Exp, Tanh, Logistic and Sqrt of one
// shape whose inner nodes are read only by the chain, once or more (a value read anywhere else,
// or a graph output, stays a node of its own and becomes an input of the chain); operands may
// also be scalars, on the right as the executors of elementwise.go take them, or on the left of
// Sub and Div, spread over each block. Each op runs on the same kernels as its own
// executor (binaryFloat32, expFloat32, tanhFloat32, logisticFloat32, sqrtFloat32), so every value is bit for bit what the unfused graph
// computes: fusing changes how fast a step runs, never its result.
//
// The rewrite happens when a graph is compiled (fusingBuilder.Compile): the chain's root node
// becomes a node of op type fusedOp (FFT, which the Go backend does not implement, so no other
// node has it) whose inputs are the chain's inputs and whose data is the chain's program; the
// inner nodes, no longer used, are skipped by the backend. Like the executors it reaches into
// gomlx v0.26.0 internals (the Node fields inputs, opType, shape, data and multiOutputsShapes,
// found by internal/gomlxfields), checked when the backend is made; if they are not there nothing
// is fused, and the fusing tests fail.

// fusedOp is the op type of fused chain nodes.
const fusedOp = backends.OpTypeFFT

// fusedBlock is how many values of each chain value a block holds: 2 KB a value still to be read
// (fusedProgram.slot), a few of them at a time, inside the L1 cache.
const fusedBlock = 512

// fusedMinSize is the smallest tensor whose chains are fused: below it the ops cost less than
// the node overhead they save.
const fusedMinSize = 256

// fuseOp is one operation of a chain program.
type fuseOp uint8

const (
	fuseMul fuseOp = iota // the binaryOp values, in their order
	fuseAdd
	fuseSub
	fuseDiv
	fuseNeg
	fuseExp
	fuseTanh
	fuseLogistic
	fuseSqrt
)

// fuseInstr computes value dst = a op b (b unused by unary ops). Operands ≥ 0 are chain inputs,
// < 0 are earlier values (−1 − index); scalar operands are inputs of one value, and only ever b:
// a scalar on the left of Mul or Add is moved to the right when the program is built (the
// kernels take a scalar on the right only). Which operand is the scalar is decided there, from
// the operands' shapes, never from the length of a block: the last block of a tensor can hold a
// single value too.
type fuseInstr struct {
	op   fuseOp
	a, b int
}

// fusedProgram is the data of a fused node: its instructions in order, the last one the chain's
// result, and how each input is read.
type fusedProgram struct {
	instrs []fuseInstr
	inputs []fuseInput
	size   int // values of the result
	// slot[v] is the scratch block value v is written to (the last value, the result, is written
	// to the output): a block is reused once every read of its value has run, so that a long
	// chain keeps only the values still to be read, in L1.
	slot  []int
	slots int
}

// fuseInput is how a fused node reads an input: as it is (a tensor of the result's size, or a
// scalar), or, for the operand of a BroadcastInDim the chain absorbed, spread to the result's
// shape: value i of the result reads operand value (i / dims[1])·strides[0] + (i mod
// dims[1])·strides[1] (the broadcast's axes merged by mergeAxes, at most two; one axis reads
// i·strides[0], none reads the single value).
type fuseInput struct {
	broadcast     bool
	scalar        bool // a single value, read for every value of the result
	dims, strides []int
}

// String lists the program, for errors and tests.
func (p *fusedProgram) String() string {
	names := [...]string{"mul", "add", "sub", "div", "neg", "exp", "tanh", "logistic", "sqrt"}
	operand := func(i int) string {
		if i < 0 {
			return fmt.Sprintf("v%d", -1-i)
		}
		return fmt.Sprintf("in%d", i)
	}
	s := ""
	for i, in := range p.inputs {
		if in.broadcast {
			s += fmt.Sprintf("in%d=bcast%v%v ", i, in.dims, in.strides)
		}
	}
	for i, in := range p.instrs {
		s += fmt.Sprintf("v%d=%s(%s", i, names[in.op], operand(in.a))
		if in.op <= fuseDiv {
			s += "," + operand(in.b)
		}
		s += ") "
	}
	return s
}

// fusingBackend is the Go backend with element-wise chains fused in every graph it compiles.
type fusingBackend struct{ backends.Backend }

// Builder returns a builder whose Compile fuses.
func (f fusingBackend) Builder(name string) backends.Builder {
	return fusingBuilder{f.Backend.Builder(name)}
}

// fusingBuilder is the Go backend's builder with a Compile that fuses chains first.
type fusingBuilder struct{ backends.Builder }

// Compile fuses the graph's element-wise chains (fuseChains) and compiles it.
func (f fusingBuilder) Compile(outputs []backends.Op, shardings []*backends.ShardingSpec) (backends.Executable, error) {
	fuseChains(outputs)
	return f.Builder.Compile(outputs, shardings)
}

// fusable maps the op types a chain may hold to their program ops.
var fusable = map[backends.OpType]fuseOp{
	backends.OpTypeMul: fuseMul, backends.OpTypeAdd: fuseAdd, backends.OpTypeSub: fuseSub,
	backends.OpTypeDiv: fuseDiv, backends.OpTypeNeg: fuseNeg, backends.OpTypeExp: fuseExp,
	backends.OpTypeTanh: fuseTanh, backends.OpTypeLogistic: fuseLogistic, backends.OpTypeSqrt: fuseSqrt,
}

// chainNode is what fuseChains knows of a node.
type chainNode struct {
	f      nodeFields
	op     fuseOp
	member bool // a float32 element-wise op whose operands a chain accepts
	uses   int  // reads by other nodes, plus one for a graph output
	// spread is set for a float32 BroadcastInDim a chain may absorb (its merged axes, at most
	// two, in read).
	spread *fuseInput
}

// fuseChains rewrites every chain of two or more element-wise ops among the nodes outputs
// depend on into one fused node (see the top of this file) and returns the fused nodes.
func fuseChains(outputs []backends.Op) (fused []*simplego.Node) {
	info := map[*simplego.Node]*chainNode{}
	var order []*simplego.Node // every reachable node, inputs before users
	var visit func(n *simplego.Node) bool
	visit = func(n *simplego.Node) bool {
		if _, seen := info[n]; seen {
			return true
		}
		f, ok := fieldsOf(n)
		if !ok {
			return false
		}
		c := &chainNode{f: f}
		info[n] = c
		for _, in := range *f.inputs {
			if !visit(in) {
				return false
			}
			info[in].uses++
		}
		order = append(order, n)
		return true
	}
	for _, o := range outputs {
		n, ok := o.(*simplego.Node)
		if !ok || !visit(n) {
			return nil
		}
		info[n].uses++
	}
	for _, n := range order {
		c := info[n]
		op, ok := fusable[*c.f.opType]
		c.op = op
		c.member = ok && len(*c.f.multi) == 0 && operandsFit(c, info)
		if *c.f.opType == backends.OpTypeBroadcastInDim {
			c.spread = spreadOf(n, c, info)
		}
	}
	pos := make(map[*simplego.Node]int, len(order))
	for i, n := range order {
		pos[n] = i
	}
	absorbed := map[*simplego.Node]bool{}
	for i := len(order) - 1; i >= 0; i-- {
		root := order[i]
		if c := info[root]; c.member && !absorbed[root] && fuseAt(root, info, pos, absorbed) {
			fused = append(fused, root)
		}
	}
	return fused
}

// operandsFit reports whether c's output is a float32 tensor of at least fusedMinSize values
// and its operands have its shape or are scalars on a side the binary kernels accept.
func operandsFit(c *chainNode, info map[*simplego.Node]*chainNode) bool {
	s := *c.f.shape
	if s.DType != dtypes.Float32 || s.Size() < fusedMinSize {
		return false
	}
	ins := *c.f.inputs
	if c.op > fuseDiv {
		return len(ins) == 1 && info[ins[0]].f.shape.Equal(s)
	}
	if len(ins) != 2 {
		return false
	}
	l, r := *info[ins[0]].f.shape, *info[ins[1]].f.shape
	scalar := func(x shapes.Shape) bool { return x.DType == dtypes.Float32 && x.Rank() == 0 }
	return (l.Equal(s) && (r.Equal(s) || scalar(r))) || (scalar(l) && r.Equal(s))
}

// spreadOf returns how a chain would read the operand of the BroadcastInDim node n, or nil if it
// cannot (not float32, below fusedMinSize, unreadable parameters, more than two merged axes).
func spreadOf(n *simplego.Node, c *chainNode, info map[*simplego.Node]*chainNode) *fuseInput {
	out, axes, ok := readShapeAndAxes(n)
	ins := *c.f.inputs
	if !ok || out.DType != dtypes.Float32 || out.Size() < fusedMinSize || len(ins) != 1 || len(*c.f.multi) != 0 {
		return nil
	}
	op := *info[ins[0]].f.shape
	if op.DType != dtypes.Float32 || len(axes) != op.Rank() {
		return nil
	}
	strides, ok := broadcastStrides(out.Dimensions, op.Dimensions, axes)
	if !ok {
		return nil
	}
	dims, strides := mergeAxes(out.Dimensions, strides)
	if len(dims) > 2 {
		return nil
	}
	return &fuseInput{broadcast: true, dims: dims, strides: strides}
}

// fuseAt gathers the chain that ends at root — root and, recursively, every operand of the same
// shape that is a member and is read only by the chain (once or several times: the chain is a
// graph, such as a GELU's gradient, which reads its tanh in two places) — and, if it holds two
// ops or more, turns root into a fused node and returns true. pos orders the graph's nodes,
// inputs before users.
func fuseAt(root *simplego.Node, info map[*simplego.Node]*chainNode, pos map[*simplego.Node]int, absorbed map[*simplego.Node]bool) bool {
	shape := *info[root].f.shape
	chain := []*simplego.Node{root}
	inChain := map[*simplego.Node]bool{root: true}
	reads := map[*simplego.Node]int{} // reads by the chain's members so far
	spreads := 0                      // broadcasts read through
	for i := 0; i < len(chain); i++ {
		for _, in := range *info[chain[i]].f.inputs {
			c := info[in]
			if absorbed[in] || inChain[in] || !c.f.shape.Equal(shape) {
				continue
			}
			if reads[in]++; reads[in] < c.uses {
				continue // read outside the chain, as far as is known yet
			}
			if c.member {
				chain = append(chain, in)
				inChain[in] = true
			} else if c.spread != nil {
				absorbed[in] = true
				spreads++
			}
		}
	}
	for _, n := range chain { // a scalar on the left of Sub or Div is read as a fill, a spread input
		if scalarLeft(info[n], info) {
			spreads++
		}
	}
	if len(chain)+spreads < 2 {
		return false
	}
	// Program order: the graph's, inputs before users (root, which every member leads to, last).
	slices.SortFunc(chain, func(a, b *simplego.Node) int { return pos[a] - pos[b] })
	value := map[*simplego.Node]int{}
	spreadAt := map[*simplego.Node]int{} // the input index of each broadcast read through
	var inputs []*simplego.Node
	prog := &fusedProgram{size: shape.Size()}
	operand := func(n *simplego.Node) int {
		if v, ok := value[n]; ok {
			return -1 - v
		}
		if c := info[n]; c.spread != nil && absorbed[n] { // read the broadcast's operand spread
			if i, ok := spreadAt[n]; ok {
				return i
			}
			inputs = append(inputs, (*c.f.inputs)[0])
			prog.inputs = append(prog.inputs, *c.spread)
			spreadAt[n] = len(inputs) - 1
			return len(inputs) - 1
		}
		if i := slices.Index(inputs, n); i >= 0 && !prog.inputs[i].broadcast {
			return i
		}
		inputs = append(inputs, n)
		prog.inputs = append(prog.inputs, fuseInput{scalar: info[n].f.shape.Rank() == 0})
		return len(inputs) - 1
	}
	for _, n := range chain {
		c := info[n]
		ins := *c.f.inputs
		var in fuseInstr
		switch {
		case c.op > fuseDiv:
			in = fuseInstr{op: c.op, a: operand(ins[0])}
		case scalarLeft(c, info):
			// the scalar spread over each block (a fill)
			inputs = append(inputs, ins[0])
			prog.inputs = append(prog.inputs, fuseInput{broadcast: true})
			in = fuseInstr{op: c.op, a: len(inputs) - 1, b: operand(ins[1])}
		default:
			in = fuseInstr{op: c.op, a: operand(ins[0]), b: operand(ins[1])}
			if in.a >= 0 && prog.inputs[in.a].scalar { // Mul or Add: the scalar goes right
				in.a, in.b = in.b, in.a
			}
		}
		value[n] = len(prog.instrs)
		prog.instrs = append(prog.instrs, in)
	}
	prog.slot, prog.slots = assignSlots(prog.instrs)
	for _, n := range chain[:len(chain)-1] {
		absorbed[n] = true
	}
	f := info[root].f
	*f.inputs = inputs
	*f.opType = fusedOp
	*f.data = prog
	return true
}

// scalarLeft reports whether c is a Sub or Div of a scalar by a tensor (s − x, s / x), whose
// scalar a chain reads as a fill: the kernels take a scalar on the right only.
func scalarLeft(c *chainNode, info map[*simplego.Node]*chainNode) bool {
	return (c.op == fuseSub || c.op == fuseDiv) && info[(*c.f.inputs)[0]].f.shape.Rank() == 0
}

// assignSlots gives every value of a program but the last a scratch block, reusing the block of
// a value whose reads have all run: instruction k may write the block of an operand it reads for
// the last time (the kernels read each value before writing it). It returns each value's block
// and how many blocks there are.
func assignSlots(instrs []fuseInstr) (slot []int, slots int) {
	lastRead := make([]int, len(instrs))
	for k, in := range instrs {
		for _, o := range []int{in.a, in.b} {
			if o < 0 {
				lastRead[-1-o] = k
			}
		}
	}
	slot = make([]int, len(instrs))
	var free []int
	for k, in := range instrs {
		for _, o := range []int{in.a, in.b} {
			if v := -1 - o; o < 0 && lastRead[v] == k && !slices.Contains(free, slot[v]) {
				free = append(free, slot[v])
			}
		}
		if k == len(instrs)-1 {
			slot[k] = -1 // the output
			break
		}
		if len(free) > 0 {
			slot[k], free = free[len(free)-1], free[:len(free)-1]
		} else {
			slot[k], slots = slots, slots+1
		}
	}
	return slot, slots
}

// installFused makes the Go backend run fused nodes, where the executor table has no entry for
// fusedOp (so that no other node has that op type).
func installFused() {
	if simplegoNodeExecutors[fusedOp] == nil {
		simplegoNodeExecutors[fusedOp] = execFused
	}
}

// errNoAVX is fuseProblem's answer on a CPU without AVX: the one reason fusing is meant not to
// run (binaryFloat32's kernels need it); any other reason is a fault the tests report.
var errNoAVX = errors.New("the CPU has no AVX")

// fuseProblem says why fusing cannot run, or returns nil when it can: the AVX kernels of
// binaryFloat32 exist, fused nodes have their executor, the node fields are where fieldsOf looks,
// and Exp and Tanh's kernels give math's values (else the chains would not be bit for bit the
// backend's).
func fuseProblem() error {
	if !useAVX {
		return errNoAVX
	}
	if reflect.ValueOf(simplegoNodeExecutors[fusedOp]).Pointer() != reflect.ValueOf(execFused).Pointer() {
		return fmt.Errorf("op %s already has an executor in the Go backend", fusedOp)
	}
	if haveUnaryKernels && !kernels.UnaryExact() {
		return errors.New("the Exp and Tanh kernels do not give math's values")
	}
	if _, err := nodeOffsets(); err != nil {
		return err
	}
	return nil
}

// execFused runs a fused node: the program on blocks of fusedBlock values, split across the
// worker pool, into a new buffer or an owned input of the output's shape.
func execFused(b *simplego.Backend, node *simplego.Node, in []*simplego.Buffer, owned []bool) (*simplego.Buffer, error) {
	f, ok := fieldsOf(node)
	if !ok {
		return nil, fmt.Errorf("gobackend: fused node: unknown node layout")
	}
	prog, ok := (*f.data).(*fusedProgram)
	if !ok {
		return nil, fmt.Errorf("gobackend: op %s is not implemented by the Go backend", fusedOp)
	}
	s := *f.shape
	if len(in) != len(prog.inputs) {
		return nil, fmt.Errorf("gobackend: fused node %s: %d inputs, want %d", prog, len(in), len(prog.inputs))
	}
	vals := make([][]float32, len(in))
	take := -1
	spreads := 0
	for i := range in {
		data, err := b.BufferData(in[i])
		v, isF32 := data.([]float32)
		want := prog.size
		if prog.inputs[i].scalar {
			want = 1
		}
		if err != nil || !isF32 || (!prog.inputs[i].broadcast && len(v) != want) {
			return nil, fmt.Errorf("gobackend: fused node %s: input %d is not a float32 tensor of %d values", prog, i, want)
		}
		if p := prog.inputs[i]; p.broadcast {
			if len(v) <= maxSpreadIndex(p) {
				return nil, fmt.Errorf("gobackend: fused node %s: broadcast input %d has %d values", prog, i, len(v))
			}
			spreads++
		} else if take < 0 && owned[i] && !prog.inputs[i].scalar {
			take = i
		}
		vals[i] = v
	}
	out, values, ok := takeOrNewFloat32Buffer(b, in, owned, take, s)
	if !ok {
		return nil, fmt.Errorf("gobackend: fused node %s: no output buffer", prog)
	}
	workers.ParallelRange(prog.size, elementGrain, fusedBlock, func(lo, hi int) {
		scratch := workers.GetScratch((prog.slots + spreads) * fusedBlock)
		defer workers.PutScratch(scratch)
		spread := make([][]float32, len(vals))
		for at := lo; at < hi; at += fusedBlock {
			runFusedBlock(prog, vals, values, *scratch, spread, at, min(hi, at+fusedBlock))
		}
	})
	return out, nil
}

// maxSpreadIndex is the largest operand index a broadcast input reads.
func maxSpreadIndex(p fuseInput) int {
	top := 0
	for a, d := range p.dims {
		top += (d - 1) * p.strides[a]
	}
	return top
}

// runFusedBlock runs the program on values lo..hi−1: every value but the last in scratch (after
// them the broadcast inputs, spread; spread[i] is set to input i's), the last into out.
func runFusedBlock(prog *fusedProgram, in [][]float32, out, scratch []float32, spread [][]float32, lo, hi int) {
	m := hi - lo
	at := prog.slots
	for i, p := range prog.inputs {
		if p.broadcast {
			spread[i] = scratch[at*fusedBlock:][:m]
			spreadBlock(spread[i], in[i], p, lo)
			at++
		}
	}
	operand := func(i int) []float32 {
		if i < 0 {
			return scratch[prog.slot[-1-i]*fusedBlock:][:m]
		}
		if spread[i] != nil {
			return spread[i]
		}
		if prog.inputs[i].scalar {
			return in[i]
		}
		return in[i][lo:hi]
	}
	last := len(prog.instrs) - 1
	for k, ins := range prog.instrs {
		dst := out[lo:hi]
		if k < last {
			dst = scratch[prog.slot[k]*fusedBlock:][:m]
		}
		a := operand(ins.a)
		switch ins.op {
		case fuseNeg:
			negFloat32(dst, a)
		case fuseExp:
			expFloat32(dst, a)
		case fuseTanh:
			tanhFloat32(dst, a)
		case fuseLogistic:
			logisticFloat32(dst, a)
		case fuseSqrt:
			sqrtFloat32(dst, a)
		default: // b is a block of values or, where the program says so, a scalar
			binaryFloat32(dst, a, operand(ins.b), binaryOp(ins.op))
		}
	}
}

// spreadBlock writes values lo..lo+len(dst)−1 of a broadcast input, read from its operand x:
// along the inner axis a fill (stride 0), a copy (stride 1) or a strided read.
func spreadBlock(dst, x []float32, p fuseInput, lo int) {
	switch len(p.dims) {
	case 0:
		spreadRun(dst, x, 0, 0)
	case 1:
		spreadRun(dst, x, lo*p.strides[0], p.strides[0])
	default:
		inner, so, si := p.dims[1], p.strides[0], p.strides[1]
		r, c := lo/inner, lo%inner
		for len(dst) > 0 {
			n := min(inner-c, len(dst))
			spreadRun(dst[:n], x, r*so+c*si, si)
			dst, r, c = dst[n:], r+1, 0
		}
	}
}

// spreadRun sets dst[j] = x[base + j·stride].
func spreadRun(dst, x []float32, base, stride int) {
	switch stride {
	case 0:
		v, j := x[base], 0
		if useAVX && len(dst) >= 16 {
			j = len(dst) &^ 15
			kernels.FillF32AVX(&dst[0], v, j)
		}
		for ; j < len(dst); j++ {
			dst[j] = v
		}
	case 1:
		copy(dst, x[base:base+len(dst)])
	default:
		for j := range dst {
			dst[j] = x[base+j*stride]
		}
	}
}
