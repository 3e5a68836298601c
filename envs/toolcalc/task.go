package toolcalc

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// tool is a calculator tool; the operations come first, in the order of the instruction.
type tool int8

const (
	add tool = iota
	sub
	mul
	numOps // add, sub and mul take an operand
	undo   = numOps
	submit = numOps + 1
)

func (t tool) word() string {
	switch t {
	case add:
		return "add"
	case sub:
		return "sub"
	case mul:
		return "mul"
	case undo:
		return "undo"
	}
	return "submit"
}

// apply returns op(v, x), or ok=false when the result leaves 0..MaxValue.
func apply(op tool, v, x int) (int, bool) {
	var r int
	switch op {
	case add:
		r = v + x
	case sub:
		r = v - x
	default:
		r = v * x
	}
	return r, r >= 0 && r <= MaxValue
}

// Operand pools of the generator: add and sub draw from 1..9, mul from 2..5 (times 1 would be a no-op
// and larger factors leave the value range from almost every value).
const (
	minAddend, maxAddend = 1, 9
	minFactor, maxFactor = 2, 5
)

// pcgStream is the second PCG seed word. It is part of the task identity: changing it changes the
// task of every seed.
const pcgStream = 0x746f6f6c // "tool"

// maxDraws bounds task generation; most draws are accepted, so reaching it means a bug.
const maxDraws = 10_000

// numValues is the number of values 0..MaxValue.
const numValues = MaxValue + 1

// state is the state of the calculator: the current value and the undo stack of earlier values, oldest
// first (slots beyond depth are zero, so that equal states compare equal).
type state struct {
	value int8
	depth int8
	stack [MaxUndo]int8
}

// task is one calculator task: start, target, the operands of each tool, the undo depth, and the
// number of steps from each value to success without undo. It is a value type (fixed arrays) so that
// copying an env copies its task.
type task struct {
	start, target int
	operands      [numOps][MaxOperands]int8
	nOperands     int
	undoDepth     int
	// toTarget[v] is the optimal number of steps from value v to success using operations only (the
	// calls and the submit), or -1 when the target cannot be reached.
	toTarget [numValues]int8
}

// hasOperand reports whether x is an operand of op in this task.
func (t *task) hasOperand(op tool, x int) bool {
	for _, o := range t.operands[op][:t.nOperands] {
		if int(o) == x {
			return true
		}
	}
	return false
}

// do applies a call to a state: an operation with an available operand whose result stays in range
// pushes the old value onto the undo stack (dropping the oldest when it is full); undo pops it. It
// reports whether the call was allowed. Submit is handled by the env.
func (t *task) do(s state, op tool, x int) (state, bool) {
	if op == undo {
		if s.depth == 0 {
			return s, false
		}
		s.depth--
		s.value = s.stack[s.depth]
		s.stack[s.depth] = 0
		return s, true
	}
	if !t.hasOperand(op, x) {
		return s, false
	}
	r, ok := apply(op, int(s.value), x)
	if !ok {
		return s, false
	}
	if t.undoDepth > 0 {
		if int(s.depth) == t.undoDepth {
			copy(s.stack[:], s.stack[1:s.depth])
			s.depth--
		}
		s.stack[s.depth] = s.value
		s.depth++
	}
	s.value = int8(r)
	return s, true
}

// solve fills toTarget by a breadth-first search backwards from the target over the operations.
func (t *task) solve() {
	for v := range t.toTarget {
		t.toTarget[v] = -1
	}
	t.toTarget[t.target] = 1
	queue := [numValues]int{t.target}
	for head, tail := 0, 1; head < tail; head++ {
		u := queue[head]
		for v := range numValues {
			if t.toTarget[v] >= 0 || !t.reaches(v, u) {
				continue
			}
			t.toTarget[v] = t.toTarget[u] + 1
			queue[tail] = v
			tail++
		}
	}
}

// reaches reports whether one operation takes v to u.
func (t *task) reaches(v, u int) bool {
	for op := range numOps {
		for _, x := range t.operands[op][:t.nOperands] {
			if r, ok := apply(op, v, int(x)); ok && r == u {
				return true
			}
		}
	}
	return false
}

// distance is the optimal number of steps from s to success (calls and the submit), or -1. An optimal
// path never undoes a call it made (that is a detour of two steps), and undoing j entries of the
// initial stack costs j steps and leads to the j-th value from the top; so the optimum is j undos
// followed by operations only: min over j = 0..depth of j + toTarget(the value j undos lead to).
func (t *task) distance(s state) int {
	best := int(t.toTarget[s.value])
	for j := 1; j <= int(s.depth); j++ {
		if d := int(t.toTarget[s.stack[int(s.depth)-j]]); d >= 0 && (best < 0 || j+d < best) {
			best = j + d
		}
	}
	return best
}

// callsFrom returns the number of operations (no undo) from v to every value, -1 where unreachable.
func (t *task) callsFrom(v int) [numValues]int {
	var d [numValues]int
	for i := range d {
		d[i] = -1
	}
	d[v] = 0
	queue := []int{v}
	for head := 0; head < len(queue); head++ {
		u := queue[head]
		for op := range numOps {
			for _, x := range t.operands[op][:t.nOperands] {
				if r, ok := apply(op, u, int(x)); ok && d[r] < 0 {
					d[r] = d[u] + 1
					queue = append(queue, r)
				}
			}
		}
	}
	return d
}

// generate draws the task of a seed: a start in 1..MaxValue, cfg.Operands distinct operands per tool
// (add and sub from 1..9, mul from 2..5), redrawn from the same random stream until some value lies
// exactly cfg.Calls operations from the start; the target is drawn among those values. The optimal
// solution is therefore cfg.Calls calls and a submit, within every budget max_turns allows.
func (t *task) generate(cfg Config, seed int64) error {
	var pcg rand.PCG
	pcg.Seed(uint64(seed), pcgStream)
	rng := rand.New(&pcg)
	t.nOperands, t.undoDepth = cfg.Operands, cfg.Undo
	draw := func(op tool, lo, hi int) {
		pool := make([]int8, 0, hi-lo+1)
		for x := lo; x <= hi; x++ {
			pool = append(pool, int8(x))
		}
		for i := range cfg.Operands {
			j := i + rng.IntN(len(pool)-i)
			pool[i], pool[j] = pool[j], pool[i]
		}
		ops := pool[:cfg.Operands]
		slices.Sort(ops)
		copy(t.operands[op][:], ops)
	}
	for range maxDraws {
		t.start = 1 + rng.IntN(MaxValue)
		draw(add, minAddend, maxAddend)
		draw(sub, minAddend, maxAddend)
		draw(mul, minFactor, maxFactor)
		var candidates []int
		for v, d := range t.callsFrom(t.start) {
			if d == cfg.Calls {
				candidates = append(candidates, v)
			}
		}
		if len(candidates) == 0 {
			continue
		}
		t.target = candidates[rng.IntN(len(candidates))]
		t.solve()
		return nil
	}
	return fmt.Errorf("toolcalc: no task with %d calls for seed %d after %d draws", cfg.Calls, seed, maxDraws)
}

// newTask builds a hand-made task (for tests): start, target and the operands of add, sub and mul,
// as many for each tool.
func newTask(start, target int, adds, subs, muls []int, undoDepth int) (task, error) {
	t := task{start: start, target: target, undoDepth: undoDepth, nOperands: len(adds)}
	if len(adds) < 1 || len(adds) > MaxOperands || len(subs) != len(adds) || len(muls) != len(adds) ||
		start < 0 || start > MaxValue || target < 0 || target > MaxValue || undoDepth < 0 || undoDepth > MaxUndo {
		return t, fmt.Errorf("toolcalc: bad hand-made task %d→%d add %v sub %v mul %v undo %d", start, target, adds, subs, muls, undoDepth)
	}
	for op, xs := range [][]int{adds, subs, muls} {
		for i, x := range xs {
			if x < 0 || x > MaxValue {
				return t, fmt.Errorf("toolcalc: operand %d out of range", x)
			}
			t.operands[op][i] = int8(x)
		}
	}
	t.solve()
	return t, nil
}
