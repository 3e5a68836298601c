package advantage_test

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/advantage"
	_ "github.com/graftrl/graftrl/advantage/all"
	"github.com/graftrl/graftrl/rollout"
)

// registryBatch is two tasks of three rollouts that share states: successes of different lengths,
// a failure and a truncated episode, so that every estimator has groups, merges and a sink.
func registryBatch() *rollout.Batch {
	st := func(keys ...string) []rollout.Step {
		var s []rollout.Step
		for i := 0; i+1 < len(keys); i++ {
			s = append(s, rollout.Step{Key: keys[i], NextKey: keys[i+1], Distance: len(keys) - 2 - i})
		}
		return s
	}
	return &rollout.Batch{Tasks: 2, Trajs: []rollout.Trajectory{
		{Task: 0, Outcome: 1, Success: true, Steps: st("S", "A", "G")},
		{Task: 0, Outcome: 1, Success: true, Steps: st("S", "B", "A", "G")},
		{Task: 0, Outcome: 0, Steps: st("S", "B", "T")},
		{Task: 1, Outcome: 1, Success: true, Steps: st("s", "a", "g")},
		{Task: 1, Outcome: 0, Truncated: true, Steps: st("s", "b", "b", "b")},
		{Task: 1, Outcome: 0, Steps: st("s", "b", "t")},
	}}
}

// Every registered estimator has a description, builds from its defaults, and gives one finite
// advantage per step of a batch — the same ones on a second call — with the advantage summary
// among its diagnostics. A newly registered estimator is covered by this test without a change.
func TestEveryEstimatorConforms(t *testing.T) {
	for _, name := range advantage.Names() {
		t.Run(name, func(t *testing.T) {
			if advantage.Help(name) == "" {
				t.Error("no description")
			}
			est, err := advantage.New(name, nil)
			if err != nil {
				t.Fatal(err)
			}
			b := registryBatch()
			adv, d := est.Estimate(b)
			if len(adv) != len(b.Trajs) {
				t.Fatalf("%d advantage rows for %d trajectories", len(adv), len(b.Trajs))
			}
			nonzero := false
			for i := range b.Trajs {
				if len(adv[i]) != len(b.Trajs[i].Steps) {
					t.Fatalf("trajectory %d: %d advantages for %d steps", i, len(adv[i]), len(b.Trajs[i].Steps))
				}
				for j, a := range adv[i] {
					if math.IsNaN(a) || math.IsInf(a, 0) {
						t.Fatalf("advantage [%d][%d] = %g", i, j, a)
					}
					nonzero = nonzero || a != 0
				}
			}
			if !nonzero {
				t.Error("every advantage is 0 on a batch with successes and failures")
			}
			for _, k := range []string{"adv_mean", "adv_std", "adv_zero_share"} {
				if _, ok := d[k]; !ok {
					t.Errorf("diagnostic %s missing", k)
				}
			}
			again, _ := est.Estimate(registryBatch())
			if !reflect.DeepEqual(adv, again) {
				t.Error("a second call on the same batch gives other advantages")
			}
		})
	}
}

// Check refuses what New refuses, with the same message, and accepts what New builds; Options
// lists every key the decoder allows, each with its default.
func TestCheckAgreesWithNew(t *testing.T) {
	cases := []struct {
		name string
		opts map[string]any
		want string
	}{
		{"ppo", nil, `estimator.name: unknown estimator "ppo" (allowed: drgrpo, gigpo, graft, graphgpo, grpo)`},
		{"grpo", map[string]any{"epsilon": 1}, `unknown key "estimator.epsilon" (allowed under estimator: eps, score, std)`},
		{"gigpo", map[string]any{"gamma": "high"}, `key "estimator.gamma": value "high" has the wrong type (allowed numbers)`},
		{"drgrpo", map[string]any{"eps": 0}, `key "estimator.eps": value 0 is out of range (allowed finite numbers > 0)`},
		{"graft", map[string]any{"gamma": 1}, `key "estimator.gamma": value 1 is out of range (allowed (0, 1))`},
		{"graphgpo", map[string]any{"gamma_g": 0.5, "step_weight": 2}, ""},
	}
	for _, c := range cases {
		_, nerr := advantage.New(c.name, c.opts)
		cerr := advantage.Check(c.name, c.opts)
		got := ""
		if cerr != nil {
			got = cerr.Error()
		}
		if got != c.want || fmt.Sprint(cerr) != fmt.Sprint(nerr) {
			t.Errorf("%s %v: Check %v, New %v; want %q", c.name, c.opts, cerr, nerr, c.want)
		}
	}
	for _, name := range advantage.Names() {
		opts := advantage.Options(name)
		if len(opts) == 0 {
			t.Fatalf("%s: no options listed", name)
		}
		var keys []string
		for _, o := range opts {
			if o.Default == "" {
				t.Errorf("%s: option %s without a default", name, o.Key)
			}
			keys = append(keys, o.Key)
		}
		slices.Sort(keys)
		err := advantage.Check(name, map[string]any{"zz_unknown": 1})
		if want := "(allowed under estimator: " + strings.Join(keys, ", ") + ")"; err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%s: unknown option error %v, want one ending %s", name, err, want)
		}
	}
}

// An estimator's options are refused in one form, the strict decoder's: the key's path as a
// config has it (estimator.KEY), the value as given and what is allowed, whether the key is
// unknown, its value of the wrong type or out of range; the error is an *OptionError naming that
// path.
func TestOptionErrors(t *testing.T) {
	cases := []struct {
		name string
		opts map[string]any
		key  string
		want string
	}{
		{"grpo", map[string]any{"epz": 1e-6}, "estimator.epz",
			`unknown key "estimator.epz" (allowed under estimator: eps, score, std)`},
		{"grpo", map[string]any{"eps": "small"}, "estimator.eps",
			`key "estimator.eps": value "small" has the wrong type (allowed numbers)`},
		{"grpo", map[string]any{"eps": -0.5}, "estimator.eps",
			`key "estimator.eps": value -0.5 is out of range (allowed finite numbers > 0)`},
		{"grpo", map[string]any{"std": "unbiased"}, "estimator.std",
			`key "estimator.std": value "unbiased" is not allowed (allowed sample, population)`},
		{"graft", map[string]any{"lamda": 0.9}, "estimator.lamda",
			`unknown key "estimator.lamda" (allowed under estimator: episode_norm, episode_std, episode_weight, eps, gamma, lambda, mode, normalize, policy_weighting, score, tol, truncation, use_step_rewards)`},
		{"gigpo", map[string]any{"std": "unbiased"}, "estimator.std",
			`key "estimator.std": value "unbiased" is not allowed (allowed sample, population)`},
		{"graphgpo", map[string]any{"std": "N-1"}, "estimator.std",
			`key "estimator.std": value "N-1" is not allowed (allowed sample, population)`},
		{"graft", map[string]any{"episode_std": "bessel"}, "estimator.episode_std",
			`key "estimator.episode_std": value "bessel" is not allowed (allowed sample, population)`},
		{"graft", map[string]any{"std": "sample"}, "estimator.std",
			`unknown key "estimator.std" (allowed under estimator: episode_norm, episode_std, episode_weight, eps, gamma, lambda, mode, normalize, policy_weighting, score, tol, truncation, use_step_rewards)`},
		{"graft", map[string]any{"normalize": "yes please"}, "estimator.normalize",
			`key "estimator.normalize": value "yes please" has the wrong type (allowed true, false)`},
		{"graft", map[string]any{"lambda": 1.5}, "estimator.lambda",
			`key "estimator.lambda": value 1.5 is out of range (allowed [0, 1])`},
		{"graft", map[string]any{"mode": "gae"}, "estimator.mode",
			`key "estimator.mode": value "gae" is not allowed (allowed path, td, paper)`},
	}
	for _, c := range cases {
		for _, err := range []error{advantage.Check(c.name, c.opts), func() error { _, err := advantage.New(c.name, c.opts); return err }()} {
			var oe *advantage.OptionError
			if !errors.As(err, &oe) || oe.Key != c.key || err.Error() != c.want {
				t.Errorf("%s %v: error %v, want an *OptionError for %s: %s", c.name, c.opts, err, c.key, c.want)
			}
		}
	}
}
