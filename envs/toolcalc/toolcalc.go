// Package toolcalc is the tool-use environment of graftrl: reach a target number from a start number
// by calling calculator tools, one call per turn, and submit the result. Actions are multi-word tool
// calls (a tool name and an operand), so the policy must emit well-formed calls; malformed ones are
// invalid actions, as a tool-calling agent's would be.
//
// Tasks. The task of a seed is drawn with a PCG generator seeded by the seed: a start value in 1..20,
// `operands` distinct operand values for each of the tools add and sub (from 1..9) and mul (from
// 2..5), redrawn from the same stream until some value lies exactly `calls` operations away; the
// target is drawn among those values. The optimal solution is thus `calls` tool calls then submit, and
// max_turns (at least calls+1) always leaves the task solvable in time.
//
// Text. Words are separated by single spaces; numbers are the words 0..20.
//
//	instruction   target <T> add <x>... sub <x>... mul <x>...   target 17 add 3 7 sub 2 5 mul 2 3
//	observation   value <V>                                      value 4
//	invalid       invalid value <V>                              invalid value 4
//	submitted     value <V> correct | value <V> wrong            value 17 correct
//
// The first observation shows the start value. An episode at the default budget (8 calls) takes
// about 60 tokens.
//
// Actions are tool calls, case-insensitive, words separated by any ASCII white space:
//
//	add <x>, sub <x>, mul <x>   apply the tool with operand x, which must be one of the tool's operands
//	                            listed in the instruction; the result must stay within 0..20
//	undo                        go back to the value before the last call (up to `undo` calls back)
//	submit                      end the episode: success iff the value is the target
//
// Anything else is an invalid action: an unknown tool, a missing, extra or malformed operand ("add",
// "add x", "mul 7 7", "add 07"), an operand the tool does not offer, a result outside 0..20, undo with
// nothing to undo. An invalid action costs invalid_penalty as the step reward, leaves the state as it
// was and sets Info.Invalid. Submit ends the episode (Done) with outcome success_reward and
// Info.Success when the value is the target, and with outcome 0 and Info.Distance = envs.DistDead
// otherwise. After max_turns steps (invalid ones included) the episode is truncated. Info.Distance is
// the optimal number of steps left, calls and the submit: a breadth-first search over the values gives
// the steps without undo, and the best of undoing j calls first is taken (an optimal path never undoes
// a call it made itself).
//
// The state key is the value, followed by the undo stack (oldest first) when undo is enabled:
// "<V>" with undo 0, "<V>|" with an empty stack, "<V>|<a>,<b>" otherwise, for example "12|4". The stack
// is part of the state because undo makes the future depend on it; it splits states that only differ
// by the way they were reached (12 after 4 and 12 after 6), so undo 0 gives the most merging and undo 1
// (the default) the least splitting that still offers undo.
//
// Vocabulary (31 words, the same for every option): 0..20, add, sub, mul, undo, submit, target,
// value, invalid, correct, wrong.
//
// Options (see Config): calls (default 3), operands (2), undo (1), max_turns (calls+5: 8),
// invalid_penalty (-0.1), success_reward (1).
//
// Import the package for its side effect of registering "toolcalc" (or import envs/all).
package toolcalc

import (
	"errors"
	"strconv"
	"strings"

	"github.com/graftrl/graftrl/envs"
)

// vocabulary lists every word the env emits or accepts, in a fixed order; actionWords those calls use.
const (
	actionWords = "0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 add sub mul undo submit"
	vocabulary  = actionWords + " target value invalid correct wrong"
)

// maxCallLen bounds the length of a call's text: the longest call is "submit" or "add 20" with some
// white space; anything longer is not a call.
const maxCallLen = 32

// isSpace reports ASCII white space, the only separator of call words.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// parseCall reads a tool call without allocating: at most two ASCII words, lower-cased into a stack
// buffer; the operand is a number word 0..MaxValue written as the vocabulary writes it (no sign, no
// leading zero). It reports ok=false for text that is not a call; whether the call is allowed in the
// current state is decided by the env.
func parseCall(text string) (op tool, x int, ok bool) {
	if len(text) > maxCallLen {
		return 0, 0, false
	}
	var buf [maxCallLen]byte
	var words [2][]byte
	n := 0
	for i := 0; i < len(text); {
		c := text[i]
		if isSpace(c) {
			i++
			continue
		}
		if n == len(words) {
			return 0, 0, false
		}
		start := i
		for ; i < len(text) && !isSpace(text[i]); i++ {
			c := text[i]
			if c >= 0x80 {
				return 0, 0, false
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf[i] = c
		}
		words[n] = buf[start:i]
		n++
	}
	if n == 0 {
		return 0, 0, false
	}
	switch string(words[0]) {
	case "add":
		op = add
	case "sub":
		op = sub
	case "mul":
		op = mul
	case "undo":
		return undo, 0, n == 1
	case "submit":
		return submit, 0, n == 1
	default:
		return 0, 0, false
	}
	if n != 2 {
		return 0, 0, false
	}
	x, ok = parseNumber(words[1])
	return op, x, ok
}

// parseNumber reads a number word 0..MaxValue in its canonical form.
func parseNumber(w []byte) (int, bool) {
	if len(w) == 0 || len(w) > 2 || (len(w) == 2 && w[0] == '0') {
		return 0, false
	}
	x := 0
	for _, c := range w {
		if c < '0' || c > '9' {
			return 0, false
		}
		x = 10*x + int(c-'0')
	}
	return x, x <= MaxValue
}

// ToolCalc is one calculator environment instance (see the package doc). It implements envs.Env,
// envs.Cloner, envs.ValidActioner and envs.Expert; the zero value is not usable, build one with New.
type ToolCalc struct {
	cfg Config
	task
	// seeded is set once task holds the task of taskSeed, which Reset then reuses: the rollouts of a
	// group replay the same task.
	seeded   bool
	taskSeed int64
	// fixed is set for hand-made tasks, which Reset keeps whatever the seed.
	fixed bool

	cur     state
	turn    int
	started bool
	over    bool
	// scratch holds text while it is built; as an array it is copied, not shared, by Clone.
	scratch [32]byte
}

var (
	_ envs.Env           = (*ToolCalc)(nil)
	_ envs.Cloner        = (*ToolCalc)(nil)
	_ envs.ValidActioner = (*ToolCalc)(nil)
	_ envs.Expert        = (*ToolCalc)(nil)
)

// New returns a calculator environment with the given configuration. Reset must be called before
// Step.
func New(cfg Config) (*ToolCalc, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &ToolCalc{cfg: cfg}, nil
}

// newFromTask returns an environment on a hand-made task that Reset keeps for every seed. Operands
// and undo depth of cfg are taken from the task; the other options apply as given, unvalidated.
func newFromTask(t task, cfg Config) *ToolCalc {
	cfg.Operands, cfg.Undo = t.nOperands, t.undoDepth
	return &ToolCalc{cfg: cfg, task: t, fixed: true}
}

// Config returns the configuration of the environment.
func (e *ToolCalc) Config() Config { return e.cfg }

// Reset starts the episode of a task seed (see the package doc for the instruction format).
func (e *ToolCalc) Reset(seed int64) (string, envs.Observation, error) {
	if !e.fixed && (!e.seeded || e.taskSeed != seed) {
		// A failed draw leaves a partial task behind; no episode may run on it.
		e.seeded, e.started = false, false
		if err := e.generate(e.cfg, seed); err != nil {
			return "", envs.Observation{}, err
		}
		e.seeded, e.taskSeed = true, seed
	}
	e.cur = state{value: int8(e.start)}
	e.turn, e.started, e.over = 0, true, false
	obs := envs.Observation{Text: e.text(false, ""), Info: envs.Info{Distance: e.distance()}}
	return e.instruction(), obs, nil
}

// instruction is "target <T> add <x>... sub <x>... mul <x>...".
func (e *ToolCalc) instruction() string {
	var b strings.Builder
	b.WriteString("target ")
	b.WriteString(strconv.Itoa(e.target))
	for op := range numOps {
		b.WriteByte(' ')
		b.WriteString(op.word())
		for _, x := range e.operands[op][:e.nOperands] {
			b.WriteByte(' ')
			b.WriteString(strconv.Itoa(int(x)))
		}
	}
	return b.String()
}

// Step applies one tool call (see the package doc). Stepping before Reset or after the episode ended
// is a fault of the caller and returns an error.
func (e *ToolCalc) Step(action string) (envs.Observation, error) {
	if !e.started {
		return envs.Observation{}, errors.New("toolcalc: Step before Reset")
	}
	if e.over {
		return envs.Observation{}, errors.New("toolcalc: Step after the episode ended")
	}
	e.turn++
	var obs envs.Observation
	op, x, ok := parseCall(action)
	next := e.cur
	if ok && op != submit {
		next, ok = e.do(e.cur, op, x)
	}
	switch {
	case !ok:
		obs.Reward = e.cfg.InvalidPenalty
		obs.Info.Invalid = true
		obs.Text = e.text(true, "")
		obs.Info.Distance = e.distance()
	case op == submit && int(e.cur.value) == e.target:
		obs.Done = true
		obs.Outcome = e.cfg.SuccessReward
		obs.Info.Success = true
		obs.Text = e.text(false, "correct")
	case op == submit:
		obs.Done = true
		obs.Text = e.text(false, "wrong")
		obs.Info.Distance = envs.DistDead
	default:
		e.cur = next
		obs.Text = e.text(false, "")
		obs.Info.Distance = e.distance()
	}
	// A submit on the last turn is a termination, not a truncation.
	obs.Truncated = !obs.Done && e.turn >= e.cfg.MaxTurns
	e.over = obs.Over()
	return obs, nil
}

// distance is Info.Distance of the current state.
func (e *ToolCalc) distance() int { return e.distanceOf(e.cur) }

// distanceOf is Info.Distance of a state.
func (e *ToolCalc) distanceOf(s state) int {
	if d := e.task.distance(s); d >= 0 {
		return d
	}
	return envs.DistDead
}

// text is "[invalid] value <V> [verdict]", built in scratch so that it costs one allocation.
func (e *ToolCalc) text(invalid bool, verdict string) string {
	b := e.scratch[:0]
	if invalid {
		b = append(b, "invalid "...)
	}
	b = append(b, "value "...)
	b = strconv.AppendInt(b, int64(e.cur.value), 10)
	if verdict != "" {
		b = append(b, ' ')
		b = append(b, verdict...)
	}
	return string(b)
}

// StateKey returns the value, and the undo stack when undo is enabled (see the package doc).
func (e *ToolCalc) StateKey() string {
	if e.cfg.Undo == 0 {
		return strconv.Itoa(int(e.cur.value))
	}
	b := e.scratch[:0]
	b = strconv.AppendInt(b, int64(e.cur.value), 10)
	b = append(b, '|')
	for i, v := range e.cur.stack[:e.cur.depth] {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(v), 10)
	}
	return string(b)
}

// Vocabulary returns the words of the env (see the package doc), the same for every option.
func (e *ToolCalc) Vocabulary() []string { return strings.Fields(vocabulary) }

// ActionWords returns the words calls are made of: the tools and the numbers 0..20 (see
// envs.ActionWorder); the observation words target, value, invalid, correct and wrong are left out.
func (e *ToolCalc) ActionWords() []string { return strings.Fields(actionWords) }

// MaxTurns returns the step cap, the budget of calls.
func (e *ToolCalc) MaxTurns() int { return e.cfg.MaxTurns }

// Clone returns an independent copy of the environment in its current state.
func (e *ToolCalc) Clone() envs.Env {
	c := *e
	return &c
}

// Render describes the task and the state for people on three lines: the instruction, the value with
// the undo stack, and the turn. Before the first Reset of a generated task it returns "".
func (e *ToolCalc) Render() string {
	if !e.fixed && !e.seeded {
		return ""
	}
	var b strings.Builder
	b.WriteString(e.instruction())
	b.WriteString("\nvalue ")
	v := e.cur
	if !e.started {
		v = state{value: int8(e.start)}
	}
	b.WriteString(strconv.Itoa(int(v.value)))
	if e.undoDepth > 0 {
		b.WriteString("  undo stack [")
		for i, x := range v.stack[:v.depth] {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.Itoa(int(x)))
		}
		b.WriteByte(']')
	}
	b.WriteString("\nturn ")
	b.WriteString(strconv.Itoa(e.turn))
	b.WriteString(" of ")
	b.WriteString(strconv.Itoa(e.cfg.MaxTurns))
	b.WriteByte('\n')
	return b.String()
}
