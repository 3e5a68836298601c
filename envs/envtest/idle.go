package envtest

import (
	"testing"

	"github.com/graftrl/graftrl/envs"
)

// idle checks the contract of envs.Idler on random episodes of every task seed: in every state an
// idle action is valid, ends nothing and changes nothing (the same StateKey and Info.Distance, no
// reward); where the env is a Cloner, a copy that took it continues as the original does (the next
// action gives the same observation). An episode of idle actions alone is truncated at the task's
// cap: each one spends a turn.
func (s *suite) idle(t *testing.T) {
	e := s.mustNew(t)
	idler, ok := e.(envs.Idler)
	if !ok || len(idler.IdleActions()) == 0 {
		t.Skip("no idle actions (envs.Idler)")
	}
	p := newPlayer(9, e.Vocabulary(), s.actions)
	for _, seed := range s.seeds {
		_, obs, err := e.Reset(seed)
		if err != nil {
			t.Fatal(err)
		}
		for !obs.Over() {
			next := p.next(e)
			for _, a := range idler.IdleActions() {
				s.idleStep(t, e, seed, a, obs, next)
			}
			obs = mustStep(t, e, next)
		}
		// Idle actions alone, from the start: the episode ends by truncation at the task's cap.
		if _, _, err := e.Reset(seed); err != nil {
			t.Fatal(err)
		}
		limit, turns := envs.TurnCapOf(e), 0
		for obs = (envs.Observation{}); !obs.Over() && turns <= limit; turns++ {
			obs = mustStep(t, e, idler.IdleActions()[turns%len(idler.IdleActions())])
		}
		if turns != limit || !obs.Truncated || obs.Done {
			t.Errorf("task %d: idle actions alone ended the episode after %d turns (truncated %v, done %v); want truncation at the cap, %d",
				seed, turns, obs.Truncated, obs.Done, limit)
		}
	}
}

// idleStep checks one idle action a in e's current state, whose last observation is prev, on a
// copy of e (e itself is left as it was): valid, no reward, nothing ended, the state unchanged;
// and the action next then gives the same observation as it gives without the idle turn.
func (s *suite) idleStep(t *testing.T, e envs.Env, seed int64, a string, prev envs.Observation, next string) {
	t.Helper()
	cl, ok := e.(envs.Cloner)
	if !ok {
		return
	}
	c, key := cl.Clone(), e.StateKey()
	obs := mustStep(t, c, a)
	switch {
	case obs.Info.Invalid || obs.Reward != 0 || obs.Done:
		t.Errorf("task %d, state %q: idle action %q gave invalid %v, reward %g, done %v; want a valid turn with no reward that ends nothing",
			seed, key, a, obs.Info.Invalid, obs.Reward, obs.Done)
	case c.StateKey() != key || obs.Info.Distance != prev.Info.Distance:
		t.Errorf("task %d: idle action %q moved the state from %q (distance %d) to %q (distance %d)",
			seed, a, key, prev.Info.Distance, c.StateKey(), obs.Info.Distance)
	}
	if obs.Over() {
		return
	}
	after, plain := mustStep(t, c, next), mustStep(t, cl.Clone(), next)
	if after.Truncated != plain.Truncated {
		return // the idle turn brought the cap one step closer
	}
	if after.Text != plain.Text || after.Reward != plain.Reward || after.Done != plain.Done || after.Info.Distance != plain.Info.Distance {
		t.Errorf("task %d, state %q: %q after idle action %q gave %+v; without it %+v", seed, key, next, a, after, plain)
	}
}
