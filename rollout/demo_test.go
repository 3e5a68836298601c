package rollout

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
)

// A demonstration is laid out token for token as the sampled episode that takes the same actions:
// same rows, same trained positions, same steps, in both layouts and with and without the
// end-of-action token; its action tokens carry log-prob 0.
func TestDemonstrateMatchesSampling(t *testing.T) {
	for _, cfg := range []Config{
		{Layout: LayoutEpisode, MaxLen: 64, ActionMaxTokens: 2},
		{Layout: LayoutEpisode, MaxLen: 64, ActionMaxTokens: 1},
		{Layout: LayoutWindow, WindowTurns: 1, MaxLen: 64, ActionMaxTokens: 3},
		{Layout: LayoutEpisode, MaxLen: 14, ActionMaxTokens: 2}, // truncated by the context
	} {
		c, _, dec := setup(t, cfg, 2, func() *countEnv { return &countEnv{max: 5} })
		dec.noopRows[1] = true // the second episode of each wave wastes its turns
		req := Request{Tasks: []int64{3, 4}, Group: 1}
		sampled, _, err := c.Collect(dec, req, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		// The teacher replays what the decoder chose: "inc" in episode 0, "noop" up to the cap in
		// episode 1.
		episode := -1
		teacher := func(envs.Env, *rand.Rand) (string, bool, error) {
			if episode == 1 {
				return strings.TrimSpace(strings.Repeat("noop ", cfg.ActionMaxTokens)), true, nil
			}
			return "inc", true, nil
		}
		demoC, _, _ := setup(t, cfg, 1, func() *countEnv { return &countEnv{max: 5} })
		var demo Batch
		for i, seed := range req.Tasks {
			episode = i
			b, st, err := demoC.Demonstrate(teacher, Request{Tasks: []int64{seed}, Group: 1}, rand.New(rand.NewPCG(1, 1)))
			if err != nil {
				t.Fatal(err)
			}
			if st.Episodes != 1 {
				t.Fatalf("stats %+v", st)
			}
			b.Trajs[0].Task = i
			demo.Trajs = append(demo.Trajs, b.Trajs[0])
		}
		for i := range sampled.Trajs {
			s, d := sampled.Trajs[i], demo.Trajs[i]
			if !reflect.DeepEqual(s.Steps, d.Steps) || s.Success != d.Success || s.Truncated != d.Truncated || s.Outcome != d.Outcome {
				t.Fatalf("%+v episode %d: demonstration %+v, sampled %+v", cfg, i, d, s)
			}
			if len(s.Rows) != len(d.Rows) {
				t.Fatalf("%+v episode %d: %d rows, sampled %d", cfg, i, len(d.Rows), len(s.Rows))
			}
			for r := range s.Rows {
				if !reflect.DeepEqual(s.Rows[r].Tokens, d.Rows[r].Tokens) || !reflect.DeepEqual(s.Rows[r].StepOf, d.Rows[r].StepOf) {
					t.Fatalf("%+v episode %d row %d: demonstration %v %v, sampled %v %v", cfg, i, r,
						d.Rows[r].Tokens, d.Rows[r].StepOf, s.Rows[r].Tokens, s.Rows[r].StepOf)
				}
				for _, lp := range d.Rows[r].LogProb {
					if lp != 0 {
						t.Fatalf("a demonstration token has log-prob %g", lp)
					}
				}
			}
		}
	}
}

// Actions the policy could not produce are refused with an error naming the action; a failing or
// panicking teacher ends only its episode.
func TestDemonstrateErrors(t *testing.T) {
	cfg := Config{Layout: LayoutEpisode, MaxLen: 64, ActionMaxTokens: 1}
	for _, tc := range []struct{ action, want string }{
		{"inc inc", "more than rollout.action_max_tokens = 1"},
		{"jump", "outside the environment's vocabulary"},
		{"  ", "has no words"},
	} {
		c, _, _ := setup(t, cfg, 1, func() *countEnv { return &countEnv{max: 5} })
		_, _, err := c.Demonstrate(func(envs.Env, *rand.Rand) (string, bool, error) { return tc.action, true, nil },
			Request{Tasks: []int64{1}, Group: 1}, rand.New(rand.NewPCG(1, 1)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("action %q: error %v, want %q", tc.action, err, tc.want)
		}
	}
	c, _, _ := setup(t, cfg, 1, func() *countEnv { return &countEnv{max: 5} })
	calls := 0
	teacher := func(envs.Env, *rand.Rand) (string, bool, error) {
		calls++
		switch calls {
		case 2:
			return "", false, errors.New("no idea")
		case 4:
			panic("lost")
		}
		return "inc", true, nil
	}
	b, _, err := c.Demonstrate(teacher, Request{Tasks: []int64{1, 2, 3}, Group: 1}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if e := b.Trajs[0].Err; !strings.Contains(e, "no idea") || len(b.Trajs[0].Steps) != 1 {
		t.Errorf("episode 0: err %q after %d steps", e, len(b.Trajs[0].Steps))
	}
	if e := b.Trajs[1].Err; !strings.Contains(e, "lost") {
		t.Errorf("episode 1: err %q", e)
	}
	if tr := b.Trajs[2]; tr.Err != "" || !tr.Success || len(tr.Steps) != 3 {
		t.Errorf("episode 2 after the faults: %+v", tr)
	}
}

// Actions the teacher does not want learnt stay in the context but train nothing: the episode's
// tokens are those of the all-learnt demonstration, and only the learnt steps carry step indices.
func TestDemonstrateUntrainedSteps(t *testing.T) {
	cfg := Config{Layout: LayoutEpisode, MaxLen: 64, ActionMaxTokens: 2}
	run := func(noise map[int]bool) Row {
		c, _, _ := setup(t, cfg, 1, func() *countEnv { return &countEnv{max: 8} })
		step := 0
		teacher := func(envs.Env, *rand.Rand) (string, bool, error) {
			step++
			if noise[step] {
				return "noop", false, nil
			}
			return "inc", true, nil
		}
		b, _, err := c.Demonstrate(teacher, Request{Tasks: []int64{1}, Group: 1}, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Trajs[0].Rows) != 1 || !b.Trajs[0].Success {
			t.Fatalf("trajectory %+v", b.Trajs[0])
		}
		return b.Trajs[0].Rows[0]
	}
	row := run(map[int]bool{2: true})
	// <bos> count <sep> | n0 <act> inc <eoa> | n1 <act> noop <eoa> | n1 <act> inc <eoa> | n2 <act> inc <eoa>
	want := []int16{-1, -1, -1, -1, -1, 0, 0, -1, -1, -1, -1, -1, -1, 2, 2, -1, -1, 3, 3}
	if !reflect.DeepEqual(row.StepOf, want) {
		t.Fatalf("step_of %v, want %v", row.StepOf, want)
	}
}
