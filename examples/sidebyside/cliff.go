package main

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/graftrl/graftrl/envs"
)

// cliff is a custom environment: a ledge of cells 0..n with the goal at one end and a cliff at
// the other; the agent starts one or two cells from the cliff and walks left or right. Falling
// off ends the episode as a failure, so a random walk sometimes succeeds and sometimes not —
// what group-relative estimators need — and walking back and forth revisits cells, which
// GRAFT merges into one graph node (StateKey names the cell, not the path to it).
//
// It implements envs.Env, envs.ActionWorder (the policy's action tokens are then limited to
// "left" and "right") and envs.Cloner, and passes the conformance suite (main_test.go). To train it with
// `graftrl train` too, register it with envs.Register (envs/example_register_test.go).
type cliff struct {
	n, pos, goal, turn int
	over               bool
}

// Reset draws the task from its seed: ledge length n in 4..7, the goal's side, and a start cell
// one or two from the cliff (a random walk s cells from the cliff reaches the goal first with
// probability s/n).
func (c *cliff) Reset(task int64) (string, envs.Observation, error) {
	r := rand.New(rand.NewPCG(uint64(task), 0)) // the same seed, the same task
	c.n, c.turn, c.over = 4+r.IntN(4), 0, false
	s := 1 + r.IntN(2)
	c.goal, c.pos = c.n, s
	if r.IntN(2) == 1 {
		c.goal, c.pos = 0, c.n-s
	}
	return "walk to the goal without falling", c.observe(), nil
}

// Step moves one cell; any text but "left" or "right" is an invalid action (a penalty, no move).
func (c *cliff) Step(action string) (envs.Observation, error) {
	if c.n == 0 || c.over {
		return envs.Observation{}, errors.New("cliff: Step before Reset or after the episode ended")
	}
	c.turn++
	var invalid bool
	switch action {
	case "left":
		c.pos--
	case "right":
		c.pos++
	default:
		invalid = true
	}
	obs := c.observe()
	if invalid {
		obs.Reward, obs.Info.Invalid = -0.1, true
	}
	switch {
	case c.pos == c.goal:
		obs.Done, obs.Outcome, obs.Info.Success = true, 1, true
	case c.pos == 0 || c.pos == c.n:
		obs.Done, obs.Info.Distance = true, envs.DistDead
	case c.turn >= c.MaxTurns():
		obs.Truncated = true
	}
	c.over = obs.Over()
	return obs, nil
}

// observe describes the current cell; Distance is the number of steps to the goal.
func (c *cliff) observe() envs.Observation {
	side := "right"
	if c.goal == 0 {
		side = "left"
	}
	return envs.Observation{Text: fmt.Sprintf("cell %d of %d goal %s", c.pos, c.n, side),
		Info: envs.Info{Distance: max(c.goal-c.pos, c.pos-c.goal)}}
}

// StateKey is the ledge and the cell: equal keys are one state whatever the path to it.
func (c *cliff) StateKey() string { return fmt.Sprintf("%d/%d/%d", c.n, c.goal, c.pos) }

// Vocabulary lists every word of the instruction, the observations and the actions.
func (c *cliff) Vocabulary() []string {
	return []string{"walk", "to", "the", "goal", "without", "falling", "cell", "of", "left", "right",
		"0", "1", "2", "3", "4", "5", "6", "7"}
}

// MaxTurns caps an episode at three times the longest ledge.
func (c *cliff) MaxTurns() int { return 21 }

// Clone copies the state (envs.Cloner: audits, and the conformance suite's distance checks).
func (c *cliff) Clone() envs.Env { d := *c; return &d }

// ActionWords are the words actions are made of.
func (c *cliff) ActionWords() []string { return []string{"left", "right"} }
