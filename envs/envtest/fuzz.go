package envtest

import (
	"reflect"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
)

// Fuzz runs a fuzz target over the env's action parser: each input picks a task seed and a prefix of
// random actions, then steps the fuzzed text on two fresh instances. Neither may panic or return an
// error; both must agree; the observation must be vocabulary words; an invalid action must cost the
// penalty (Penalty, or any reward <= 0) and leave the state key and Info.Distance as they were; an
// accepted text, ASCII-lower-cased, must consist of vocabulary words (and of ActionWords, when the env
// lists them). Wire it as
//
//	func FuzzMazeStep(f *testing.F) { envtest.Fuzz(f, newEnv, envtest.Actions("up")) }
//
// The options are those of Run (Seeds, Actions, Penalty; the others do not apply).
func Fuzz(f *testing.F, newEnv func() (envs.Env, error), opts ...Option) {
	s := newSuite(newEnv, opts)
	probe, err := newEnv()
	if err != nil {
		f.Fatalf("newEnv: %v", err)
	}
	vocab := probe.Vocabulary()
	set, actionSet := map[string]bool{}, map[string]bool{}
	for _, w := range vocab {
		set[w] = true
	}
	aw, hasActionWords := probe.(actionWorder)
	if hasActionWords {
		for _, w := range aw.ActionWords() {
			actionSet[w] = true
		}
	}
	for i, g := range append(garbage(), s.invalid...) {
		f.Add(uint8(i), uint8(i), g)
	}
	for i, w := range vocab {
		f.Add(uint8(i), uint8(3*i), w)
		f.Add(uint8(i), uint8(i+1), w+" "+vocab[(i*7+3)%len(vocab)])
	}
	for i, a := range s.actions {
		f.Add(uint8(i), uint8(5*i), a)
		f.Add(uint8(i), uint8(i), strings.ToUpper(a)+"\n")
	}
	f.Fuzz(func(t *testing.T, task, prefix uint8, action string) {
		seed := s.seeds[int(task)%len(s.seeds)]
		run := func() (envs.Observation, envs.Observation, string, string) {
			e, err := newEnv()
			if err != nil {
				t.Fatalf("newEnv: %v", err)
			}
			_, before, err := e.Reset(seed)
			if err != nil {
				t.Fatalf("Reset(%d): %v", seed, err)
			}
			p := newPlayer(uint64(prefix), vocab, s.actions)
			for range prefix % 8 {
				a := p.next(e)
				o := mustStep(t, e, a)
				p.learn(a, o)
				if o.Over() {
					// The fuzzed text always meets a running episode.
					if _, o, err = e.Reset(seed); err != nil {
						t.Fatalf("Reset(%d): %v", seed, err)
					}
				}
				before = o
			}
			key := e.StateKey()
			after := mustStep(t, e, action)
			return before, after, key, e.StateKey()
		}
		before, obs, key, next := run()
		_, obs2, _, next2 := run()
		if !reflect.DeepEqual(obs, obs2) || next != next2 {
			t.Fatalf("Step(%q) from %q is not deterministic: %+v %q, then %+v %q", action, key, obs, next, obs2, next2)
		}
		if err := textError(obs.Text, set); err != nil {
			t.Fatalf("Step(%q) from %q: %v", action, key, err)
		}
		if !obs.Info.Invalid {
			for _, w := range strings.Fields(asciiLower(action)) {
				if !set[w] || (hasActionWords && !actionSet[w]) {
					t.Fatalf("Step(%q) from %q accepted the word %q, not in the vocabulary or ActionWords", action, key, w)
				}
			}
			return
		}
		switch {
		case s.hasPenalty && obs.Reward != s.penalty, obs.Reward > 0:
			t.Fatalf("invalid Step(%q) from %q: reward %v", action, key, obs.Reward)
		case obs.Done || obs.Outcome != 0 || obs.Info.Success:
			t.Fatalf("invalid Step(%q) from %q ended the episode: %+v", action, key, obs)
		case next != key:
			t.Fatalf("invalid Step(%q) changed the key from %q to %q", action, key, next)
		case obs.Info.Distance != before.Info.Distance:
			t.Fatalf("invalid Step(%q) from %q changed Info.Distance from %d to %d", action, key, before.Info.Distance, obs.Info.Distance)
		}
	})
}
