package envtest

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
)

// The helpers below serve the environments' own unit tests, next to the conformance suite: resetting
// and stepping with the error turned into a test failure, a table of expected steps, and tables of
// option errors.

// MustReset resets e to the task seed and fails the test on an error.
func MustReset(t testing.TB, e envs.Env, seed int64) (string, envs.Observation) {
	t.Helper()
	ins, obs, err := e.Reset(seed)
	if err != nil {
		t.Fatal(err)
	}
	return ins, obs
}

// MustStep applies the action to e and fails the test on an error.
func MustStep(t testing.TB, e envs.Env, action string) envs.Observation {
	t.Helper()
	obs, err := e.Step(action)
	if err != nil {
		t.Fatalf("Step(%q): %v", action, err)
	}
	return obs
}

// Step is one row of a table of expected steps: the action, then the observation and the state key it
// must give. Fields left out are zero: no reward, not over, Info.Distance 0.
type Step struct {
	Action  string
	Text    string
	Key     string
	Reward  float64
	Outcome float64
	Invalid bool
	Done    bool
	Success bool
	Trunc   bool
	Dist    int
}

// CheckSteps applies the actions of steps to e in order and reports every observation and state key
// that differs from the row (Info.Extra must be empty).
func CheckSteps(t testing.TB, e envs.Env, steps []Step) {
	t.Helper()
	for i, s := range steps {
		got := MustStep(t, e, s.Action)
		want := envs.Observation{Text: s.Text, Reward: s.Reward, Outcome: s.Outcome, Done: s.Done,
			Truncated: s.Trunc, Info: envs.Info{Success: s.Success, Invalid: s.Invalid, Distance: s.Dist}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("step %d %q:\n got %+v\nwant %+v", i, s.Action, got, want)
		}
		if k := e.StateKey(); k != s.Key {
			t.Errorf("step %d %q: StateKey = %q, want %q", i, s.Action, k, s.Key)
		}
	}
}

// OptionCase is a set of options that must be refused, with a part of the error message.
type OptionCase struct {
	Opts envs.Options
	Want string
}

// CheckOptionErrors checks that parse refuses the options of every case with an *envs.OptionError of
// env whose message contains the case's Want.
func CheckOptionErrors[C any](t testing.TB, env string, parse func(envs.Options) (C, error), cases []OptionCase) {
	t.Helper()
	for _, tc := range cases {
		_, err := parse(tc.Opts)
		if err == nil || !strings.Contains(err.Error(), tc.Want) {
			t.Errorf("%v: error %v, want it to contain %s", tc.Opts, err, tc.Want)
			continue
		}
		var oe *envs.OptionError
		if !errors.As(err, &oe) || oe.Env != env {
			t.Errorf("%v: error %v is not an *envs.OptionError of %s", tc.Opts, err, env)
		}
	}
}

// ConfigCase is a set of options and the configuration parse must make of them.
type ConfigCase[C comparable] struct {
	Name string
	Opts envs.Options
	Want C
}

// CheckConfigs checks that parse accepts the options of every case and returns its configuration.
func CheckConfigs[C comparable](t testing.TB, parse func(envs.Options) (C, error), cases []ConfigCase[C]) {
	t.Helper()
	for _, tc := range cases {
		got, err := parse(tc.Opts)
		if err != nil || got != tc.Want {
			t.Errorf("%s: got %+v, %v; want %+v", tc.Name, got, err, tc.Want)
		}
	}
}

// CheckTurnCaps checks an env's turn_cap_factor (a step cap per task): for each factor f in 1,
// 1.5 and 3 and each grid side, the registry makes env from the options size and turn_cap_factor;
// MaxTurns must be ⌈f × longest(side)⌉, and on 20 task seeds the optimal length d that Reset
// reports must lie in shortest(side)..longest(side), envs.TurnCapOf must be ⌈f·d⌉, and an episode
// of unparsable actions must be truncated on exactly that turn.
func CheckTurnCaps(t *testing.T, env string, sides []int, shortest, longest func(side int) int) {
	t.Helper()
	ceil := func(f float64, d int) int { return int(math.Ceil(f*float64(d) - 1e-9)) }
	for _, f := range []float64{1, 1.5, 3} {
		for _, side := range sides {
			e, err := envs.New(env, envs.Options{"size": side, "turn_cap_factor": f})
			if err != nil {
				t.Fatal(err)
			}
			if bound := ceil(f, longest(side)); e.MaxTurns() != bound {
				t.Errorf("f %g side %d: MaxTurns %d, want ⌈%g×%d⌉ = %d", f, side, e.MaxTurns(), f, longest(side), bound)
			}
			for seed := int64(0); seed < 20; seed++ {
				_, obs := MustReset(t, e, seed)
				d := obs.Info.Distance
				if d < shortest(side) || d > longest(side) {
					t.Fatalf("f %g side %d seed %d: optimal length %d outside %d..%d", f, side, seed, d, shortest(side), longest(side))
				}
				want := ceil(f, d)
				if got := envs.TurnCapOf(e); got != want {
					t.Errorf("f %g side %d seed %d: TurnCapOf %d, want ⌈%g×%d⌉ = %d", f, side, seed, got, f, d, want)
				}
				turns := 0
				for !obs.Over() {
					obs = MustStep(t, e, "x")
					turns++
				}
				if !obs.Truncated || turns != want {
					t.Errorf("f %g side %d seed %d: truncated %v after %d turns, want after %d", f, side, seed, obs.Truncated, turns, want)
				}
			}
		}
	}
}

// Renderer is an env that draws its current layout as text (maze, keydoor, …).
type Renderer interface {
	envs.Env
	Render() string
}

// CheckLayoutSeeds checks that a task seed fixes the layout and the episode: two instances
// from newEnv draw the same layout for each of seeds 0..n-1 and play the same episode of the
// cycled actions, and the n seeds give at least minDistinct distinct layouts.
func CheckLayoutSeeds(t *testing.T, newEnv func() Renderer, n int64, minDistinct int, actions []string) {
	t.Helper()
	a, b := newEnv(), newEnv()
	seen := map[string]bool{}
	for seed := range n {
		insA, obsA := MustReset(t, a, seed)
		insB, obsB := MustReset(t, b, seed)
		if a.Render() != b.Render() || insA != insB || !reflect.DeepEqual(obsA, obsB) {
			t.Fatalf("seed %d: two instances differ:\n%s\n%s", seed, a.Render(), b.Render())
		}
		seen[a.Render()] = true
		for i := 0; !obsA.Over(); i++ {
			act := actions[(int(seed)+i)%len(actions)]
			obsA, obsB = MustStep(t, a, act), MustStep(t, b, act)
			if !reflect.DeepEqual(obsA, obsB) || a.StateKey() != b.StateKey() {
				t.Fatalf("seed %d step %d: %+v %q vs %+v %q", seed, i, obsA, a.StateKey(), obsB, b.StateKey())
			}
		}
	}
	if len(seen) < minDistinct {
		t.Errorf("%d seeds gave %d distinct layouts, want at least %d", n, len(seen), minDistinct)
	}
}
