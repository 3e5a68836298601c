package grid

import (
	"errors"
	"math"

	"github.com/graftrl/graftrl/envs"
)

// Episode is the lifecycle every grid env shares: the task whose layout the env holds (drawn once
// per task seed and kept while the seed repeats, so that the rollouts of a group replay one task,
// or hand-built and kept for every seed), the turn count and step cap of the running episode, and
// whether one runs. An env holds one as a field of its value, so that Clone copies it.
type Episode struct {
	// fixed is set for a hand-built layout, which Load keeps whatever the seed.
	fixed bool
	// drawn is set once the env's layout is the one of task seed drawnSeed.
	drawn     bool
	drawnSeed int64
	// task is the task seed of the last Load.
	task    int64
	turn    int
	cap     int
	started bool
	over    bool
}

// FixedEpisode returns the lifecycle of an env on a hand-built layout, which Load keeps for every
// task seed.
func FixedEpisode() Episode { return Episode{fixed: true} }

// Load makes the env's layout that of task: it calls draw(task), which writes the layout into the
// env, unless the layout is hand-built or already that of task. A failed draw leaves a partial
// layout behind, so no episode runs (and Render draws nothing) until a draw succeeds.
func (e *Episode) Load(task int64, draw func(task int64) error) error {
	if !e.fixed && (!e.drawn || e.drawnSeed != task) {
		e.drawn, e.started = false, false
		if err := draw(task); err != nil {
			return err
		}
		e.drawn, e.drawnSeed = true, task
	}
	e.task = task
	return nil
}

// Start begins an episode on the loaded layout, truncated after cap steps.
func (e *Episode) Start(cap int) { e.turn, e.cap, e.started, e.over = 0, cap, true, false }

// Step runs one step of the episode of env (the env's name, for errors): it refuses a step before
// Reset or after the episode ended, which is a fault of the caller; counts the turn; lets move apply
// the action and make the observation; and truncates the episode on its cap. A step that ends the
// episode on the last turn is a termination, not a truncation.
func (e *Episode) Step(env string, move func() envs.Observation) (envs.Observation, error) {
	if !e.started {
		return envs.Observation{}, errors.New(env + ": Step before Reset")
	}
	if e.over {
		return envs.Observation{}, errors.New(env + ": Step after the episode ended")
	}
	e.turn++
	obs := move()
	obs.Truncated = !obs.Done && e.turn >= e.cap
	e.over = obs.Over()
	return obs, nil
}

// HasLayout reports whether there is a layout to play or draw: a hand-built one, or one drawn by
// Load.
func (e *Episode) HasLayout() bool { return e.fixed || e.drawn }

// Started reports whether an episode has started on the layout (it may have ended since).
func (e *Episode) Started() bool { return e.started }

// Running reports whether an episode runs: started and not ended.
func (e *Episode) Running() bool { return e.started && !e.over }

// Task returns the task seed of the last Reset.
func (e *Episode) Task() int64 { return e.task }

// Turn returns the number of steps of the episode so far, invalid ones included.
func (e *Episode) Turn() int { return e.turn }

// Cap returns the step cap of the episode.
func (e *Episode) Cap() int { return e.cap }

// Invalid is the observation of an invalid action: the penalty as the step reward, and the text and
// Info.Distance of the unchanged state.
func Invalid(penalty float64, text string, dist int) envs.Observation {
	return envs.Observation{Text: text, Reward: penalty, Info: envs.Info{Invalid: true, Distance: dist}}
}

// Success is the observation of the step that reaches the goal: the episode ends with the outcome.
func Success(outcome float64, text string) envs.Observation {
	return envs.Observation{Text: text, Outcome: outcome, Done: true, Info: envs.Info{Success: true}}
}

// Failure is the observation of the step that ends the episode in failure (a trap, a hole): outcome
// 0, and success out of reach.
func Failure(text string) envs.Observation {
	return envs.Observation{Text: text, Done: true, Info: envs.Info{Distance: envs.DistDead}}
}

// Moved is the observation of a valid step that does not end the episode.
func Moved(text string, dist int) envs.Observation {
	return envs.Observation{Text: text, Info: envs.Info{Distance: dist}}
}

// TurnCap is the step cap of a task whose optimal length is d under turn_cap_factor f: ⌈f·d⌉,
// less a rounding margin so that 1.1 × 10 is 11 and not 12.
func TurnCap(f float64, d int) int { return int(math.Ceil(f*float64(d) - 1e-9)) }

// MaxCap is the MaxTurns of a grid env with max_turns maxTurns and turn_cap_factor f whose
// longest task takes longest moves: max_turns, or under f the cap of the longest task.
func MaxCap(maxTurns int, f float64, longest int) int {
	if f != 0 {
		return TurnCap(f, longest)
	}
	return maxTurns
}

// TaskCap is the step cap of a task whose optimal length is d (see MaxCap for the rest): max_turns,
// or under f ⌈f·d⌉ at most MaxCap. A task without a positive length (its goal out of reach, on a
// hand-built layout) keeps max_turns.
func TaskCap(maxTurns int, f float64, d, longest int) int {
	if f != 0 && d > 0 {
		return min(TurnCap(f, d), MaxCap(maxTurns, f, longest))
	}
	return maxTurns
}
