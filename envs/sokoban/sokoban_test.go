package sokoban

import (
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
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

// mustRoom returns an environment on a hand-built room (see parseLevel) that Reset keeps for every
// seed. Size and boxes of cfg are taken from the room; the other options apply as given, unvalidated.
func mustRoom(t testing.TB, rows []string, cfg Config) *Sokoban {
	t.Helper()
	l, err := parseLevel(rows)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Size, cfg.Boxes = l.size, l.nBoxes
	return &Sokoban{cfg: cfg, level: l, ep: grid.FixedEpisode()}
}

func TestResetOnRoom(t *testing.T) {
	s := mustRoom(t, pair, DefaultConfig(6, 2))
	ins, obs := envtest.MustReset(t, s, 0)
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
	if ins, _ := envtest.MustReset(t, w, 0); ins != "target r3 c1 wall r1 c3 wall r3 c2" {
		t.Errorf("instruction with walls = %q", ins)
	}
}

// TestStepDynamics plays action sequences on hand-built rooms and checks every observation.
func TestStepDynamics(t *testing.T) {
	type step = envtest.Step
	tests := []struct {
		name  string
		room  []string
		turns int
		steps []step
	}{
		{"push onto the target", corridor, 14, []step{
			{Action: "right", Text: "r1 c2 solved", Key: "r1c2 r1c3", Outcome: 1, Done: true, Success: true, Dist: 0},
		}},
		{"walls and a push into a wall are invalid", corridor, 14, []step{
			{Action: "left", Text: "invalid r1 c1 wall open wall box r1 c2", Key: "r1c1 r1c2", Reward: -0.1, Invalid: true, Dist: 1},
			{Action: "up", Text: "invalid r1 c1 wall open wall box r1 c2", Key: "r1c1 r1c2", Reward: -0.1, Invalid: true, Dist: 1},
			{Action: "down", Text: "r2 c1 open open wall open r1 c2", Key: "r2c1 r1c2", Dist: 2},
			{Action: "right", Text: "r2 c2 box open open open r1 c2", Key: "r2c2 r1c2", Dist: 3},
			{Action: "up", Text: "invalid r2 c2 box open open open r1 c2", Key: "r2c2 r1c2", Reward: -0.1, Invalid: true, Dist: 3},
			{Action: "right", Text: "r2 c3 open open open wall r1 c2", Key: "r2c3 r1c2", Dist: 4},
			{Action: "up", Text: "r1 c3 wall open box wall r1 c2", Key: "r1c3 r1c2", Dist: 5},
		}},
		{"a box in a corner is a dead end", corridor, 14, []step{
			{Action: "down", Text: "r2 c1 open open wall open r1 c2", Key: "r2c1 r1c2", Dist: 2},
			{Action: "right", Text: "r2 c2 box open open open r1 c2", Key: "r2c2 r1c2", Dist: 3},
			{Action: "right", Text: "r2 c3 open open open wall r1 c2", Key: "r2c3 r1c2", Dist: 4},
			{Action: "up", Text: "r1 c3 wall open box wall r1 c2", Key: "r1c3 r1c2", Dist: 5},
			{Action: "left", Text: "r1 c2 wall open box open r1 c1", Key: "r1c2 r1c1", Dist: envs.DistDead},
			{Action: "right", Text: "r1 c3 wall open open wall r1 c1", Key: "r1c3 r1c1", Dist: envs.DistDead},
			{Action: "left", Text: "r1 c2 wall open box open r1 c1", Key: "r1c2 r1c1", Dist: envs.DistDead},
			{Action: "left", Text: "invalid r1 c2 wall open box open r1 c1", Key: "r1c2 r1c1", Reward: -0.1, Invalid: true, Dist: envs.DistDead},
		}},
		{"two boxes: the pushed box passes the other in the key", pair, 18, []step{
			{Action: "down", Text: "r2 c3 open box open box r2 c4 r3 c3", Key: "r2c3 r2c4 r3c3", Dist: 3},
			{Action: "up", Text: "r1 c3 wall open open open r2 c4 r3 c3", Key: "r1c3 r2c4 r3c3", Dist: 2},
			{Action: "right", Text: "r1 c4 wall box open wall r2 c4 r3 c3", Key: "r1c4 r2c4 r3c3", Dist: 1},
			{Action: "down", Text: "r2 c4 solved", Key: "r2c4 r3c3 r3c4", Outcome: 1, Done: true, Success: true, Dist: 0},
		}},
		{"two boxes: a box cannot push a box", jam, 18, []step{
			{Action: "right", Text: "invalid r1 c1 wall open wall box r1 c2 r1 c3", Key: "r1c1 r1c2 r1c3", Reward: -0.1, Invalid: true, Dist: envs.DistDead},
		}},
		{"truncated after max turns", corridor, 3, []step{
			{Action: "down", Text: "r2 c1 open open wall open r1 c2", Key: "r2c1 r1c2", Dist: 2},
			{Action: "up", Text: "r1 c1 wall open wall box r1 c2", Key: "r1c1 r1c2", Dist: 1},
			{Action: "up", Text: "invalid r1 c1 wall open wall box r1 c2", Key: "r1c1 r1c2", Reward: -0.1, Invalid: true, Trunc: true, Dist: 1},
		}},
		{"solved on the last turn is a success, not a truncation", corridor, 3, []step{
			{Action: "down", Text: "r2 c1 open open wall open r1 c2", Key: "r2c1 r1c2", Dist: 2},
			{Action: "up", Text: "r1 c1 wall open wall box r1 c2", Key: "r1c1 r1c2", Dist: 1},
			{Action: "RIGHT ", Text: "r1 c2 solved", Key: "r1c2 r1c3", Outcome: 1, Done: true, Success: true, Dist: 0},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig(6, 1)
			cfg.MaxTurns = tc.turns
			s := mustRoom(t, tc.room, cfg)
			envtest.MustReset(t, s, 0)
			envtest.CheckSteps(t, s, tc.steps)
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
		_, obs := envtest.MustReset(t, s, 0)
		if got := obs.Info.Distance == envs.DistDead; got != tc.dead {
			t.Errorf("%s: Distance %d, want dead = %v\n%s", tc.name, obs.Info.Distance, tc.dead, s.Render())
		}
	}
}

func TestRender(t *testing.T) {
	s := mustRoom(t, pair, DefaultConfig(6, 2))
	envtest.MustReset(t, s, 0)
	envtest.MustStep(t, s, "down")
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
		envtest.MustReset(t, s, 0)
		var obs envs.Observation
		for _, a := range p {
			obs = envtest.MustStep(t, s, a)
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
	envtest.MustReset(t, s, 0)
	envtest.MustStep(t, s, "down")
	c := s.Clone().(*Sokoban)
	envtest.MustStep(t, c, "up")
	if obs := envtest.MustStep(t, c, "right"); !obs.Info.Success {
		t.Fatal("clone did not solve")
	}
	if s.StateKey() != "r2c1 r1c2" || !s.ep.Running() {
		t.Errorf("stepping the clone changed the original: %q", s.StateKey())
	}
	a := envtest.MustStep(t, s, "right")
	b := envtest.MustStep(t, s.Clone().(*Sokoban), "up")
	if a.Info.Invalid || !b.Info.Invalid {
		t.Errorf("original and clone after the split: %+v, %+v", a, b)
	}
}
