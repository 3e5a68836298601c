package advantage_test

import (
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
		{"grpo", map[string]any{"epsilon": 1}, `estimator grpo: unknown option "epsilon" (allowed: eps, score, std)`},
		{"gigpo", map[string]any{"gamma": "high"}, `estimator gigpo: option "gamma": high has the wrong type (allowed numbers)`},
		{"drgrpo", map[string]any{"eps": 0}, `estimator.drgrpo: option eps = 0: must be a finite number > 0`},
		{"graft", map[string]any{"gamma": 1}, `estimator.graft: option gamma = 1: must be in (0, 1)`},
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
		if want := "(allowed: " + strings.Join(keys, ", ") + ")"; err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%s: unknown option error %v, want one ending %s", name, err, want)
		}
	}
}
