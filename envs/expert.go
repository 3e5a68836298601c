package envs

import (
	"errors"
	"fmt"
)

// Expert is implemented by environments that know a best action in their current state: the
// demonstrator of a warm start by supervised fine-tuning, and the reference ("expert") row of a
// comparison. The contract:
//
//   - Best: the action maximises the probability of success before the step cap from the current
//     state, given the env's full state (the whole layout, catalogue or task, not only what the
//     observations showed). On a deterministic env that is an action on a shortest path to
//     success: the step succeeds, or lowers Info.Distance by exactly one. Each env documents how it
//     breaks ties and what it returns where success can no longer be reached (always a valid action).
//   - Valid: Step never marks the action invalid; the text is exactly what Step parses (and, where
//     the env has ValidActions, one of its texts).
//   - Deterministic: the action is a function of the env state (the same state gives the same
//     action, whatever the history and whichever instance).
//   - Read-only: the call changes nothing the episode depends on (no turn, no random draw); the env
//     continues exactly as it would have without it. It may fill a per-task cache.
//
// ExpertAction returns an error wrapping ErrNoAction before Reset and after the episode ended.
type Expert interface {
	ExpertAction() (string, error)
}

// ValidActioner is implemented by environments that can list the actions allowed in the current
// state, for example to draw a random valid action (the noise of ε-noisy demonstrations). The
// contract: every listed text is an action Step accepts (it does not set Info.Invalid), written
// exactly as Step parses it; every allowed transition of the state has a listed text, but texts
// Step treats alike (other letter case, spacing, word order) are listed once, in a canonical form;
// the list has no duplicates, its order is fixed by the state, and listing changes nothing. It is
// empty before Reset and after the episode ended.
type ValidActioner interface {
	ValidActions() []string
}

// Idler is implemented by environments whose agent can spend a turn on an action that changes
// nothing (looking around, waiting: ALFWorld's look, inventory and examine), the wasted steps of
// agent tasks. A warm start whose demonstrations take them at a set rate (sft.idle) puts a
// controlled share of wasted steps into its successes. The contract: while an episode runs,
// Step accepts every listed text (never Info.Invalid), spends one turn on it, and leaves the
// state unchanged (the same StateKey, Info.Distance, valid actions and every later step);
// ValidActions, where the env has it, lists them too. The list is fixed for an env instance and
// empty when its options leave the actions out.
type Idler interface {
	IdleActions() []string
}

// ErrNoAction is wrapped by the errors of ExpertAction (and of ExpertOf's experts) when no action can
// be taken: before Reset, after the episode ended, or when no action is allowed.
var ErrNoAction = errors.New("no action: no episode is running or no action is allowed")

// ExpertOf returns the best expert env offers, bound to env: its own ExpertAction when it implements
// Expert, otherwise the one-step lookahead expert (LookaheadAction) when it implements ValidActioner
// and Cloner; ok is false when it offers neither. The lookahead expert is only as good as the env's
// Info.Distance: it is the best action when Info.Distance is the exact shortest distance of a
// deterministic env.
func ExpertOf(env Env) (expert func() (string, error), ok bool) {
	if x, isExpert := env.(Expert); isExpert {
		return x.ExpertAction, true
	}
	_, lists := env.(ValidActioner)
	_, clones := env.(Cloner)
	if lists && clones {
		return func() (string, error) { return LookaheadAction(env) }, true
	}
	return nil, false
}

// LookaheadAction is the generic one-step-lookahead expert: it steps a clone of env with each of its
// valid actions and returns the first one that succeeds, or else the first one that leads to the
// smallest known Info.Distance; where no valid action leads to a known distance (success cannot be
// reached, or the env does not know its distances), the first valid action. env must implement
// ValidActioner and Cloner; env itself is not stepped. With an exact Info.Distance on a
// deterministic env this is a best action in the sense of Expert (a stochastic env whose clones
// replay its random stream would have the lookahead foresee the draws, so such envs implement
// Expert themselves).
func LookaheadAction(env Env) (string, error) {
	va, lists := env.(ValidActioner)
	c, clones := env.(Cloner)
	if !lists || !clones {
		return "", errors.New("envs: the lookahead expert needs an env with ValidActions and Clone")
	}
	actions := va.ValidActions()
	if len(actions) == 0 {
		return "", fmt.Errorf("envs: lookahead expert: %w", ErrNoAction)
	}
	dists := make([]int, len(actions))
	for i, a := range actions {
		obs, err := c.Clone().Step(a)
		if err != nil {
			return "", fmt.Errorf("envs: lookahead expert: Step(%q) on a clone: %w", a, err)
		}
		switch {
		case obs.Info.Invalid:
			return "", fmt.Errorf("envs: lookahead expert: the valid action %q is invalid", a)
		case obs.Info.Success:
			dists[i] = 0
		case obs.Done:
			dists[i] = DistDead
		default:
			dists[i] = obs.Info.Distance
		}
	}
	return actions[Closest(dists)], nil
}

// Closest returns the index of the first of dists (the distances to success that a state's candidate
// actions lead to, 0 for success) that is smallest among the known ones (>= 0), or 0 when none is
// known: the choice of a shortest-path expert that breaks ties by the order of the candidates. It
// panics on an empty slice.
func Closest(dists []int) int {
	best := 0
	for i, d := range dists {
		if d >= 0 && (dists[best] < 0 || d < dists[best]) {
			best = i
		}
	}
	return best
}
