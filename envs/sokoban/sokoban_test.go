package sokoban

import (
	"reflect"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/grid"
)

// corridor is a 5x5 room whose distances are easy to check by hand: the box lies between the player
// and the target on row 1, so pushing right solves it; pushing it left puts it in a corner.
var corridor = []string{
	"#####",
	"#@$.#",
	"#   #",
	"#   #",
	"#####",
}

// pair is a 6x6 room with two boxes side by side above their two targets: the optimal solution is
// down (push the left box onto its target), up, right, down (push the right one) = 4 moves.
var pair = []string{
	"######",
	"#  @ #",
	"#  $$#",
	"#  ..#",
	"#    #",
	"######",
}

// jam has two boxes in a row next to the player, so pushing right pushes a box against a box.
var jam = []string{
	"######",
	"#@$$.#",
	"#   .#",
	"#    #",
	"#    #",
	"######",
}

func mustRoom(t testing.TB, rows []string, cfg Config) *Sokoban {
	t.Helper()
	s, err := newFromRoom(rows, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustReset(t testing.TB, s *Sokoban, seed int64) (string, envs.Observation) {
	t.Helper()
	ins, obs, err := s.Reset(seed)
	if err != nil {
		t.Fatal(err)
	}
	return ins, obs
}

func mustStep(t testing.TB, s *Sokoban, action string) envs.Observation {
	t.Helper()
	obs, err := s.Step(action)
	if err != nil {
		t.Fatalf("Step(%q): %v", action, err)
	}
	return obs
}

func TestResetOnRoom(t *testing.T) {
	s := mustRoom(t, pair, DefaultConfig(6, 2))
	ins, obs := mustReset(t, s, 0)
	if want := "target r3 c3 target r3 c4"; ins != want {
		t.Errorf("instruction = %q, want %q", ins, want)
	}
	if want := "r1 c3 wall box open open r2 c3 r2 c4"; obs.Text != want || obs.Info.Distance != 4 || obs.Over() {
		t.Errorf("first observation = %+v, want %q at distance 4", obs, want)
	}
	if k := s.StateKey(); k != "r1c3 r2c3 r2c4" {
		t.Errorf("StateKey = %q, want r1c3 r2c3 r2c4", k)
	}
	w := mustRoom(t, []string{"######", "#@ # #", "#$   #", "#.#  #", "#    #", "######"}, DefaultConfig(6, 1))
	if ins, _ := mustReset(t, w, 0); ins != "target r3 c1 wall r1 c3 wall r3 c2" {
		t.Errorf("instruction with walls = %q", ins)
	}
}

// TestStepDynamics plays action sequences on hand-built rooms and checks every observation.
func TestStepDynamics(t *testing.T) {
	type step struct {
		action  string
		text    string
		key     string
		reward  float64
		outcome float64
		invalid bool
		done    bool
		success bool
		trunc   bool
		dist    int
	}
	tests := []struct {
		name  string
		room  []string
		turns int
		steps []step
	}{
		{"push onto the target", corridor, 14, []step{
			{action: "right", text: "r1 c2 solved", key: "r1c2 r1c3", outcome: 1, done: true, success: true, dist: 0},
		}},
		{"walls and a push into a wall are invalid", corridor, 14, []step{
			{action: "left", text: "invalid r1 c1 wall open wall box r1 c2", key: "r1c1 r1c2", reward: -0.1, invalid: true, dist: 1},
			{action: "up", text: "invalid r1 c1 wall open wall box r1 c2", key: "r1c1 r1c2", reward: -0.1, invalid: true, dist: 1},
			{action: "down", text: "r2 c1 open open wall open r1 c2", key: "r2c1 r1c2", dist: 2},
			{action: "right", text: "r2 c2 box open open open r1 c2", key: "r2c2 r1c2", dist: 3},
			{action: "up", text: "invalid r2 c2 box open open open r1 c2", key: "r2c2 r1c2", reward: -0.1, invalid: true, dist: 3},
			{action: "right", text: "r2 c3 open open open wall r1 c2", key: "r2c3 r1c2", dist: 4},
			{action: "up", text: "r1 c3 wall open box wall r1 c2", key: "r1c3 r1c2", dist: 5},
		}},
		{"a box in a corner is a dead end", corridor, 14, []step{
			{action: "down", text: "r2 c1 open open wall open r1 c2", key: "r2c1 r1c2", dist: 2},
			{action: "right", text: "r2 c2 box open open open r1 c2", key: "r2c2 r1c2", dist: 3},
			{action: "right", text: "r2 c3 open open open wall r1 c2", key: "r2c3 r1c2", dist: 4},
			{action: "up", text: "r1 c3 wall open box wall r1 c2", key: "r1c3 r1c2", dist: 5},
			{action: "left", text: "r1 c2 wall open box open r1 c1", key: "r1c2 r1c1", dist: envs.DistDead},
			{action: "right", text: "r1 c3 wall open open wall r1 c1", key: "r1c3 r1c1", dist: envs.DistDead},
			{action: "left", text: "r1 c2 wall open box open r1 c1", key: "r1c2 r1c1", dist: envs.DistDead},
			{action: "left", text: "invalid r1 c2 wall open box open r1 c1", key: "r1c2 r1c1", reward: -0.1, invalid: true, dist: envs.DistDead},
		}},
		{"two boxes: the pushed box passes the other in the key", pair, 18, []step{
			{action: "down", text: "r2 c3 open box open box r2 c4 r3 c3", key: "r2c3 r2c4 r3c3", dist: 3},
			{action: "up", text: "r1 c3 wall open open open r2 c4 r3 c3", key: "r1c3 r2c4 r3c3", dist: 2},
			{action: "right", text: "r1 c4 wall box open wall r2 c4 r3 c3", key: "r1c4 r2c4 r3c3", dist: 1},
			{action: "down", text: "r2 c4 solved", key: "r2c4 r3c3 r3c4", outcome: 1, done: true, success: true, dist: 0},
		}},
		{"two boxes: a box cannot push a box", jam, 18, []step{
			{action: "right", text: "invalid r1 c1 wall open wall box r1 c2 r1 c3", key: "r1c1 r1c2 r1c3", reward: -0.1, invalid: true, dist: envs.DistDead},
		}},
		{"truncated after max turns", corridor, 3, []step{
			{action: "down", text: "r2 c1 open open wall open r1 c2", key: "r2c1 r1c2", dist: 2},
			{action: "up", text: "r1 c1 wall open wall box r1 c2", key: "r1c1 r1c2", dist: 1},
			{action: "up", text: "invalid r1 c1 wall open wall box r1 c2", key: "r1c1 r1c2", reward: -0.1, invalid: true, trunc: true, dist: 1},
		}},
		{"solved on the last turn is a success, not a truncation", corridor, 3, []step{
			{action: "down", text: "r2 c1 open open wall open r1 c2", key: "r2c1 r1c2", dist: 2},
			{action: "up", text: "r1 c1 wall open wall box r1 c2", key: "r1c1 r1c2", dist: 1},
			{action: "RIGHT ", text: "r1 c2 solved", key: "r1c2 r1c3", outcome: 1, done: true, success: true, dist: 0},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig(6, 1)
			cfg.MaxTurns = tc.turns
			s := mustRoom(t, tc.room, cfg)
			mustReset(t, s, 0)
			for i, st := range tc.steps {
				got := mustStep(t, s, st.action)
				want := envs.Observation{Text: st.text, Reward: st.reward, Outcome: st.outcome, Done: st.done,
					Truncated: st.trunc, Info: envs.Info{Success: st.success, Invalid: st.invalid, Distance: st.dist}}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("step %d %q:\n got %+v\nwant %+v", i, st.action, got, want)
				}
				if k := s.StateKey(); k != st.key {
					t.Errorf("step %d %q: StateKey = %q, want %q", i, st.action, k, st.key)
				}
			}
		})
	}
}

// TestDeadlocks checks the solver's verdict on rooms that are dead from the start: a box in a corner,
// a box against a wall that holds no target, two boxes frozen against each other by a wall.
func TestDeadlocks(t *testing.T) {
	for _, tc := range []struct {
		name string
		room []string
		dead bool
	}{
		{"box in a corner", []string{"#####", "#$  #", "# @ #", "#  .#", "#####"}, true},
		{"box on a wall without target", []string{"######", "#  $ #", "# @  #", "#    #", "#  . #", "######"}, true},
		{"box on a wall with a target", []string{"######", "#. $ #", "# @  #", "#    #", "#    #", "######"}, false},
		{"two boxes frozen along a wall", []string{"######", "#@   #", "#    #", "#.. $#", "#   $#", "######"}, true},
		{"player walled off", []string{"######", "#@#  #", "##   #", "# $  #", "#  . #", "######"}, true},
	} {
		s := mustRoom(t, tc.room, DefaultConfig(6, 1))
		_, obs := mustReset(t, s, 0)
		if got := obs.Info.Distance == envs.DistDead; got != tc.dead {
			t.Errorf("%s: Distance %d, want dead = %v\n%s", tc.name, obs.Info.Distance, tc.dead, s.Render())
		}
	}
}

func TestRender(t *testing.T) {
	s := mustRoom(t, pair, DefaultConfig(6, 2))
	mustReset(t, s, 0)
	mustStep(t, s, "down")
	want := "   0 1 2 3 4 5\n" +
		"r0 # # # # # #\n" +
		"r1 # - - - - #\n" +
		"r2 # - - @ $ #\n" +
		"r3 # - - * . #\n" +
		"r4 # - - - - #\n" +
		"r5 # # # # # #\n"
	if got := s.Render(); got != want {
		t.Errorf("Render =\n%s\nwant\n%s", got, want)
	}
	g, err := New(DefaultConfig(6, 1))
	if err != nil {
		t.Fatal(err)
	}
	if r := g.Render(); r != "" {
		t.Errorf("Render before Reset = %q, want empty", r)
	}
}

func TestStepAfterEndAndBeforeReset(t *testing.T) {
	s, err := New(DefaultConfig(6, 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Step("up"); err == nil {
		t.Error("Step before Reset: no error")
	}
	c := mustRoom(t, corridor, DefaultConfig(6, 1))
	mustReset(t, c, 0)
	if obs := mustStep(t, c, "right"); !obs.Info.Success {
		t.Fatal("not solved")
	}
	if _, err := c.Step("left"); err == nil {
		t.Error("Step after the episode ended: no error")
	}
	mustReset(t, c, 5)
	if c.StateKey() != "r1c1 r1c2" {
		t.Errorf("after a new Reset: key %q", c.StateKey())
	}
}

// TestStateKeyIgnoresHistory reaches one state along paths with detours, cycles and invalid actions.
func TestStateKeyIgnoresHistory(t *testing.T) {
	paths := [][]string{
		{"down", "right"},
		{"down", "down", "right", "up"},
		{"down", "right", "left", "right", "jump", "up"},
		{"down", "down", "right", "right", "left", "up", "up"},
	}
	var key, text string
	for i, p := range paths {
		s := mustRoom(t, corridor, DefaultConfig(6, 1))
		mustReset(t, s, 0)
		var obs envs.Observation
		for _, a := range p {
			obs = mustStep(t, s, a)
		}
		got := strings.TrimPrefix(obs.Text, "invalid ")
		if i == 0 {
			key, text = s.StateKey(), got
			if key != "r2c2 r1c2" {
				t.Fatalf("path %v ends at %q", p, key)
			}
		} else if s.StateKey() != key || got != text {
			t.Errorf("path %v: key %q text %q, want %q %q", p, s.StateKey(), obs.Text, key, text)
		}
	}
}

func TestVocabulary(t *testing.T) {
	s, err := New(DefaultConfig(6, 2))
	if err != nil {
		t.Fatal(err)
	}
	voc := s.Vocabulary()
	if len(voc) != 24 {
		t.Errorf("vocabulary has %d words, want 24", len(voc))
	}
	set := map[string]bool{}
	for _, w := range voc {
		set[w] = true
	}
	for r := range MaxSize {
		if !set[grid.RowWord(r)] || !set[grid.ColWord(r)] {
			t.Errorf("position words of %d missing", r)
		}
	}
}

func TestClone(t *testing.T) {
	s := mustRoom(t, corridor, DefaultConfig(6, 1))
	mustReset(t, s, 0)
	mustStep(t, s, "down")
	c := s.Clone().(*Sokoban)
	mustStep(t, c, "up")
	if obs := mustStep(t, c, "right"); !obs.Info.Success {
		t.Fatal("clone did not solve")
	}
	if s.StateKey() != "r2c1 r1c2" || s.over {
		t.Errorf("stepping the clone changed the original: %q", s.StateKey())
	}
	a := mustStep(t, s, "right")
	b := mustStep(t, s.Clone().(*Sokoban), "up")
	if a.Info.Invalid || !b.Info.Invalid {
		t.Errorf("original and clone after the split: %+v, %+v", a, b)
	}
}
