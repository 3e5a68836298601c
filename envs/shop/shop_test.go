package shop

import (
	"reflect"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
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

func mustReset(t testing.TB, s *Shop, seed int64) (string, envs.Observation) {
	t.Helper()
	ins, obs, err := s.Reset(seed)
	if err != nil {
		t.Fatal(err)
	}
	return ins, obs
}

func mustStep(t testing.TB, s *Shop, action string) envs.Observation {
	t.Helper()
	obs, err := s.Step(action)
	if err != nil {
		t.Fatalf("Step(%q): %v", action, err)
	}
	return obs
}

func TestResetOnCatalog(t *testing.T) {
	s := newFromCatalog(shirts(), DefaultConfig())
	ins, obs := mustReset(t, s, 0)
	if ins != "find red shirt size m under 20" || obs.Text != "home" || obs.Info.Distance != 4 || s.StateKey() != "home" {
		t.Errorf("Reset = %q, %+v, key %q", ins, obs, s.StateKey())
	}
	b := newFromCatalog(bags(), DefaultConfig())
	if ins, obs := mustReset(t, b, 0); ins != "find black bag under 30" || obs.Info.Distance != 3 {
		t.Errorf("Reset of the bags = %q, %+v", ins, obs)
	}
}

// TestStepDynamics plays action sequences on the hand-made catalogues and checks every observation.
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
	inv := func(action, text, key string, dist int) step {
		return step{action: action, text: "invalid " + text, key: key, reward: -0.1, invalid: true, dist: dist}
	}
	tests := []struct {
		name  string
		cat   catalog
		turns int
		steps []step
	}{
		{"inspect, go back, buy the right one", shirts(), 12, []step{
			{action: "search red shirt", text: "results i1 15 i2 25 i3 10", key: "q=red+shirt", dist: 3},
			{action: "click i2", text: "item i2 red shirt 25 size m", key: "q=red+shirt/i2", dist: 4},
			{action: "select m", text: "item i2 red shirt 25 size m chosen m", key: "q=red+shirt/i2/m", dist: 4},
			{action: "back", text: "results i1 15 i2 25 i3 10", key: "q=red+shirt", dist: 3},
			{action: "click i1", text: "item i1 red shirt 15 size s m", key: "q=red+shirt/i1", dist: 2},
			{action: "select s", text: "item i1 red shirt 15 size s m chosen s", key: "q=red+shirt/i1/s", dist: 2},
			{action: "select m", text: "item i1 red shirt 15 size s m chosen m", key: "q=red+shirt/i1/m", dist: 1},
			{action: "buy", text: "bought i1", key: "q=red+shirt/i1/m", outcome: 1, done: true, success: true, dist: 0},
		}},
		{"actions not allowed on the page", shirts(), 20, []step{
			inv("back", "home", "home", 4),
			inv("click i1", "home", "home", 4),
			inv("select m", "home", "home", 4),
			inv("buy", "home", "home", 4),
			inv("search m", "home", "home", 4),
			inv("search", "home", "home", 4),
			{action: "search shirt", text: "results i1 15 i2 25 i3 10", key: "q=shirt", dist: 3},
			inv("click i4", "results i1 15 i2 25 i3 10", "q=shirt", 3),
			inv("select m", "results i1 15 i2 25 i3 10", "q=shirt", 3),
			{action: "click i3", text: "item i3 red shirt 10 size s l", key: "q=shirt/i3", dist: 4},
			inv("select m", "item i3 red shirt 10 size s l", "q=shirt/i3", 4),
			inv("buy", "item i3 red shirt 10 size s l", "q=shirt/i3", 4),
			inv("click i1", "item i3 red shirt 10 size s l", "q=shirt/i3", 4),
			{action: "back", text: "results i1 15 i2 25 i3 10", key: "q=shirt", dist: 3},
		}},
		{"queries are sets and pages are capped", shirts(), 12, []step{
			{action: "search SHIRT red", text: "results i1 15 i2 25 i3 10", key: "q=red+shirt", dist: 3},
			{action: "search blue", text: "results i4 10", key: "q=blue", dist: 4},
			{action: "search red blue", text: "results none", key: "q=red+blue", dist: 4},
			{action: "search red red", text: "results i1 15 i2 25 i3 10", key: "q=red", dist: 3},
			{action: "search bag", text: "results i5 10", key: "q=bag", dist: 4},
			{action: "back", text: "home", key: "home", dist: 4},
		}},
		{"buying the wrong item fails", shirts(), 12, []step{
			{action: "search red shirt", text: "results i1 15 i2 25 i3 10", key: "q=red+shirt", dist: 3},
			{action: "click i2", text: "item i2 red shirt 25 size m", key: "q=red+shirt/i2", dist: 4},
			{action: "select m", text: "item i2 red shirt 25 size m chosen m", key: "q=red+shirt/i2/m", dist: 4},
			{action: "buy", text: "bought i2", key: "q=red+shirt/i2/m", done: true, dist: envs.DistDead},
		}},
		{"the right item in the wrong size fails", shirts(), 12, []step{
			{action: "search red shirt", text: "results i1 15 i2 25 i3 10", key: "q=red+shirt", dist: 3},
			{action: "click i1", text: "item i1 red shirt 15 size s m", key: "q=red+shirt/i1", dist: 2},
			{action: "select s", text: "item i1 red shirt 15 size s m chosen s", key: "q=red+shirt/i1/s", dist: 2},
			{action: "buy", text: "bought i1", key: "q=red+shirt/i1/s", done: true, dist: envs.DistDead},
		}},
		{"a bag needs no size", bags(), 12, []step{
			{action: "search black", text: "results i1 35 i2 25 i4 20", key: "q=black", dist: 2},
			{action: "click i2", text: "item i2 black bag 25", key: "q=black/i2", dist: 1},
			inv("select m", "item i2 black bag 25", "q=black/i2", 1),
			{action: "buy", text: "bought i2", key: "q=black/i2", outcome: 1, done: true, success: true, dist: 0},
		}},
		{"truncated after max turns", shirts(), 2, []step{
			{action: "search red", text: "results i1 15 i2 25 i3 10", key: "q=red", dist: 3},
			{action: "click i1", text: "item i1 red shirt 15 size s m", key: "q=red/i1", trunc: true, dist: 2},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.MaxTurns = tc.turns
			s := newFromCatalog(tc.cat, cfg)
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
		mustReset(t, s, 0)
		var obs envs.Observation
		for _, a := range p {
			obs = mustStep(t, s, a)
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
			mustReset(t, s, seed)
			shops = append(shops, s)
		}
	}
	for _, s := range shops {
		s.cfg.MaxTurns = 1 << 30
		mustReset(t, s, s.catalogSeed)
		type node struct {
			env  *Shop
			dist int
		}
		nodes := map[string]node{s.StateKey(): {s, s.distance()}}
		preds := map[string][]string{}
		label := map[string]int{}
		var frontier []string
		queue := []string{s.StateKey()}
		for len(queue) > 0 {
			k := queue[0]
			queue = queue[1:]
			for _, a := range allActions() {
				c := nodes[k].env.Clone().(*Shop)
				obs := mustStep(t, c, a)
				switch {
				case obs.Info.Invalid:
				case obs.Info.Success:
					if _, ok := label[k]; !ok {
						label[k] = 1
						frontier = append(frontier, k)
					}
				case obs.Done:
				default:
					n := c.StateKey()
					preds[n] = append(preds[n], k)
					if _, seen := nodes[n]; !seen {
						nodes[n] = node{c, obs.Info.Distance}
						queue = append(queue, n)
					}
				}
			}
		}
		for len(frontier) > 0 {
			k := frontier[0]
			frontier = frontier[1:]
			for _, p := range preds[k] {
				if _, ok := label[p]; !ok {
					label[p] = label[k] + 1
					frontier = append(frontier, p)
				}
			}
		}
		for k, n := range nodes {
			if want, ok := label[k]; !ok || n.dist != want {
				t.Fatalf("page %q: Info.Distance %d, BFS %d (%v)\n%s", k, n.dist, want, ok, s.Render())
			}
		}
	}
}

func TestClone(t *testing.T) {
	s := newFromCatalog(shirts(), DefaultConfig())
	mustReset(t, s, 0)
	mustStep(t, s, "search red shirt")
	c := s.Clone().(*Shop)
	mustStep(t, c, "click i1")
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
	mustReset(t, b, 0)
	mustStep(t, b, "search black bag")
	mustStep(t, b, "click i1")
	mustStep(t, b, "buy")
	if _, err := b.Step("back"); err == nil {
		t.Error("Step after the episode ended: no error")
	}
}

func TestRender(t *testing.T) {
	s := newFromCatalog(bags(), DefaultConfig())
	mustReset(t, s, 0)
	mustStep(t, s, "search black")
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
