package toolcalc

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/graftrl/graftrl/envs"
)

// calls returns the allowed calls of the current state in their canonical text, in the order of the
// instruction (add, sub, mul, each with its operands as listed), then undo and submit, with
// Info.Distance after each (0 for a submit of the target, envs.DistDead for a wrong one).
func (e *ToolCalc) calls() (texts []string, dists []int) {
	for op := range numOps {
		ops := e.operands[op][:e.nOperands]
		for k, x := range ops {
			next, ok := e.do(e.cur, op, int(x))
			if !ok || slices.Contains(ops[:k], x) { // a hand-made task may repeat an operand
				continue
			}
			texts = append(texts, op.word()+" "+strconv.Itoa(int(x)))
			dists = append(dists, e.distanceOf(next))
		}
	}
	if next, ok := e.do(e.cur, undo, 0); ok {
		texts = append(texts, undo.word())
		dists = append(dists, e.distanceOf(next))
	}
	submitted := envs.DistDead
	if int(e.cur.value) == e.target {
		submitted = 0
	}
	return append(texts, submit.word()), append(dists, submitted)
}

// ValidActions returns the allowed calls: each tool with each of its operands whose result stays in
// 0..20, in the order of the instruction, then undo when there is something to undo, and submit
// (see envs.ValidActioner).
func (e *ToolCalc) ValidActions() []string {
	if !e.started || e.over {
		return nil
	}
	texts, _ := e.calls()
	return texts
}

// ExpertAction returns the first call, in the order of ValidActions, that lies on a shortest way to
// success: the search over calls is the breadth-first search behind Info.Distance (over the values,
// with the best number of undos first), so the expert makes the fewest calls and submits the target.
// Where the target can no longer be reached, it returns the first allowed call, which is submit only
// when no other call is allowed (see envs.Expert).
func (e *ToolCalc) ExpertAction() (string, error) {
	if !e.started || e.over {
		return "", fmt.Errorf("toolcalc: %w", envs.ErrNoAction)
	}
	texts, dists := e.calls()
	return texts[envs.Closest(dists)], nil
}
