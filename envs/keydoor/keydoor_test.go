package keydoor

import (
	"fmt"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
	"github.com/graftrl/graftrl/envs/grid"
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

// mustGrid returns an environment on a hand-built layout that Reset keeps for every seed, so that
// tests can pin down dynamics on hand-checked layouts: one string per row, '.' open, '#' wall, 'S'
// start, 'K' key, 'D' door, 'G' goal. Unlike generated layouts, its goal need not be reachable or
// lie behind the door. The size of cfg is taken from the grid; the other options apply as given,
// unvalidated.
func mustGrid(t testing.TB, rows []string, cfg Config) *KeyDoor {
	t.Helper()
	var l layout
	size, at, err := grid.ParseLayout("keydoor: grid", rows, 2, MaxSize, symbols, l.cells[:], "SKDG")
	if err != nil {
		t.Fatal(err)
	}
	l.size, l.start, l.keyAt, l.doorAt, l.goalAt = size, at[0], at[1], at[2], at[3]
	l.solve()
	cfg.Size = size
	return &KeyDoor{cfg: cfg, layout: l, ep: grid.FixedEpisode()}
}

func TestResetOnGrid(t *testing.T) {
	k := mustGrid(t, split, DefaultConfig(5))
	ins, obs := envtest.MustReset(t, k, 0)
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
	type step = envtest.Step
	tests := []struct {
		name  string
		turns int
		steps []step
	}{
		{"the door is closed without the key", 18, []step{
			{Action: "down", Text: "r1 c0 open open wall open nokey", Key: "r1c0", Dist: 7},
			{Action: "down", Text: "r2 c0 open open wall open nokey", Key: "r2c0", Dist: 8},
			{Action: "right", Text: "r2 c1 open open open door nokey", Key: "r2c1", Dist: 7},
			{Action: "right", Text: "invalid r2 c1 open open open door nokey", Key: "r2c1", Reward: -0.1, Invalid: true, Dist: 7},
			{Action: "left", Text: "r2 c0 open open wall open nokey", Key: "r2c0", Dist: 8},
		}},
		{"walls and the grid edge are invalid", 18, []step{
			{Action: "up", Text: "invalid r0 c0 wall open wall key nokey", Key: "r0c0", Reward: -0.1, Invalid: true, Dist: 6},
			{Action: "left", Text: "invalid r0 c0 wall open wall key nokey", Key: "r0c0", Reward: -0.1, Invalid: true, Dist: 6},
			{Action: "pick", Text: "invalid r0 c0 wall open wall key nokey", Key: "r0c0", Reward: -0.1, Invalid: true, Dist: 6},
			{Action: "right", Text: "r0 c1 wall open open wall haskey", Key: "r0c1k", Dist: 5},
			{Action: "right", Text: "invalid r0 c1 wall open open wall haskey", Key: "r0c1k", Reward: -0.1, Invalid: true, Dist: 5},
		}},
		{"key, door, goal", 18, []step{
			{Action: "right", Text: "r0 c1 wall open open wall haskey", Key: "r0c1k", Dist: 5},
			{Action: "down", Text: "r1 c1 open open open wall haskey", Key: "r1c1k", Dist: 4},
			{Action: "down", Text: "r2 c1 open open open door haskey", Key: "r2c1k", Dist: 3},
			{Action: "right", Text: "r2 c2 wall wall open open haskey", Key: "r2c2k", Dist: 2},
			{Action: "right", Text: "r2 c3 open open door goal haskey", Key: "r2c3k", Dist: 1},
			{Action: "right", Text: "r2 c4 goal", Key: "r2c4k", Outcome: 1, Done: true, Success: true, Dist: 0},
		}},
		{"the key stays held and its cell is open", 18, []step{
			{Action: "right", Text: "r0 c1 wall open open wall haskey", Key: "r0c1k", Dist: 5},
			{Action: "left", Text: "r0 c0 wall open wall open haskey", Key: "r0c0k", Dist: 6},
			{Action: "down", Text: "r1 c0 open open wall open haskey", Key: "r1c0k", Dist: 5},
		}},
		{"truncated after max turns", 2, []step{
			{Action: "down", Text: "r1 c0 open open wall open nokey", Key: "r1c0", Dist: 7},
			{Action: "up", Text: "r0 c0 wall open wall key nokey", Key: "r0c0", Trunc: true, Dist: 6},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig(5)
			cfg.MaxTurns = tc.turns
			k := mustGrid(t, split, cfg)
			envtest.MustReset(t, k, 0)
			envtest.CheckSteps(t, k, tc.steps)
		})
	}
}

// TestKeyInStateFalseAliases checks that without key_in_state the states before and after the
// pick-up share a key although their observations and distances differ.
func TestKeyInStateFalseAliases(t *testing.T) {
	cfg := DefaultConfig(5)
	cfg.KeyInState = false
	k := mustGrid(t, split, cfg)
	_, before := envtest.MustReset(t, k, 0)
	keyBefore := k.StateKey()
	envtest.MustStep(t, k, "right")
	after := envtest.MustStep(t, k, "left")
	if k.StateKey() != keyBefore || keyBefore != "r0c0" {
		t.Errorf("keys %q and %q, want both r0c0", keyBefore, k.StateKey())
	}
	if before.Text == after.Text || before.Info.Distance != 6 || after.Info.Distance != 6 {
		t.Errorf("observations %+v and %+v", before, after)
	}
	envtest.MustStep(t, k, "down")
	if obs := envtest.MustStep(t, k, "down"); k.StateKey() != "r2c0" || obs.Info.Distance != 4 {
		t.Errorf("after the pick-up: key %q, %+v", k.StateKey(), obs)
	}
}

func TestRender(t *testing.T) {
	k := mustGrid(t, split, DefaultConfig(5))
	envtest.MustReset(t, k, 0)
	envtest.MustStep(t, k, "down")
	want := "   0 1 2 3 4\nr0 S K # . .\nr1 @ . # . .\nr2 . . D . G\nr3 . . # . .\nr4 . . # . .\n"
	if got := k.Render(); got != want {
		t.Errorf("Render =\n%s\nwant\n%s", got, want)
	}
	envtest.MustStep(t, k, "up")
	envtest.MustStep(t, k, "right")
	want = "   0 1 2 3 4\nr0 S & # . .\nr1 . . # . .\nr2 . . D . G\nr3 . . # . .\nr4 . . # . .\n"
	if got := k.Render(); got != want {
		t.Errorf("Render with the key =\n%s\nwant\n%s", got, want)
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
		envtest.MustReset(t, k, 0)
		var obs envs.Observation
		for _, a := range p {
			obs = envtest.MustStep(t, k, a)
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
	envtest.MustReset(t, k, 0)
	c := k.Clone().(*KeyDoor)
	envtest.MustStep(t, c, "right")
	if c.StateKey() != "r0c1k" || k.StateKey() != "r0c0" || k.hasKey {
		t.Errorf("clone %q, original %q", c.StateKey(), k.StateKey())
	}
}

// TestVocabularyGolden pins the word lists: the tokenizer and the model's embedding give every word
// the id of its place, so sizes 5..7 must keep today's list exactly, and sizes 8..11 may only
// append (r7..r10, c7..c10) after it.
func TestVocabularyGolden(t *testing.T) {
	const small = "r0 r1 r2 r3 r4 r5 r6 c0 c1 c2 c3 c4 c5 c6 open wall key door goal up down left right haskey nokey invalid"
	const large = small + " r7 r8 r9 r10 c7 c8 c9 c10"
	for size := MinSize; size <= MaxSize; size++ {
		want := small
		if size >= 8 {
			want = large
		}
		for _, keyInState := range []bool{true, false} {
			cfg := DefaultConfig(size)
			cfg.KeyInState = keyInState
			k, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(k.Vocabulary(), " "); got != want {
				t.Errorf("size %d vocabulary\n%q\nwant\n%q", size, got, want)
			}
		}
	}
}

// TestStateKeysAllCells checks the state key of every cell up to MaxSize, with the key held or not,
// two-digit rows and columns included, and that it does not allocate.
func TestStateKeysAllCells(t *testing.T) {
	k := &KeyDoor{cfg: DefaultConfig(MaxSize)}
	for r := range MaxSize {
		for c := range MaxSize {
			k.agent = grid.Index(r, c)
			for _, held := range []bool{false, true} {
				k.hasKey = held
				want := fmt.Sprintf("r%dc%d", r, c)
				if held {
					want += "k"
				}
				if got := k.StateKey(); got != want {
					t.Errorf("cell r%dc%d held %v: key %q, want %q", r, c, held, got, want)
				}
			}
		}
	}
	k.agent, k.hasKey = grid.Index(10, 3), true
	if n := testing.AllocsPerRun(100, func() { _ = k.StateKey() }); n != 0 || k.StateKey() != "r10c3k" {
		t.Errorf("StateKey %q allocates %v times", k.StateKey(), n)
	}
	k.cfg.KeyInState = false
	if got := k.StateKey(); got != "r10c3" {
		t.Errorf("key_in_state false: %q, want r10c3", got)
	}
}
