// Package envs defines the environment contract of graftrl: multi-turn, text-based tasks with a
// canonical state key, a vocabulary, a turn cap and fixed train/eval task panels. Each environment
// lives in its own sub-package and registers itself by name (see Register).
package envs

import (
	"fmt"
	"io"
)

// Env is one multi-turn environment instance. An instance runs one episode at a time and is not safe
// for concurrent use; the rollout collector creates one instance per parallel episode.
//
// An instance that holds resources (a network session, a subprocess, files) also implements
// io.Closer. Whoever creates an instance (through New, a Spec's New or a factory function handed
// to a collector) owns it and closes it, with Close, once it is done with it; an owner that hands
// instances to a collector closes the collector instead. Close is called at most once per
// instance, and the instance is not used afterwards.
type Env interface {
	// Reset starts the episode of the given task seed. It returns the task instruction (shown once
	// at the start of the context) and the first observation. The same seed always gives the same task.
	Reset(task int64) (instruction string, first Observation, err error)
	// Step applies the action text. Text the environment cannot parse or that is not allowed in the
	// current state is an invalid action: it costs the invalid-action penalty, leaves the state as it
	// was and sets Info.Invalid. An error is returned only for faults of the environment itself.
	Step(action string) (Observation, error)
	// StateKey is the canonical identity φ(s) of the current environment state (not of the history
	// that led to it). Two states with equal keys are merged by the step-level estimators.
	StateKey() string
	// Vocabulary lists every word the environment's instructions, observations and valid actions use.
	Vocabulary() []string
	// MaxTurns is the step cap: the episode is truncated after this many steps.
	MaxTurns() int
}

// Cloner is implemented by environments whose current state can be copied; the copy continues
// independently of the original (used by advantage audits).
type Cloner interface {
	Clone() Env
}

// ActionWorder is implemented by environments whose actions are made of a fixed set of words.
// The trainer can then restrict the policy's action tokens to them (rollout.constrain_actions):
// text outside the set can no longer be produced, so learning spends nothing on discovering
// which words are actions. Invalid actions (walls, malformed calls) remain possible.
type ActionWorder interface {
	ActionWords() []string
}

// EpisodeSeeder is implemented by stochastic environments. Before every Reset the collector
// passes a seed drawn from the run's sampling stream, so the rollouts of a group are independent
// of each other yet the run stays reproducible.
type EpisodeSeeder interface {
	SeedEpisode(seed int64)
}

// TurnCapper is implemented by environments whose step cap differs from task to task (maze's
// turn_cap_factor): TurnCap is the cap of the task the last Reset started, at most MaxTurns.
// Without it every task's cap is MaxTurns.
type TurnCapper interface {
	TurnCap() int
}

// TurnCapOf is the step cap of the task e's last Reset started: TurnCap where e implements
// TurnCapper, else MaxTurns.
func TurnCapOf(e Env) int {
	if c, ok := e.(TurnCapper); ok {
		return c.TurnCap()
	}
	return e.MaxTurns()
}

// Observation is what the agent receives after Reset or Step.
type Observation struct {
	// Text is the observation, in words of the environment's vocabulary separated by spaces.
	Text string `json:"text"`
	// Reward is the per-step reward r_t (for example the invalid-action penalty). It excludes the
	// episode outcome, which is reported in Outcome.
	Reward float64 `json:"reward"`
	// Outcome is the episode outcome R (the success reward, or 0); meaningful when Done is set.
	Outcome float64 `json:"outcome"`
	// Done is set when the episode terminated (success or failure).
	Done bool `json:"done"`
	// Truncated is set when the step cap ended the episode; a truncated episode counts as failure (R = 0).
	Truncated bool `json:"truncated"`
	// Info carries diagnostics about the step.
	Info Info `json:"info"`
}

// Over reports whether the episode has ended, by termination or truncation.
func (o Observation) Over() bool { return o.Done || o.Truncated }

// Distance values with a special meaning in Info.Distance.
const (
	// DistUnknown means the environment cannot compute the distance to success.
	DistUnknown = -1
	// DistDead means success can no longer be reached from this state (a trap, a dead end).
	DistDead = -2
)

// Info carries per-step diagnostics.
type Info struct {
	// Success is set on the step that ends the episode successfully.
	Success bool `json:"success,omitempty"`
	// Invalid is set when the action text could not be parsed or was not allowed.
	Invalid bool `json:"invalid_action,omitempty"`
	// Distance is the optimal number of steps from the new state to success, or DistUnknown / DistDead.
	Distance int `json:"distance"`
	// Extra holds environment-specific numeric diagnostics.
	Extra map[string]float64 `json:"extra,omitempty"`
}

// Spec describes a registered environment.
type Spec struct {
	// Name is the registry name used in configs (env.name).
	Name string
	// Description is one line about the task.
	Description string
	// Options documents the env's configuration keys and their defaults.
	Options []OptionDoc
	// New builds an instance from the configuration options (the keys of the env section other
	// than name). Unknown keys and out-of-range values are errors that name the key.
	New func(opts Options) (Env, error)
	// Check, when set, checks the options as New does, but without building an instance and
	// without I/O: an env whose New reaches out (a server's metadata, a subprocess) sets it, so
	// that a config can be validated offline; what only the server can tell is then checked by
	// New. Nil means New itself does no I/O, and CheckOptions builds and closes an instance.
	Check func(opts Options) error
}

// OptionDoc documents one configuration key of an environment.
type OptionDoc struct {
	Key     string
	Default string
	Help    string
}

// registry holds the registered environments, filled by the sub-packages' init functions.
var registry = map[string]Spec{}

// Register adds an environment. It panics on a duplicate or empty name (a programming error).
func Register(s Spec) {
	if s.Name == "" || s.New == nil {
		panic("envs: Register needs a name and a constructor")
	}
	if _, dup := registry[s.Name]; dup {
		panic(fmt.Sprintf("envs: environment %q registered twice", s.Name))
	}
	registry[s.Name] = s
}

// Close releases an environment instance's resources: it calls Close when e implements io.Closer
// and does nothing otherwise (a nil e included).
func Close(e Env) error {
	if c, ok := e.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
