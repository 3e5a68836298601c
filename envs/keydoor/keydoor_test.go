package keydoor

import (
	"reflect"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
)

// split is a 5x5 layout whose distances are easy to check by hand: the key is next to the start, the
// door in the middle of the wall column c2, the goal two cells right of the door: 6 moves.
var split = []string{
	"SK#..",
	"..#..",
	"..D.G",
	"..#..",
	"..#..",
}

func mustGrid(t testing.TB, rows []string, cfg Config) *KeyDoor {
	t.Helper()
	k, err := newFromGrid(rows, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustReset(t testing.TB, k *KeyDoor, seed int64) (string, envs.Observation) {
	t.Helper()
	ins, obs, err := k.Reset(seed)
	if err != nil {
		t.Fatal(err)
	}
	return ins, obs
}

func mustStep(t testing.TB, k *KeyDoor, action string) envs.Observation {
	t.Helper()
	obs, err := k.Step(action)
	if err != nil {
		t.Fatalf("Step(%q): %v", action, err)
	}
	return obs
}

func TestResetOnGrid(t *testing.T) {
	k := mustGrid(t, split, DefaultConfig(5))
	ins, obs := mustReset(t, k, 0)
	if want := "key r0 c1 door r2 c2 goal r2 c4"; ins != want {
		t.Errorf("instruction = %q, want %q", ins, want)
	}
	if want := "r0 c0 wall open wall key nokey"; obs.Text != want || obs.Info.Distance != 6 {
		t.Errorf("first observation = %+v, want %q at distance 6", obs, want)
	}
	if k.StateKey() != "r0c0" {
		t.Errorf("StateKey = %q", k.StateKey())
	}
}

// TestStepDynamics plays action sequences on the hand-built layout and checks every observation.
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
		turns int
		steps []step
	}{
		{"the door is closed without the key", 18, []step{
			{action: "down", text: "r1 c0 open open wall open nokey", key: "r1c0", dist: 7},
			{action: "down", text: "r2 c0 open open wall open nokey", key: "r2c0", dist: 8},
			{action: "right", text: "r2 c1 open open open door nokey", key: "r2c1", dist: 7},
			{action: "right", text: "invalid r2 c1 open open open door nokey", key: "r2c1", reward: -0.1, invalid: true, dist: 7},
			{action: "left", text: "r2 c0 open open wall open nokey", key: "r2c0", dist: 8},
		}},
		{"walls and the grid edge are invalid", 18, []step{
			{action: "up", text: "invalid r0 c0 wall open wall key nokey", key: "r0c0", reward: -0.1, invalid: true, dist: 6},
			{action: "left", text: "invalid r0 c0 wall open wall key nokey", key: "r0c0", reward: -0.1, invalid: true, dist: 6},
			{action: "pick", text: "invalid r0 c0 wall open wall key nokey", key: "r0c0", reward: -0.1, invalid: true, dist: 6},
			{action: "right", text: "r0 c1 wall open open wall haskey", key: "r0c1k", dist: 5},
			{action: "right", text: "invalid r0 c1 wall open open wall haskey", key: "r0c1k", reward: -0.1, invalid: true, dist: 5},
		}},
		{"key, door, goal", 18, []step{
			{action: "right", text: "r0 c1 wall open open wall haskey", key: "r0c1k", dist: 5},
			{action: "down", text: "r1 c1 open open open wall haskey", key: "r1c1k", dist: 4},
			{action: "down", text: "r2 c1 open open open door haskey", key: "r2c1k", dist: 3},
			{action: "right", text: "r2 c2 wall wall open open haskey", key: "r2c2k", dist: 2},
			{action: "right", text: "r2 c3 open open door goal haskey", key: "r2c3k", dist: 1},
			{action: "right", text: "r2 c4 goal", key: "r2c4k", outcome: 1, done: true, success: true, dist: 0},
		}},
		{"the key stays held and its cell is open", 18, []step{
			{action: "right", text: "r0 c1 wall open open wall haskey", key: "r0c1k", dist: 5},
			{action: "left", text: "r0 c0 wall open wall open haskey", key: "r0c0k", dist: 6},
			{action: "down", text: "r1 c0 open open wall open haskey", key: "r1c0k", dist: 5},
		}},
		{"truncated after max turns", 2, []step{
			{action: "down", text: "r1 c0 open open wall open nokey", key: "r1c0", dist: 7},
			{action: "up", text: "r0 c0 wall open wall key nokey", key: "r0c0", trunc: true, dist: 6},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig(5)
			cfg.MaxTurns = tc.turns
			k := mustGrid(t, split, cfg)
			mustReset(t, k, 0)
			for i, s := range tc.steps {
				got := mustStep(t, k, s.action)
				want := envs.Observation{Text: s.text, Reward: s.reward, Outcome: s.outcome, Done: s.done,
					Truncated: s.trunc, Info: envs.Info{Success: s.success, Invalid: s.invalid, Distance: s.dist}}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("step %d %q:\n got %+v\nwant %+v", i, s.action, got, want)
				}
				if key := k.StateKey(); key != s.key {
					t.Errorf("step %d %q: StateKey = %q, want %q", i, s.action, key, s.key)
				}
			}
		})
	}
}

// TestKeyInStateFalseAliases checks that without key_in_state the states before and after the
// pick-up share a key although their observations and distances differ.
func TestKeyInStateFalseAliases(t *testing.T) {
	cfg := DefaultConfig(5)
	cfg.KeyInState = false
	k := mustGrid(t, split, cfg)
	_, before := mustReset(t, k, 0)
	keyBefore := k.StateKey()
	mustStep(t, k, "right")
	after := mustStep(t, k, "left")
	if k.StateKey() != keyBefore || keyBefore != "r0c0" {
		t.Errorf("keys %q and %q, want both r0c0", keyBefore, k.StateKey())
	}
	if before.Text == after.Text || before.Info.Distance != 6 || after.Info.Distance != 6 {
		t.Errorf("observations %+v and %+v", before, after)
	}
	mustStep(t, k, "down")
	if obs := mustStep(t, k, "down"); k.StateKey() != "r2c0" || obs.Info.Distance != 4 {
		t.Errorf("after the pick-up: key %q, %+v", k.StateKey(), obs)
	}
}

func TestRender(t *testing.T) {
	k := mustGrid(t, split, DefaultConfig(5))
	mustReset(t, k, 0)
	mustStep(t, k, "down")
	want := "   0 1 2 3 4\nr0 S K # . .\nr1 @ . # . .\nr2 . . D . G\nr3 . . # . .\nr4 . . # . .\n"
	if got := k.Render(); got != want {
		t.Errorf("Render =\n%s\nwant\n%s", got, want)
	}
	mustStep(t, k, "up")
	mustStep(t, k, "right")
	want = "   0 1 2 3 4\nr0 S & # . .\nr1 . . # . .\nr2 . . D . G\nr3 . . # . .\nr4 . . # . .\n"
	if got := k.Render(); got != want {
		t.Errorf("Render with the key =\n%s\nwant\n%s", got, want)
	}
	g, _ := New(DefaultConfig(5))
	if g.Render() != "" {
		t.Error("Render before Reset is not empty")
	}
}

func TestStepAfterEndAndBeforeReset(t *testing.T) {
	k, _ := New(DefaultConfig(5))
	if _, err := k.Step("up"); err == nil {
		t.Error("Step before Reset: no error")
	}
	g := mustGrid(t, split, DefaultConfig(5))
	mustReset(t, g, 0)
	for _, a := range []string{"right", "down", "down", "right", "right", "right"} {
		mustStep(t, g, a)
	}
	if _, err := g.Step("left"); err == nil {
		t.Error("Step after the episode ended: no error")
	}
	if _, obs := mustReset(t, g, 0); g.StateKey() != "r0c0" || obs.Info.Distance != 6 {
		t.Errorf("after a new Reset the key is still held: %q %+v", g.StateKey(), obs)
	}
}

// TestStateKeyIgnoresHistory reaches one state along paths with detours and invalid actions.
func TestStateKeyIgnoresHistory(t *testing.T) {
	paths := [][]string{
		{"right", "down", "down"},
		{"down", "right", "up", "down", "down"},
		{"right", "left", "right", "down", "jump", "down"},
	}
	for _, p := range paths {
		k := mustGrid(t, split, DefaultConfig(5))
		mustReset(t, k, 0)
		var obs envs.Observation
		for _, a := range p {
			obs = mustStep(t, k, a)
		}
		if k.StateKey() != "r2c1k" || strings.TrimPrefix(obs.Text, "invalid ") != "r2 c1 open open open door haskey" {
			t.Errorf("path %v: key %q text %q", p, k.StateKey(), obs.Text)
		}
	}
}

func TestVocabulary(t *testing.T) {
	k, _ := New(DefaultConfig(5))
	if n := len(k.Vocabulary()); n != 26 {
		t.Errorf("vocabulary has %d words, want 26", n)
	}
}

func TestClone(t *testing.T) {
	k := mustGrid(t, split, DefaultConfig(5))
	mustReset(t, k, 0)
	c := k.Clone().(*KeyDoor)
	mustStep(t, c, "right")
	if c.StateKey() != "r0c1k" || k.StateKey() != "r0c0" || k.hasKey {
		t.Errorf("clone %q, original %q", c.StateKey(), k.StateKey())
	}
}
