package grid

import (
	"errors"
	"reflect"
	"testing"

	"github.com/graftrl/graftrl/envs"
)

// TestEpisodeLoad checks which task seeds Load draws: a seed once, kept while it repeats, drawn
// again after another; never on a hand-built layout; and after a failed draw no episode runs and
// the same seed is drawn again.
func TestEpisodeLoad(t *testing.T) {
	var drawn []int64
	draw := func(task int64) error { drawn = append(drawn, task); return nil }
	var e Episode
	if e.HasLayout() || e.Running() {
		t.Fatal("a new episode has a layout or runs")
	}
	for _, task := range []int64{3, 3, 4, 3, 3} {
		if err := e.Load(task, draw); err != nil {
			t.Fatal(err)
		}
		e.Start(5)
	}
	if want := []int64{3, 4, 3}; !reflect.DeepEqual(drawn, want) || !e.HasLayout() || e.Task() != 3 {
		t.Errorf("drawn %v, has layout %v, task %d; want %v, true, 3", drawn, e.HasLayout(), e.Task(), want)
	}

	drawn = nil
	fixed := FixedEpisode()
	for _, task := range []int64{1, 2} {
		if err := fixed.Load(task, draw); err != nil {
			t.Fatal(err)
		}
	}
	if len(drawn) != 0 || !fixed.HasLayout() || fixed.Task() != 2 {
		t.Errorf("hand-built layout: drawn %v, has layout %v, task %d", drawn, fixed.HasLayout(), fixed.Task())
	}

	broken := errors.New("no layout")
	fail := func(task int64) error { drawn = append(drawn, task); return broken }
	if err := e.Load(5, fail); !errors.Is(err, broken) {
		t.Fatalf("failed draw: %v", err)
	}
	if e.HasLayout() || e.Running() || e.Started() {
		t.Error("after a failed draw the episode has a layout or runs")
	}
	drawn = nil
	if err := e.Load(3, draw); err != nil || !reflect.DeepEqual(drawn, []int64{3}) {
		t.Errorf("after a failed draw, seed 3 again: drawn %v, %v; want it drawn again", drawn, err)
	}
}

// TestEpisodeStep plays episodes of given observations under a step cap and checks each step's
// truncation and the refusal of a step after the end: a step that ends the episode on the last turn
// is a termination, an invalid action on the last turn is truncated.
func TestEpisodeStep(t *testing.T) {
	moved, invalid := Moved("m", 3), Invalid(-0.1, "invalid m", 3)
	goal, trap := Success(1, "g"), Failure("t")
	tests := []struct {
		name      string
		cap       int
		steps     []envs.Observation
		truncated []bool
	}{
		{"truncated on the cap", 2, []envs.Observation{moved, moved}, []bool{false, true}},
		{"invalid on the last turn", 1, []envs.Observation{invalid}, []bool{true}},
		{"goal on the last turn", 2, []envs.Observation{invalid, goal}, []bool{false, false}},
		{"trap before the cap", 5, []envs.Observation{moved, trap}, []bool{false, false}},
	}
	for _, tc := range tests {
		var e Episode
		if err := e.Load(0, func(int64) error { return nil }); err != nil {
			t.Fatal(err)
		}
		e.Start(tc.cap)
		for i, want := range tc.steps {
			got, err := e.Step("env", func() envs.Observation { return want })
			want.Truncated = tc.truncated[i]
			if err != nil || !reflect.DeepEqual(got, want) || e.Turn() != i+1 {
				t.Errorf("%s: step %d = %+v, %v at turn %d; want %+v at turn %d", tc.name, i, got, err, e.Turn(), want, i+1)
			}
		}
		if e.Running() || !e.Started() {
			t.Errorf("%s: running %v, started %v after the last step", tc.name, e.Running(), e.Started())
		}
		called := false
		if _, err := e.Step("env", func() envs.Observation { called = true; return moved }); err == nil ||
			err.Error() != "env: Step after the episode ended" || called {
			t.Errorf("%s: step after the end: %v (move called %v)", tc.name, err, called)
		}
		e.Start(tc.cap)
		if _, err := e.Step("env", func() envs.Observation { return moved }); err != nil || e.Turn() != 1 {
			t.Errorf("%s: step after a new start: %v at turn %d", tc.name, err, e.Turn())
		}
	}
	var e Episode
	if _, err := e.Step("maze", func() envs.Observation { return moved }); err == nil || err.Error() != "maze: Step before Reset" {
		t.Errorf("step before Reset: %v", err)
	}
}

// TestObservations checks the observations of the outcomes of a step.
func TestObservations(t *testing.T) {
	for _, tc := range []struct {
		got, want envs.Observation
	}{
		{Invalid(-0.5, "invalid r0 c0", 4), envs.Observation{Text: "invalid r0 c0", Reward: -0.5, Info: envs.Info{Invalid: true, Distance: 4}}},
		{Moved("r1 c0", 3), envs.Observation{Text: "r1 c0", Info: envs.Info{Distance: 3}}},
		{Success(2, "r4 c4 goal"), envs.Observation{Text: "r4 c4 goal", Outcome: 2, Done: true, Info: envs.Info{Success: true}}},
		{Failure("r1 c1 trap"), envs.Observation{Text: "r1 c1 trap", Done: true, Info: envs.Info{Distance: envs.DistDead}}},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("got %+v, want %+v", tc.got, tc.want)
		}
	}
}

// TestTaskCap checks the step caps of turn_cap_factor against values worked out by hand.
func TestTaskCap(t *testing.T) {
	for _, tc := range []struct {
		maxTurns int
		f        float64
		d        int
		longest  int
		task     int // TaskCap
		max      int // MaxCap
	}{
		{12, 0, 5, 8, 12, 12},             // off: max_turns
		{12, 1.5, 5, 8, 8, 12},            // ⌈7.5⌉ = 8, longest ⌈12⌉
		{12, 1.5, 8, 9, 12, 14},           // ⌈12⌉ = 12, longest ⌈13.5⌉ = 14
		{24, 1.1, 10, 20, 11, 22},         // ⌈11.000000000000002⌉ is 11, not 12
		{12, 2, 0, 8, 12, 16},             // a task solved at the start keeps max_turns
		{12, 2, envs.DistDead, 8, 12, 16}, // so does one whose goal is out of reach
		{30, 3, 9, 8, 24, 24},             // a hand-built task longer than the longest: MaxCap
		{100, 3, 32, 32, 96, 96},          // keydoor's longest task at size 11
		{100, 5, 20, 20, 100, 100},        // maze's largest factor at size 11
		{14, 1, 4, 8, 4, 8},               // factor 1: the optimal length itself
		{14, 1.25, 3, 8, 4, 10},           // ⌈3.75⌉ = 4, ⌈10⌉ = 10
		{18, 3, 14, 14, 42, 42},           // keydoor at size 5: ⌈3 × 14⌉
		{16, 1.5, 11, 12, 17, 18},         // ⌈16.5⌉ = 17
		{16, 1.5, -1, 12, 16, 18},         // DistUnknown keeps max_turns
		{16, 1.01, 100, 100, 101, 101},    // ⌈101⌉, no rounding up past it
	} {
		if got := TaskCap(tc.maxTurns, tc.f, tc.d, tc.longest); got != tc.task {
			t.Errorf("TaskCap(%d, %g, %d, %d) = %d, want %d", tc.maxTurns, tc.f, tc.d, tc.longest, got, tc.task)
		}
		if got := MaxCap(tc.maxTurns, tc.f, tc.longest); got != tc.max {
			t.Errorf("MaxCap(%d, %g, %d) = %d, want %d", tc.maxTurns, tc.f, tc.longest, got, tc.max)
		}
	}
}
