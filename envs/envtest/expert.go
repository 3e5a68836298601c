package envtest

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/graftrl/graftrl/envs"
)

// noiseEpsilon is the share of random valid actions in the noisy episodes of RunExpert, as in the
// ε-noisy demonstrations of a warm start.
const noiseEpsilon = 0.3

// RunExpert checks the expert an env offers (envs.ExpertOf) and its list of valid actions
// (envs.ValidActioner, when the env has one) on every task seed of the suite (pass the panel with
// Seeds), one subtest each:
//
//   - NotRunning: before Reset and after the end of an episode the expert's error wraps
//     envs.ErrNoAction and ValidActions is empty.
//   - Solves: the expert alone plays every task. Its actions are never invalid and are listed by
//     ValidActions; asking for one changes nothing (the env and a clone taken before the call then
//     step identically) and gives the same action twice and on a clone. Unless the env is
//     Stochastic, it succeeds on every task within MaxTurns, in exactly the first Info.Distance
//     steps where that is known. The log gives the share solved, the mean number of steps and the
//     mean step cap.
//   - Noisy: episodes in which a random valid action replaces the expert's with probability 0.3.
//     In every state visited, each listed action is accepted and listed once, and with ActionSet
//     every transition of the set's actions is reached by a listed action; unless the env is
//     Stochastic, from a state of known distance d >= 1 the expert's action succeeds or reaches
//     distance d-1 (it is optimal off its own path too), and so does the generic lookahead expert
//     (envs.LookaheadAction) on the same state.
func RunExpert(t *testing.T, newEnv func() (envs.Env, error), opts ...Option) {
	t.Helper()
	s := newSuite(newEnv, opts)
	if _, ok := envs.ExpertOf(s.mustNew(t)); !ok {
		t.Fatal("the env offers no expert (envs.Expert, or envs.ValidActioner with envs.Cloner)")
	}
	t.Run("NotRunning", func(t *testing.T) { s.expertNotRunning(t) })
	t.Run("Solves", func(t *testing.T) { s.expertSolves(t) })
	t.Run("Noisy", func(t *testing.T) { s.expertNoisy(t) })
}

// validActions returns e's ValidActions, or nil when it has none.
func validActions(e envs.Env) []string {
	if va, ok := e.(envs.ValidActioner); ok {
		return va.ValidActions()
	}
	return nil
}

// expertAction asks e's expert for its action and fails the test on an error.
func expertAction(t testing.TB, e envs.Env) string {
	t.Helper()
	expert, _ := envs.ExpertOf(e)
	a, err := expert()
	if err != nil {
		t.Fatalf("state %q: the expert: %v", e.StateKey(), err)
	}
	return a
}

func (s *suite) expertNotRunning(t *testing.T) {
	e := s.mustNew(t)
	check := func(when string) {
		expert, _ := envs.ExpertOf(e)
		if a, err := expert(); !errors.Is(err, envs.ErrNoAction) {
			t.Errorf("%s: the expert returns %q, %v; want an error wrapping envs.ErrNoAction", when, a, err)
		}
		if as := validActions(e); len(as) > 0 {
			t.Errorf("%s: ValidActions = %q, want none", when, as)
		}
	}
	check("before Reset")
	for _, seed := range s.seeds[:min(3, len(s.seeds))] {
		if _, _, err := e.Reset(seed); err != nil {
			t.Fatal(err)
		}
		for i := 0; i <= e.MaxTurns(); i++ {
			// Ending by the step cap, or by whatever garbage ends.
			if mustStep(t, e, garbage()[0]).Over() {
				break
			}
		}
		check("after the end of an episode")
	}
}

// expertStep asks the expert of e for its action, checks that asking is deterministic and changes
// nothing, and steps e with it.
func (s *suite) expertStep(t *testing.T, e envs.Env, seed int64) (string, envs.Observation) {
	t.Helper()
	key, valid := e.StateKey(), validActions(e)
	before, other := e.(envs.Cloner).Clone(), e.(envs.Cloner).Clone()
	a := expertAction(t, e)
	if again, onClone := expertAction(t, e), expertAction(t, other); again != a || onClone != a {
		t.Fatalf("seed %d state %q: the expert says %q, then %q, and %q on a clone", seed, key, a, again, onClone)
	}
	if _, lists := e.(envs.ValidActioner); lists && !slices.Contains(valid, a) {
		t.Errorf("seed %d state %q: the expert's %q is not among ValidActions %q", seed, key, a, valid)
	}
	obs, ref := mustStep(t, e, a), mustStep(t, before, a)
	if !reflect.DeepEqual(obs, ref) || e.StateKey() != before.StateKey() {
		t.Fatalf("seed %d state %q: asking the expert changed the env: after Step(%q)\n%+v %q\nwithout asking\n%+v %q",
			seed, key, a, obs, e.StateKey(), ref, before.StateKey())
	}
	if obs.Info.Invalid {
		t.Errorf("seed %d state %q: the expert's %q is an invalid action", seed, key, a)
	}
	return a, obs
}

func (s *suite) expertSolves(t *testing.T) {
	e := s.mustNew(t)
	if _, ok := e.(envs.Cloner); !ok {
		t.Skip("not an envs.Cloner")
	}
	solved, steps, caps := 0, 0, 0
	for _, seed := range s.seeds {
		_, obs, err := e.Reset(seed)
		if err != nil {
			t.Fatalf("Reset(%d): %v", seed, err)
		}
		d0 := obs.Info.Distance
		var actions []string
		for !obs.Over() {
			var a string
			a, obs = s.expertStep(t, e, seed)
			actions = append(actions, a)
		}
		caps += e.MaxTurns()
		if obs.Info.Success {
			solved++
			steps += len(actions)
		}
		switch {
		case s.stochastic:
		case !obs.Info.Success:
			t.Errorf("seed %d: the expert fails within MaxTurns = %d: %q ends %+v", seed, e.MaxTurns(), actions, obs)
		case d0 >= 0 && len(actions) != d0:
			t.Errorf("seed %d: the expert takes %d steps %q; Info.Distance of the start is %d", seed, len(actions), actions, d0)
		}
	}
	n := len(s.seeds)
	t.Logf("the expert solves %d of %d tasks (%.3f), in %.2f steps on average; mean step cap %.2f",
		solved, n, float64(solved)/float64(n), float64(steps)/float64(max(solved, 1)), float64(caps)/float64(n))
}

func (s *suite) expertNoisy(t *testing.T) {
	e := s.mustNew(t)
	if _, ok := e.(envs.Cloner); !ok {
		t.Skip("not an envs.Cloner")
	}
	if _, ok := e.(envs.ValidActioner); !ok {
		t.Skip("not an envs.ValidActioner")
	}
	rng := rand.New(rand.NewPCG(8, 0x6e6f6973))
	states := 0
	for _, seed := range s.seeds {
		_, obs, err := e.Reset(seed)
		if err != nil {
			t.Fatalf("Reset(%d): %v", seed, err)
		}
		for !obs.Over() {
			states++
			valid := s.checkValidActions(t, e, seed)
			if rng.Float64() < noiseEpsilon {
				obs = mustStep(t, e, valid[rng.IntN(len(valid))])
				continue
			}
			d := obs.Info.Distance
			if !s.stochastic && d >= 1 {
				s.checkLookahead(t, e, seed, d)
			}
			var a string
			a, obs = s.expertStep(t, e, seed)
			if !s.stochastic && d >= 1 && !obs.Info.Success && obs.Info.Distance != d-1 {
				t.Errorf("seed %d: at distance %d the expert's %q reaches distance %d", seed, d, a, obs.Info.Distance)
			}
		}
	}
	t.Logf("expert and valid actions checked in %d states", states)
}

// checkLookahead checks that the generic lookahead expert (envs.LookaheadAction) is optimal too in
// the current state of e, of known distance d >= 1.
func (s *suite) checkLookahead(t *testing.T, e envs.Env, seed int64, d int) {
	t.Helper()
	a, err := envs.LookaheadAction(e)
	if err != nil {
		t.Fatalf("seed %d state %q: the lookahead expert: %v", seed, e.StateKey(), err)
	}
	if o := mustStep(t, e.(envs.Cloner).Clone(), a); !o.Info.Success && o.Info.Distance != d-1 {
		t.Errorf("seed %d state %q: at distance %d the lookahead expert's %q reaches distance %d", seed, e.StateKey(), d, a, o.Info.Distance)
	}
}

// checkValidActions checks ValidActions in the current state of e (see RunExpert) and returns it.
func (s *suite) checkValidActions(t *testing.T, e envs.Env, seed int64) []string {
	t.Helper()
	key := e.StateKey()
	valid := validActions(e)
	if len(valid) == 0 {
		t.Fatalf("seed %d state %q: no valid action in a running episode", seed, key)
	}
	step := func(a string) transition {
		c := e.(envs.Cloner).Clone()
		obs := mustStep(t, c, a)
		return transitionOf(turn{action: a, obs: obs, key: c.StateKey()})
	}
	reached := map[transition]bool{}
	for i, a := range valid {
		if slices.Contains(valid[:i], a) {
			t.Errorf("seed %d state %q: ValidActions lists %q twice: %q", seed, key, a, valid)
		}
		tr := step(a)
		if tr.invalid {
			t.Errorf("seed %d state %q: the listed %q is an invalid action", seed, key, a)
		}
		reached[tr] = true
	}
	for _, a := range s.actionSet {
		if tr := step(a); !tr.invalid && !reached[tr] {
			t.Errorf("seed %d state %q: %q is valid but no action of ValidActions %q does what it does", seed, key, a, valid)
		}
	}
	if e.StateKey() != key {
		t.Fatalf("seed %d: ValidActions changed the state key from %q to %q", seed, key, e.StateKey())
	}
	return valid
}

// Panel replaces the task seeds by a panel for RunExpert: the seeds 0..n-1 and the first n seeds of
// the eval panel of panel seed 0 (see envs.TaskSeeds).
func Panel(n int) Option {
	seeds := envs.TaskSeeds(envs.Train, n, 0)
	return Seeds(append(seeds, envs.TaskSeeds(envs.Eval, n, 0)...)...)
}

// RunWithExpert runs Run, then RunExpert in the subtest Expert on the panel Panel(200), with the
// same options: the whole suite of an environment that offers an expert.
func RunWithExpert(t *testing.T, newEnv func() (envs.Env, error), opts ...Option) {
	t.Helper()
	Run(t, newEnv, opts...)
	t.Run("Expert", func(t *testing.T) { RunExpert(t, newEnv, append(opts, Panel(200))...) })
}
