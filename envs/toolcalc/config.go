package toolcalc

import (
	"fmt"
	"strconv"

	"github.com/graftrl/graftrl/envs"
)

// Name is the registry name of the environment.
const Name = "toolcalc"

// MaxValue bounds the current value: every value 0..MaxValue is one word of the vocabulary.
const MaxValue = 20

// Option bounds.
const (
	// MaxCalls bounds the optimal number of tool calls a task needs.
	MaxCalls = 6
	// MaxOperands bounds the operand values available per tool.
	MaxOperands = 3
	// MaxUndo bounds the undo depth; the state key holds the undo stack, so deeper stacks split states.
	MaxUndo = 2
)

// maxTurnsLimit caps max_turns: the policy's context holds the whole episode.
const maxTurnsLimit = 50

// Config holds the options of a calculator task; the yaml tags are the keys of the env section.
type Config struct {
	// Calls is the optimal number of tool calls (add, sub, mul) from the start to the target.
	Calls int `yaml:"calls"`
	// Operands is the number of operand values available for each tool.
	Operands int `yaml:"operands"`
	// Undo is the depth of the undo stack: how many calls undo can take back; 0 disables undo.
	Undo int `yaml:"undo"`
	// MaxTurns is the step cap, the budget of calls including submit; at least Calls+1.
	MaxTurns int `yaml:"max_turns"`
	// InvalidPenalty is the per-step reward r_t of an invalid action.
	InvalidPenalty float64 `yaml:"invalid_penalty"`
	// SuccessReward is the outcome R of submitting the target.
	SuccessReward float64 `yaml:"success_reward"`
}

// DefaultConfig returns the defaults for tasks of the given optimal number of calls; the budget leaves
// four calls of slack.
func DefaultConfig(calls int) Config {
	return Config{
		Calls:          calls,
		Operands:       2,
		Undo:           1,
		MaxTurns:       calls + 1 + 4,
		InvalidPenalty: -0.1,
		SuccessReward:  1,
	}
}

// DefaultCalls is the default optimal number of tool calls.
const DefaultCalls = 3

// Validate checks the ranges of the options; the errors are *envs.OptionError naming the key.
func (c Config) Validate() error {
	if err := envs.CheckRange(Name, "calls", c.Calls, 1, MaxCalls); err != nil {
		return err
	}
	if err := envs.CheckRange(Name, "operands", c.Operands, 1, MaxOperands); err != nil {
		return err
	}
	if err := envs.CheckRange(Name, "undo", c.Undo, 0, MaxUndo); err != nil {
		return err
	}
	if err := envs.CheckRange(Name, "max_turns", c.MaxTurns, c.Calls+1, maxTurnsLimit); err != nil {
		return envs.NoteAllowed(err, " for "+strconv.Itoa(c.Calls)+" calls")
	}
	return envs.CheckRewards(Name, c.InvalidPenalty, c.SuccessReward)
}

// ConfigFromOptions decodes and validates the options of the env section. The budget defaults by the
// number of calls, so calls is decoded first and the defaults it implies are then overridden.
func ConfigFromOptions(opts envs.Options) (Config, error) {
	return envs.DecodeOptions(Name, opts, DefaultConfig(DefaultCalls), func(probe Config) (Config, error) {
		return DefaultConfig(probe.Calls), envs.CheckRange(Name, "calls", probe.Calls, 1, MaxCalls)
	})
}

func optionDocs() []envs.OptionDoc {
	d := DefaultConfig(DefaultCalls)
	return []envs.OptionDoc{
		{Key: "calls", Default: strconv.Itoa(d.Calls), Help: fmt.Sprintf("optimal number of tool calls from start to target (the difficulty), 1..%d", MaxCalls)},
		{Key: "operands", Default: strconv.Itoa(d.Operands), Help: fmt.Sprintf("operand values available per tool, 1..%d", MaxOperands)},
		{Key: "undo", Default: strconv.Itoa(d.Undo), Help: fmt.Sprintf("undo depth (0 disables undo); the state key holds the undo stack, 0..%d", MaxUndo)},
		{Key: "max_turns", Default: "calls+5 (" + strconv.Itoa(d.MaxTurns) + ")", Help: fmt.Sprintf("budget of calls including submit (the step cap), calls+1..%d", maxTurnsLimit)},
		envs.PenaltyDoc(d.InvalidPenalty, "call"),
		envs.SuccessDoc(d.SuccessReward, "submitting the target"),
	}
}

func init() {
	envs.Register(envs.Spec{
		Name:        Name,
		Description: "reach a target number from a start number with calculator tool calls (add, sub, mul, undo) and submit it",
		Options:     optionDocs(),
		New:         envs.Constructor(ConfigFromOptions, New),
	})
}
