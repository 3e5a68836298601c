package maze

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
	"github.com/graftrl/graftrl/envs/grid"
)

// corridor is a 5x5 layout whose distances are easy to check by hand: the only way from S to G goes
// down the left column, along row 3 and down to G (8 moves); r0c1 is a dead end next to a trap.
var corridor = []string{
	"S.#..",
	".T...",
	"..#T.",
	".....",
	"...#G",
}

// small is a 3x3 layout with the goal two moves right of the start and a trap below it.
var small = []string{
	"S.G",
	"...",
	"T#.",
}

// mustGrid returns a maze on a hand-built layout that Reset keeps for every seed, so that tests can
// pin down dynamics on hand-checked layouts: one string per row, '.' open, '#' wall, 'T' trap, 'S'
// start, 'G' goal. Unlike generated layouts, its goal need not be reachable. The size of cfg is
// taken from the grid; the other options apply as given, unvalidated.
func mustGrid(t testing.TB, rows []string, cfg Config) *Maze {
	t.Helper()
	var l layout
	size, at, err := grid.ParseLayout("maze: grid", rows, 2, MaxSize, symbols, l.cells[:], "SG")
	if err != nil {
		t.Fatal(err)
	}
	l.size, l.start, l.goal = size, at[0], at[1]
	l.solve()
	cfg.Size = size
	return &Maze{cfg: cfg, layout: l, ep: grid.FixedEpisode()}
}

func TestResetOnGrid(t *testing.T) {
	m := mustGrid(t, corridor, DefaultConfig(5))
	ins, obs := envtest.MustReset(t, m, 0)
	if ins != "goal r4 c4" {
		t.Errorf("instruction = %q, want %q", ins, "goal r4 c4")
	}
	want := envs.Observation{Text: "r0 c0 wall open wall open", Info: envs.Info{Distance: 8}}
	if obs.Text != want.Text || obs.Info.Distance != want.Info.Distance || obs.Over() || obs.Reward != 0 {
		t.Errorf("first observation = %+v, want %+v", obs, want)
	}
	if k := m.StateKey(); k != "r0c0" {
		t.Errorf("StateKey = %q, want r0c0", k)
	}
}

// TestStepDynamics plays action sequences on hand-built layouts and checks every observation.
func TestStepDynamics(t *testing.T) {
	type step = envtest.Step
	cfg := DefaultConfig(5)
	tests := []struct {
		name  string
		grid  []string
		turns int
		steps []step
	}{
		{"off the grid", corridor, 12, []step{
			{Action: "up", Text: "invalid r0 c0 wall open wall open", Key: "r0c0", Reward: -0.1, Invalid: true, Dist: 8},
			{Action: "left", Text: "invalid r0 c0 wall open wall open", Key: "r0c0", Reward: -0.1, Invalid: true, Dist: 8},
		}},
		{"into a wall", corridor, 12, []step{
			{Action: "right", Text: "r0 c1 wall trap open wall", Key: "r0c1", Dist: 9},
			{Action: "right", Text: "invalid r0 c1 wall trap open wall", Key: "r0c1", Reward: -0.1, Invalid: true, Dist: 9},
			{Action: "left", Text: "r0 c0 wall open wall open", Key: "r0c0", Dist: 8},
		}},
		{"onto a trap", corridor, 12, []step{
			{Action: "right", Text: "r0 c1 wall trap open wall", Key: "r0c1", Dist: 9},
			{Action: "down", Text: "r1 c1 trap", Key: "r1c1", Done: true, Dist: envs.DistDead},
		}},
		{"shortest path to the goal", corridor, 12, []step{
			{Action: "down", Text: "r1 c0 open open wall trap", Key: "r1c0", Dist: 7},
			{Action: "down", Text: "r2 c0 open open wall open", Key: "r2c0", Dist: 6},
			{Action: "down", Text: "r3 c0 open open wall open", Key: "r3c0", Dist: 5},
			{Action: "right", Text: "r3 c1 open open open open", Key: "r3c1", Dist: 4},
			{Action: "right", Text: "r3 c2 wall open open open", Key: "r3c2", Dist: 3},
			{Action: "right", Text: "r3 c3 trap wall open open", Key: "r3c3", Dist: 2},
			{Action: "right", Text: "r3 c4 open goal open wall", Key: "r3c4", Dist: 1},
			{Action: "down", Text: "r4 c4 goal", Key: "r4c4", Outcome: 1, Done: true, Success: true, Dist: 0},
		}},
		{"truncated after max turns", small, 3, []step{
			{Action: "down", Text: "r1 c0 open trap wall open", Key: "r1c0", Dist: 3},
			{Action: "jump", Text: "invalid r1 c0 open trap wall open", Key: "r1c0", Reward: -0.1, Invalid: true, Dist: 3},
			{Action: "up", Text: "r0 c0 wall open wall open", Key: "r0c0", Trunc: true, Dist: 2},
		}},
		{"invalid action on the last turn is truncated", small, 2, []step{
			{Action: "right", Text: "r0 c1 wall open open goal", Key: "r0c1", Dist: 1},
			{Action: "up", Text: "invalid r0 c1 wall open open goal", Key: "r0c1", Reward: -0.1, Invalid: true, Trunc: true, Dist: 1},
		}},
		{"goal on the last turn is a success, not a truncation", small, 2, []step{
			{Action: "right", Text: "r0 c1 wall open open goal", Key: "r0c1", Dist: 1},
			{Action: "right", Text: "r0 c2 goal", Key: "r0c2", Outcome: 1, Done: true, Success: true, Dist: 0},
		}},
		{"trap on the last turn is a failure, not a truncation", small, 2, []step{
			{Action: "down", Text: "r1 c0 open trap wall open", Key: "r1c0", Dist: 3},
			{Action: "down", Text: "r2 c0 trap", Key: "r2c0", Done: true, Dist: envs.DistDead},
		}},
		{"into a wall from below", small, 5, []step{
			{Action: "right", Text: "r0 c1 wall open open goal", Key: "r0c1", Dist: 1},
			{Action: "down", Text: "r1 c1 open wall open open", Key: "r1c1", Dist: 2},
			{Action: "down", Text: "invalid r1 c1 open wall open open", Key: "r1c1", Reward: -0.1, Invalid: true, Dist: 2},
			{Action: "left", Text: "r1 c0 open trap wall open", Key: "r1c0", Dist: 3},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			c.MaxTurns = tc.turns
			m := mustGrid(t, tc.grid, c)
			envtest.MustReset(t, m, 0)
			envtest.CheckSteps(t, m, tc.steps)
		})
	}
}

// TestRenderSmall fixes the drawing format the play command shows.
func TestRenderSmall(t *testing.T) {
	m := mustGrid(t, small, DefaultConfig(5))
	envtest.MustReset(t, m, 0)
	envtest.MustStep(t, m, "down")
	want := "   0 1 2\nr0 S . G\nr1 @ . .\nr2 T # .\n"
	if got := m.Render(); got != want {
		t.Errorf("Render =\n%s\nwant\n%s", got, want)
	}
}

func TestUnreachableGoalIsDead(t *testing.T) {
	m := mustGrid(t, []string{"S#G", "#..", "..."}, DefaultConfig(5))
	if _, obs := envtest.MustReset(t, m, 0); obs.Info.Distance != envs.DistDead {
		t.Errorf("Distance = %d, want DistDead", obs.Info.Distance)
	}
}

// TestInvalidTextLeavesState steps garbage through the env itself: penalty, same key, same position text.
func TestInvalidTextLeavesState(t *testing.T) {
	for _, text := range []string{"", " ", "up up", "🙂", "\x00", "UP!", "r0 c1"} {
		m := mustGrid(t, corridor, DefaultConfig(5))
		_, first := envtest.MustReset(t, m, 0)
		obs := envtest.MustStep(t, m, text)
		if !obs.Info.Invalid || obs.Reward != -0.1 || obs.Text != "invalid "+first.Text || m.StateKey() != "r0c0" || obs.Over() {
			t.Errorf("Step(%q) = %+v, key %q", text, obs, m.StateKey())
		}
	}
	m := mustGrid(t, corridor, DefaultConfig(5))
	envtest.MustReset(t, m, 0)
	if obs := envtest.MustStep(t, m, "DOWN"); obs.Info.Invalid || m.StateKey() != "r1c0" {
		t.Errorf(`Step("DOWN") = %+v, key %q`, obs, m.StateKey())
	}
}

// TestStateKeyIgnoresHistory reaches the same cell along different paths, with detours and invalid
// actions, and expects the same key and the same observation.
func TestStateKeyIgnoresHistory(t *testing.T) {
	paths := [][]string{
		{"down", "down", "down", "right"},
		{"down", "down", "right", "down"},
		{"down", "up", "down", "left", "down", "right", "down"},
		{"down", "down", "down", "right", "right", "left", "xyzzy"},
	}
	var key, text string
	for i, p := range paths {
		m := mustGrid(t, corridor, DefaultConfig(5))
		envtest.MustReset(t, m, 0)
		var obs envs.Observation
		for _, a := range p {
			obs = envtest.MustStep(t, m, a)
		}
		if i == 0 {
			key, text = m.StateKey(), strings.TrimPrefix(obs.Text, "invalid ")
			if key != "r3c1" {
				t.Fatalf("path %v ends at %q, want r3c1", p, key)
			}
			continue
		}
		if m.StateKey() != key || strings.TrimPrefix(obs.Text, "invalid ") != text {
			t.Errorf("path %v: key %q text %q, want %q %q", p, m.StateKey(), obs.Text, key, text)
		}
	}
}

func TestCellKeys(t *testing.T) {
	for r := range MaxSize {
		for c := range MaxSize {
			m := &Maze{}
			m.agent = grid.Index(r, c)
			want := fmt.Sprintf("r%dc%d", r, c) // r10c3 at size 11
			if got := m.StateKey(); got != want {
				t.Errorf("StateKey of cell %d = %q, want %q", m.agent, got, want)
			}
		}
	}
}

func TestVocabulary(t *testing.T) {
	m, err := New(DefaultConfig(5))
	if err != nil {
		t.Fatal(err)
	}
	voc := m.Vocabulary()
	if len(voc) >= 48 {
		t.Errorf("vocabulary has %d words, want < 48", len(voc))
	}
	set := map[string]bool{}
	for _, w := range voc {
		if set[w] {
			t.Errorf("duplicate word %q", w)
		}
		set[w] = true
	}
	for _, a := range []string{"up", "down", "left", "right"} {
		if !set[a] {
			t.Errorf("action %q not in vocabulary", a)
		}
	}
	voc[0] = "changed"
	if m.Vocabulary()[0] == "changed" {
		t.Error("Vocabulary returns shared storage")
	}
	// Random episodes on every size: every word of every instruction and observation is in the
	// vocabulary of the size.
	actions := []string{"up", "down", "left", "right", "jump"}
	for size := MinSize; size <= MaxSize; size++ {
		cfg := DefaultConfig(size)
		cfg.Traps = maxTraps(size) // more trap endings
		cfg.Labelled, cfg.GoalHint = size%2 == 0, size%2 == 0
		m, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		set := map[string]bool{}
		for _, w := range m.Vocabulary() {
			set[w] = true
		}
		for seed := range int64(300) {
			ins, obs := envtest.MustReset(t, m, seed)
			texts := []string{ins, obs.Text}
			for i := 0; !obs.Over(); i++ {
				obs = envtest.MustStep(t, m, actions[(int(seed)*7+i*i)%len(actions)])
				texts = append(texts, obs.Text)
			}
			for _, txt := range texts {
				for _, w := range strings.Fields(txt) {
					if !set[w] {
						t.Fatalf("size %d seed %d: word %q of %q not in vocabulary", size, seed, w, txt)
					}
				}
				if strings.Join(strings.Fields(txt), " ") != txt {
					t.Fatalf("text %q is not single-space separated", txt)
				}
			}
		}
	}
}

func TestClone(t *testing.T) {
	m, err := New(DefaultConfig(5))
	if err != nil {
		t.Fatal(err)
	}
	envtest.MustReset(t, m, 3)
	var first envs.Observation
	for _, a := range []string{"up", "down", "left", "right"} {
		if first = envtest.MustStep(t, m, a); !first.Info.Invalid && !first.Over() {
			break
		}
	}
	key, render := m.StateKey(), m.Render()
	c := m.Clone().(*Maze)
	if c.StateKey() != key || c.Render() != render {
		t.Fatalf("clone differs: %q vs %q", c.StateKey(), key)
	}
	// Play the clone to the end of an episode and onto another task.
	for c.ep.Running() {
		for _, a := range []string{"up", "left", "down", "right"} {
			if c.ep.Running() {
				envtest.MustStep(t, c, a)
			}
		}
	}
	envtest.MustReset(t, c, 99)
	if m.StateKey() != key || m.Render() != render || !m.ep.Running() {
		t.Errorf("stepping the clone changed the original: %q\n%s", m.StateKey(), m.Render())
	}
	// The original continues as if no clone existed.
	o := m.Clone().(*Maze)
	a, b := envtest.MustStep(t, m, "down"), envtest.MustStep(t, o, "down")
	if !reflect.DeepEqual(a, b) || m.StateKey() != o.StateKey() {
		t.Errorf("original and fresh clone diverge: %+v vs %+v", a, b)
	}
}

func TestMaxTurnsAndConfig(t *testing.T) {
	m, err := New(DefaultConfig(6))
	if err != nil {
		t.Fatal(err)
	}
	if m.MaxTurns() != 14 || m.Config().Size != 6 {
		t.Errorf("MaxTurns = %d, size = %d; want 14, 6", m.MaxTurns(), m.Config().Size)
	}
	for _, size := range []int{4, 12} {
		cfg := DefaultConfig(size)
		cfg.Walls, cfg.Traps, cfg.MaxTurns = 0, 0, 30
		_, err := New(cfg)
		if want := fmt.Sprintf(`env maze: option "size": %d is out of range (allowed 5..11)`, size); err == nil || err.Error() != want {
			t.Errorf("New with size %d: %v, want %s", size, err, want)
		}
	}
}

// TestVocabularyGolden pins the word lists: the tokenizer and the model's embedding give every word
// the id of its place, so sizes 5..7 must keep today's list exactly, and sizes 8..11 may only
// append (r7..r10, c7..c10) after it.
func TestVocabularyGolden(t *testing.T) {
	const small = "r0 r1 r2 r3 r4 r5 r6 c0 c1 c2 c3 c4 c5 c6 open wall trap goal up down left right invalid " +
		"up-open up-wall up-trap up-goal down-open down-wall down-trap down-goal " +
		"left-open left-wall left-trap left-goal right-open right-wall right-trap right-goal " +
		"goal-up goal-down goal-left goal-right"
	const large = small + " r7 r8 r9 r10 c7 c8 c9 c10"
	for size := MinSize; size <= MaxSize; size++ {
		want := small
		if size >= 8 {
			want = large
		}
		for _, cfg := range []Config{DefaultConfig(size), {Size: size, Walls: 0, Traps: 0, MaxTurns: 100,
			InvalidPenalty: -1, SuccessReward: 2, Labelled: true, GoalHint: true}} {
			m, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(m.Vocabulary(), " "); got != want {
				t.Errorf("size %d vocabulary\n%q\nwant\n%q", size, got, want)
			}
		}
	}
	m, err := envs.New(Name, envs.Options{"size": 7})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(m.Vocabulary()); got != 43 {
		t.Errorf("size 7 through the registry: %d words, want 43", got)
	}
}

// TestLargeSizeText checks positions with two-digit rows and columns at size 11: the instruction,
// the observations and the state key of a hand-built layout whose goal is at r10c10.
func TestLargeSizeText(t *testing.T) {
	rows := make([]string, 11)
	for r := range rows {
		rows[r] = strings.Repeat(".", 11)
	}
	rows[9] = "........." + "S."
	rows[10] = "........T" + ".G"
	m := mustGrid(t, rows, DefaultConfig(11))
	ins, obs := envtest.MustReset(t, m, 0)
	if ins != "goal r10 c10" || obs.Text != "r9 c9 open open open open" || m.StateKey() != "r9c9" || obs.Info.Distance != 2 {
		t.Fatalf("Reset: %q %q key %q distance %d", ins, obs.Text, m.StateKey(), obs.Info.Distance)
	}
	envtest.CheckSteps(t, m, []envtest.Step{
		{Action: "down", Text: "r10 c9 open wall trap goal", Key: "r10c9", Dist: 1},
		{Action: "right", Text: "r10 c10 goal", Key: "r10c10", Outcome: 1, Done: true, Success: true, Dist: 0},
	})
	if r := m.Render(); !strings.HasPrefix(r, "     0  1  2") || !strings.Contains(r, "\nr10  .  .  .  .  .  .  .  .  T  .  @\n") {
		t.Errorf("Render at size 11:\n%s", r)
	}
}
