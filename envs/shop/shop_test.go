package shop

import (
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
)

// Size bits of the hand-made catalogues.
const (
	sS uint8 = 1 << iota
	sM
	sL
)

// shirts is a hand-made catalogue for "find red shirt size m under 20": i1 is the only right item; i2
// is too expensive, i3 lacks size m, i4 has another color, i5 is a bag, i6 a hat. A result page shows
// three items, so "shirt" and "red" list i1..i3 only.
func shirts() catalog {
	c := catalog{n: 6, goalCategory: 0, goalColor: 0, goalSize: 1, bound: 20}
	c.items = [MaxItems]item{
		{category: 0, color: 0, price: 1, sizes: sS | sM}, // i1 red shirt 15 s m
		{category: 0, color: 0, price: 3, sizes: sM},      // i2 red shirt 25 m
		{category: 0, color: 0, price: 0, sizes: sS | sL}, // i3 red shirt 10 s l
		{category: 0, color: 1, price: 0, sizes: sM},      // i4 blue shirt 10 m
		{category: 3, color: 0, price: 0},                 // i5 red bag 10
		{category: 2, color: 2, price: 4, sizes: sL},      // i6 green hat 30 l
	}
	return c
}

// bags is a hand-made catalogue for "find black bag under 30": i2 is right, i1 too expensive.
func bags() catalog {
	c := catalog{n: 4, goalCategory: 3, goalColor: 3, goalSize: -1, bound: 30}
	c.items = [MaxItems]item{
		{category: 3, color: 3, price: 5},             // i1 black bag 35
		{category: 3, color: 3, price: 3},             // i2 black bag 25
		{category: 3, color: 4, price: 0},             // i3 white bag 10
		{category: 1, color: 3, price: 2, sizes: sML}, // i4 black shoes 20 m l
	}
	return c
}

const sML = sM | sL

func TestResetOnCatalog(t *testing.T) {
	s := newFromCatalog(shirts(), DefaultConfig())
	ins, obs := envtest.MustReset(t, s, 0)
	if ins != "find red shirt size m under 20" || obs.Text != "home" || obs.Info.Distance != 4 || s.StateKey() != "home" {
		t.Errorf("Reset = %q, %+v, key %q", ins, obs, s.StateKey())
	}
	b := newFromCatalog(bags(), DefaultConfig())
	if ins, obs := envtest.MustReset(t, b, 0); ins != "find black bag under 30" || obs.Info.Distance != 3 {
		t.Errorf("Reset of the bags = %q, %+v", ins, obs)
	}
}

// TestStepDynamics plays action sequences on the hand-made catalogues and checks every observation.
func TestStepDynamics(t *testing.T) {
	type step = envtest.Step
	inv := func(action, text, key string, dist int) step {
		return step{Action: action, Text: "invalid " + text, Key: key, Reward: -0.1, Invalid: true, Dist: dist}
	}
	tests := []struct {
		name  string
		cat   catalog
		turns int
		steps []step
	}{
		{"inspect, go back, buy the right one", shirts(), 12, []step{
			{Action: "search red shirt", Text: "results i1 15 i2 25 i3 10", Key: "q=red+shirt", Dist: 3},
			{Action: "click i2", Text: "item i2 red shirt 25 size m", Key: "q=red+shirt/i2", Dist: 4},
			{Action: "select m", Text: "item i2 red shirt 25 size m chosen m", Key: "q=red+shirt/i2/m", Dist: 4},
			{Action: "back", Text: "results i1 15 i2 25 i3 10", Key: "q=red+shirt", Dist: 3},
			{Action: "click i1", Text: "item i1 red shirt 15 size s m", Key: "q=red+shirt/i1", Dist: 2},
			{Action: "select s", Text: "item i1 red shirt 15 size s m chosen s", Key: "q=red+shirt/i1/s", Dist: 2},
			{Action: "select m", Text: "item i1 red shirt 15 size s m chosen m", Key: "q=red+shirt/i1/m", Dist: 1},
			{Action: "buy", Text: "bought i1", Key: "q=red+shirt/i1/m", Outcome: 1, Done: true, Success: true, Dist: 0},
		}},
		{"actions not allowed on the page", shirts(), 20, []step{
			inv("back", "home", "home", 4),
			inv("click i1", "home", "home", 4),
			inv("select m", "home", "home", 4),
			inv("buy", "home", "home", 4),
			inv("search m", "home", "home", 4),
			inv("search", "home", "home", 4),
			{Action: "search shirt", Text: "results i1 15 i2 25 i3 10", Key: "q=shirt", Dist: 3},
			inv("click i4", "results i1 15 i2 25 i3 10", "q=shirt", 3),
			inv("select m", "results i1 15 i2 25 i3 10", "q=shirt", 3),
			{Action: "click i3", Text: "item i3 red shirt 10 size s l", Key: "q=shirt/i3", Dist: 4},
			inv("select m", "item i3 red shirt 10 size s l", "q=shirt/i3", 4),
			inv("buy", "item i3 red shirt 10 size s l", "q=shirt/i3", 4),
			inv("click i1", "item i3 red shirt 10 size s l", "q=shirt/i3", 4),
			{Action: "back", Text: "results i1 15 i2 25 i3 10", Key: "q=shirt", Dist: 3},
		}},
		{"queries are sets and pages are capped", shirts(), 12, []step{
			{Action: "search SHIRT red", Text: "results i1 15 i2 25 i3 10", Key: "q=red+shirt", Dist: 3},
			{Action: "search blue", Text: "results i4 10", Key: "q=blue", Dist: 4},
			{Action: "search red blue", Text: "results none", Key: "q=red+blue", Dist: 4},
			{Action: "search red red", Text: "results i1 15 i2 25 i3 10", Key: "q=red", Dist: 3},
			{Action: "search bag", Text: "results i5 10", Key: "q=bag", Dist: 4},
			{Action: "back", Text: "home", Key: "home", Dist: 4},
		}},
		{"buying the wrong item fails", shirts(), 12, []step{
			{Action: "search red shirt", Text: "results i1 15 i2 25 i3 10", Key: "q=red+shirt", Dist: 3},
			{Action: "click i2", Text: "item i2 red shirt 25 size m", Key: "q=red+shirt/i2", Dist: 4},
			{Action: "select m", Text: "item i2 red shirt 25 size m chosen m", Key: "q=red+shirt/i2/m", Dist: 4},
			{Action: "buy", Text: "bought i2", Key: "q=red+shirt/i2/m", Done: true, Dist: envs.DistDead},
		}},
		{"the right item in the wrong size fails", shirts(), 12, []step{
			{Action: "search red shirt", Text: "results i1 15 i2 25 i3 10", Key: "q=red+shirt", Dist: 3},
			{Action: "click i1", Text: "item i1 red shirt 15 size s m", Key: "q=red+shirt/i1", Dist: 2},
			{Action: "select s", Text: "item i1 red shirt 15 size s m chosen s", Key: "q=red+shirt/i1/s", Dist: 2},
			{Action: "buy", Text: "bought i1", Key: "q=red+shirt/i1/s", Done: true, Dist: envs.DistDead},
		}},
		{"a bag needs no size", bags(), 12, []step{
			{Action: "search black", Text: "results i1 35 i2 25 i4 20", Key: "q=black", Dist: 2},
			{Action: "click i2", Text: "item i2 black bag 25", Key: "q=black/i2", Dist: 1},
			inv("select m", "item i2 black bag 25", "q=black/i2", 1),
			{Action: "buy", Text: "bought i2", Key: "q=black/i2", Outcome: 1, Done: true, Success: true, Dist: 0},
		}},
		{"truncated after max turns", shirts(), 2, []step{
			{Action: "search red", Text: "results i1 15 i2 25 i3 10", Key: "q=red", Dist: 3},
			{Action: "click i1", Text: "item i1 red shirt 15 size s m", Key: "q=red/i1", Trunc: true, Dist: 2},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.MaxTurns = tc.turns
			s := newFromCatalog(tc.cat, cfg)
			envtest.MustReset(t, s, 0)
			envtest.CheckSteps(t, s, tc.steps)
		})
	}
}

func TestParseAction(t *testing.T) {
	tests := []struct {
		text string
		want action
		ok   bool
	}{
		{"search red", action{verb: search, query: 1 << 0}, true},
		{"search red shirt", action{verb: search, query: 1<<0 | 1<<5}, true},
		{"SEARCH  Pants\tWHITE", action{verb: search, query: 1<<4 | 1<<9}, true},
		{"click i8", action{verb: click, arg: 7}, true},
		{"select l", action{verb: selectSize, arg: 2}, true},
		{" back ", action{verb: back}, true},
		{"buy", action{verb: buy}, true},
		{"", action{}, false},
		{"search", action{}, false},
		{"search red shirt hat", action{}, false},
		{"search m", action{}, false},
		{"search 10", action{}, false},
		{"click", action{}, false},
		{"click i9", action{}, false},
		{"click i0", action{}, false},
		{"click i1 i2", action{}, false},
		{"select", action{}, false},
		{"select xl", action{}, false},
		{"select m l", action{}, false},
		{"back home", action{}, false},
		{"buy i1", action{}, false},
		{"find red shirt", action{}, false},
		{"i1", action{}, false},
		{"search réd", action{}, false},
		{"search\u00a0red", action{}, false},
		{"search " + strings.Repeat("red ", 20), action{}, false},
	}
	for _, tc := range tests {
		got, ok := parseAction(tc.text)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("parseAction(%q) = %+v, %v; want %+v, %v", tc.text, got, ok, tc.want, tc.ok)
		}
	}
}

func TestWords(t *testing.T) {
	if nth(colorWords, 0) != "red" || nth(colorWords, 4) != "white" || nth(itemWords, 7) != "i8" {
		t.Error("nth")
	}
	if indexOf(categoryWords, "bag") != bag || indexOf(categoryWords, "ba") != -1 || indexOf(sizeWords, "l") != 2 {
		t.Error("indexOf")
	}
	for i := range numPrices {
		if nth(priceWords, i) != strings.Fields(priceWords)[i] || price(int8(i)) != 10+5*i {
			t.Errorf("price %d", i)
		}
	}
}

// TestStateKeyIgnoresHistory reaches one page along paths with detours and invalid actions.
func TestStateKeyIgnoresHistory(t *testing.T) {
	for _, p := range [][]string{
		{"search red shirt", "click i1"},
		{"search blue", "search shirt red", "click i2", "select m", "back", "click i1"},
		{"search red shirt", "click i1", "select m", "back", "buy", "click i1"},
	} {
		s := newFromCatalog(shirts(), DefaultConfig())
		envtest.MustReset(t, s, 0)
		var obs envs.Observation
		for _, a := range p {
			obs = envtest.MustStep(t, s, a)
		}
		if s.StateKey() != "q=red+shirt/i1" || strings.TrimPrefix(obs.Text, "invalid ") != "item i1 red shirt 15 size s m" {
			t.Errorf("path %v: key %q text %q", p, s.StateKey(), obs.Text)
		}
	}
}

// TestDistanceMatchesBFS checks the distance formula against a breadth-first search over every page
// reachable from home with every action, on the hand-made and generated catalogues.
func TestDistanceMatchesBFS(t *testing.T) {
	var shops []*Shop
	shops = append(shops, newFromCatalog(shirts(), DefaultConfig()), newFromCatalog(bags(), DefaultConfig()))
	for _, cfg := range []Config{DefaultConfig(), {Items: MaxItems, Results: MinResults, MaxTurns: 12, InvalidPenalty: -0.1, SuccessReward: 1}} {
		for seed := range int64(20) {
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			envtest.MustReset(t, s, seed)
			shops = append(shops, s)
		}
	}
	for _, s := range shops {
		s.cfg.MaxTurns = 1 << 30
		envtest.MustReset(t, s, s.catalogSeed)
		for k, ld := range envtest.Oracle(t, s, s.distance(), allActions()) {
			if ld[0] < 0 || ld[1] != ld[0] {
				t.Fatalf("page %q: Info.Distance %d, BFS %d\n%s", k, ld[1], ld[0], s.Render())
			}
		}
	}
}

func TestClone(t *testing.T) {
	s := newFromCatalog(shirts(), DefaultConfig())
	envtest.MustReset(t, s, 0)
	envtest.MustStep(t, s, "search red shirt")
	c := s.Clone().(*Shop)
	envtest.MustStep(t, c, "click i1")
	if s.StateKey() != "q=red+shirt" || c.StateKey() != "q=red+shirt/i1" {
		t.Errorf("original %q, clone %q", s.StateKey(), c.StateKey())
	}
}

func TestStepAfterEndAndBeforeReset(t *testing.T) {
	s, _ := New(DefaultConfig())
	if _, err := s.Step("back"); err == nil {
		t.Error("Step before Reset: no error")
	}
	b := newFromCatalog(bags(), DefaultConfig())
	envtest.MustReset(t, b, 0)
	envtest.MustStep(t, b, "search black bag")
	envtest.MustStep(t, b, "click i1")
	envtest.MustStep(t, b, "buy")
	if _, err := b.Step("back"); err == nil {
		t.Error("Step after the episode ended: no error")
	}
}

func TestRender(t *testing.T) {
	s := newFromCatalog(bags(), DefaultConfig())
	envtest.MustReset(t, s, 0)
	envtest.MustStep(t, s, "search black")
	want := "find black bag under 30\n" +
		"  i1 black bag 35\n" +
		"* i2 black bag 25\n" +
		"  i3 white bag 10\n" +
		"  i4 black shoes 20 m l\n" +
		"page q=black: results i1 35 i2 25 i4 20\n"
	if got := s.Render(); got != want {
		t.Errorf("Render =\n%s\nwant\n%s", got, want)
	}
	g, _ := New(DefaultConfig())
	if g.Render() != "" {
		t.Error("Render before Reset is not empty")
	}
}

func TestVocabulary(t *testing.T) {
	s, _ := New(DefaultConfig())
	if n := len(s.Vocabulary()); n != 42 {
		t.Errorf("vocabulary has %d words, want 42", n)
	}
}
