// Package shop is the web-shop environment of graftrl, a small WebShop: find and buy the product the
// instruction describes by searching, opening result pages and item pages, choosing a size and buying,
// one action per turn. Result pages show only item ids and prices, and look-alike items (same category
// and color, but too expensive or without the size) must be told apart by opening them, so the task
// rewards inspecting before buying.
//
// Tasks. The catalogue of a task seed is drawn with a PCG generator seeded by the seed: the goal (a
// category, a color, a size unless the category is bag, a price bound of 20 or 30), then `items`
// products: exactly one matching the goal, 1..results-1 look-alikes, the others of another category
// or color, shuffled and numbered i1, i2, ... The query "<color> <category>" lists the target on its
// single page, so the optimal solution is search, click, select, buy (4 actions; 3 for a bag).
//
// Text. Words are separated by single spaces.
//
//	instruction   find <color> <category> [size <s>] under <p>    find red shirt size m under 20
//	home page     home                                           home
//	result page   results <id> <price> ... | results none        results i2 15 i5 25
//	item page     item <id> <color> <category> <price> [size <s>...] [chosen <s>]
//	                                                             item i5 red shirt 15 size s m chosen m
//	invalid       invalid <page>                                 invalid home
//	bought        bought <id>                                    bought i5
//
// A result page lists at most `results` items matching every word of the query, in id order, with
// their prices. An item page gives the item's attributes, the sizes it comes in (none for a bag) and
// the size chosen so far. Observations are 1..12 words (7 on average); an episode at the default cap
// (12 turns) takes about 150 tokens, an optimal one about 50.
//
// Actions, case-insensitive, words separated by any ASCII white space, at most three words:
//
//	search <w> [<w>]   from any page: the result page of the query; each word is a color or a category
//	                   (the query is a set: "search shirt red" is "search red shirt")
//	click <id>         on a result page: the item page of a listed item
//	select <s>         on an item page: choose one of the item's sizes (replacing an earlier choice)
//	back               from an item page to its result page, from a result page to home
//	buy                on an item page, once a size is chosen (bags need none): ends the episode
//
// Anything else, or an action not allowed on the current page, is an invalid action: invalid_penalty
// as the step reward, no change of state, Info.Invalid set. Buy ends the episode (Done) with outcome
// success_reward and Info.Success when the item has the goal's category and color, a price below the
// bound and the goal's size is chosen; otherwise with outcome 0 and Info.Distance = envs.DistDead.
// After max_turns steps (invalid ones included) the episode is truncated. Info.Distance is the optimal
// number of actions left knowing the catalogue: 1 on the target's page with the size chosen (or a
// bag), 2 there without it, 1 more on a result page listing the target, 1 more anywhere else.
//
// The state is the page, not the history: "home"; a result page "q=<words>" (the query in vocabulary
// order, joined by '+'); an item page "q=<words>/<id>" reached from that query (back returns to it);
// with a chosen size "q=<words>/<id>/<s>". Leaving an item page forgets the chosen size.
//
// Vocabulary (42 words, the same for every option): search, click, select, back, buy; the colors red,
// blue, green, black, white; the categories shirt, shoes, hat, bag, pants; the sizes s, m, l; the
// prices 10, 15, 20, 25, 30, 35; the ids i1..i8; home, results, none, item, size, chosen, bought,
// invalid, find, under.
//
// Options (see Config): items (default 6), results (3), max_turns (12), invalid_penalty (-0.1),
// success_reward (1).
//
// Import the package for its side effect of registering "shop" (or import envs/all).
package shop

import (
	"errors"
	"strings"

	"github.com/graftrl/graftrl/envs"
)

// vocabulary lists every word the env emits or accepts, in a fixed order; actionWords those actions use.
const (
	actionWords = "search click select back buy " + colorWords + " " + categoryWords + " " + sizeWords + " " + itemWords
	vocabulary  = "search click select back buy " + colorWords + " " + categoryWords + " " + sizeWords + " " +
		priceWords + " " + itemWords + " home results none item size chosen bought invalid find under"
)

// Page kinds.
const (
	home int8 = iota
	resultsPage
	itemPage
)

// page is the state of the shop: the page shown, the query it came from, the item and the chosen size
// (-1 for none). It is a comparable value.
type page struct {
	kind   int8
	query  uint16
	item   int8
	chosen int8
}

// verb is the first word of an action.
type verb int8

const (
	search verb = iota
	click
	selectSize
	back
	buy
)

// action is a parsed action: the verb and its argument (a query, an item index or a size index).
type action struct {
	verb  verb
	query uint16
	arg   int8
}

// maxActionLen bounds the text of an action; "search white shirt" with some white space is far less.
const maxActionLen = 48

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// parseAction reads an action without allocating: at most three ASCII words, lower-cased into a stack
// buffer. Item ids are checked against the vocabulary (i1..i8), not against the catalogue; whether the
// action is allowed on the current page is decided by the env.
func parseAction(text string) (action, bool) {
	var a action
	if len(text) > maxActionLen {
		return a, false
	}
	var buf [maxActionLen]byte
	var words [3][]byte
	n := 0
	for i := 0; i < len(text); {
		if isSpace(text[i]) {
			i++
			continue
		}
		if n == len(words) {
			return a, false
		}
		start := i
		for ; i < len(text) && !isSpace(text[i]); i++ {
			c := text[i]
			if c >= 0x80 {
				return a, false
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf[i] = c
		}
		words[n] = buf[start:i]
		n++
	}
	if n == 0 {
		return a, false
	}
	switch string(words[0]) {
	case "search":
		a.verb = search
		if n < 2 {
			return a, false
		}
		for _, w := range words[1:n] {
			b := searchBit(string(w))
			if b < 0 {
				return a, false
			}
			a.query |= 1 << b
		}
		return a, true
	case "click":
		a.verb = click
		a.arg = int8(indexOf(itemWords, string(words[1%n])))
	case "select":
		a.verb = selectSize
		a.arg = int8(indexOf(sizeWords, string(words[1%n])))
	case "back":
		return action{verb: back}, n == 1
	case "buy":
		return action{verb: buy}, n == 1
	default:
		return a, false
	}
	return a, n == 2 && a.arg >= 0
}

// searchBit returns the query bit of a search word: colors first, then categories; -1 otherwise.
func searchBit(w string) int {
	if i := indexOf(colorWords, w); i >= 0 {
		return i
	}
	if i := indexOf(categoryWords, w); i >= 0 {
		return numColors + i
	}
	return -1
}

// Shop is one web-shop environment instance (see the package doc). It implements envs.Env,
// envs.Cloner, envs.ValidActioner and envs.Expert; the zero value is not usable, build one with New.
type Shop struct {
	cfg Config
	catalog
	// seeded is set once catalog holds the catalogue of catalogSeed, which Reset then reuses: the
	// rollouts of a group replay the same task.
	seeded      bool
	catalogSeed int64
	// fixed is set for hand-made catalogues, which Reset keeps whatever the seed.
	fixed bool

	page    page
	turn    int
	started bool
	over    bool
	// scratch holds text while it is built; as an array it is copied, not shared, by Clone.
	scratch [96]byte
}

var (
	_ envs.Env           = (*Shop)(nil)
	_ envs.Cloner        = (*Shop)(nil)
	_ envs.ValidActioner = (*Shop)(nil)
	_ envs.Expert        = (*Shop)(nil)
)

// New returns a shop with the given configuration. Reset must be called before Step.
func New(cfg Config) (*Shop, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Shop{cfg: cfg}, nil
}

// newFromCatalog returns a shop on a hand-made catalogue that Reset keeps for every seed. Items of cfg
// is taken from the catalogue; the other options apply as given, unvalidated.
func newFromCatalog(c catalog, cfg Config) *Shop {
	cfg.Items = c.n
	return &Shop{cfg: cfg, catalog: c, fixed: true}
}

// Config returns the configuration of the shop.
func (s *Shop) Config() Config { return s.cfg }

// Reset starts the episode of a task seed on the home page (see the package doc for the instruction).
func (s *Shop) Reset(task int64) (string, envs.Observation, error) {
	if !s.fixed && (!s.seeded || s.catalogSeed != task) {
		s.generate(s.cfg, task)
		s.seeded, s.catalogSeed = true, task
	}
	s.page = page{kind: home, item: -1, chosen: -1}
	s.turn, s.started, s.over = 0, true, false
	obs := envs.Observation{Text: s.text(false), Info: envs.Info{Distance: s.distance()}}
	return s.instruction(), obs, nil
}

// instruction is "find <color> <category> [size <s>] under <p>".
func (s *Shop) instruction() string {
	b := s.scratch[:0]
	b = append(b, "find "...)
	b = append(b, nth(colorWords, int(s.goalColor))...)
	b = append(b, ' ')
	b = append(b, nth(categoryWords, int(s.goalCategory))...)
	if s.goalSize >= 0 {
		b = append(b, " size "...)
		b = append(b, nth(sizeWords, int(s.goalSize))...)
	}
	b = append(b, " under "...)
	b = append(b, nth(priceWords, (s.bound-10)/5)...)
	return string(b)
}

// Step applies one action (see the package doc). Stepping before Reset or after the episode ended
// is a fault of the caller and returns an error.
func (s *Shop) Step(text string) (envs.Observation, error) {
	if !s.started {
		return envs.Observation{}, errors.New("shop: Step before Reset")
	}
	if s.over {
		return envs.Observation{}, errors.New("shop: Step after the episode ended")
	}
	s.turn++
	var obs envs.Observation
	a, ok := parseAction(text)
	next := s.page
	if ok {
		next, ok = s.next(a)
	}
	switch {
	case !ok:
		obs.Reward = s.cfg.InvalidPenalty
		obs.Info.Invalid = true
		obs.Text = s.text(true)
		obs.Info.Distance = s.distance()
	case a.verb == buy:
		obs.Done = true
		obs.Text = "bought " + nth(itemWords, int(s.page.item))
		if s.boughtRight() {
			obs.Outcome = s.cfg.SuccessReward
			obs.Info.Success = true
		} else {
			obs.Info.Distance = envs.DistDead
		}
	default:
		s.page = next
		obs.Text = s.text(false)
		obs.Info.Distance = s.distance()
	}
	// A buy on the last turn is a termination, not a truncation.
	obs.Truncated = !obs.Done && s.turn >= s.cfg.MaxTurns
	s.over = obs.Over()
	return obs, nil
}

// next returns the page an action leads to, or ok=false when the action is not allowed on the
// current page. Buy keeps the page (the env ends the episode).
func (s *Shop) next(a action) (page, bool) {
	p := s.page
	switch a.verb {
	case search:
		return page{kind: resultsPage, query: a.query, item: -1, chosen: -1}, true
	case click:
		if p.kind != resultsPage || !s.listed(p.query, int(a.arg)) {
			return p, false
		}
		return page{kind: itemPage, query: p.query, item: a.arg, chosen: -1}, true
	case selectSize:
		if p.kind != itemPage || s.items[p.item].sizes&(1<<a.arg) == 0 {
			return p, false
		}
		p.chosen = a.arg
		return p, true
	case back:
		switch p.kind {
		case itemPage:
			return page{kind: resultsPage, query: p.query, item: -1, chosen: -1}, true
		case resultsPage:
			return page{kind: home, item: -1, chosen: -1}, true
		}
		return p, false
	}
	// buy
	return p, p.kind == itemPage && (p.chosen >= 0 || s.items[p.item].sizes == 0)
}

// listed reports whether item i is on the result page of a query.
func (s *Shop) listed(query uint16, i int) bool {
	ids, n := s.results(query, s.cfg.Results)
	for _, id := range ids[:n] {
		if int(id) == i {
			return true
		}
	}
	return false
}

// boughtRight reports whether buying on the current item page succeeds.
func (s *Shop) boughtRight() bool {
	return s.correct(int(s.page.item)) && (s.goalSize < 0 || s.page.chosen == s.goalSize)
}

// distance is Info.Distance of the current page (see the package doc). It relies on the generator's
// promise that the query "<color> <category>" lists a correct item; hand-made catalogues of the tests
// keep it too.
func (s *Shop) distance() int {
	p := s.page
	tail := 2 // click, buy: from a result page listing a correct item
	if s.goalSize >= 0 {
		tail = 3 // click, select, buy
	}
	switch p.kind {
	case itemPage:
		if s.correct(int(p.item)) {
			if s.goalSize < 0 || p.chosen == s.goalSize {
				return 1
			}
			return 2
		}
	case resultsPage:
		if s.listedTarget(p.query) >= 0 {
			return tail
		}
	}
	return 1 + tail
}

// text is the observation of the current page, built in scratch so that it costs one allocation.
func (s *Shop) text(invalid bool) string {
	b := s.scratch[:0]
	if invalid {
		b = append(b, "invalid "...)
	}
	p := s.page
	switch p.kind {
	case home:
		b = append(b, "home"...)
	case resultsPage:
		b = append(b, "results"...)
		ids, n := s.results(p.query, s.cfg.Results)
		if n == 0 {
			b = append(b, " none"...)
		}
		for _, id := range ids[:n] {
			b = append(b, ' ')
			b = append(b, nth(itemWords, int(id))...)
			b = append(b, ' ')
			b = append(b, nth(priceWords, int(s.items[id].price))...)
		}
	case itemPage:
		it := s.items[p.item]
		b = append(b, "item "...)
		b = append(b, nth(itemWords, int(p.item))...)
		b = append(b, ' ')
		b = append(b, nth(colorWords, int(it.color))...)
		b = append(b, ' ')
		b = append(b, nth(categoryWords, int(it.category))...)
		b = append(b, ' ')
		b = append(b, nth(priceWords, int(it.price))...)
		if it.sizes != 0 {
			b = append(b, " size"...)
			for z := range numSizes {
				if it.sizes&(1<<z) != 0 {
					b = append(b, ' ')
					b = append(b, nth(sizeWords, z)...)
				}
			}
		}
		if p.chosen >= 0 {
			b = append(b, " chosen "...)
			b = append(b, nth(sizeWords, int(p.chosen))...)
		}
	}
	return string(b)
}

// StateKey returns the page (see the package doc): "home", "q=red+shirt", "q=red+shirt/i3",
// "q=red+shirt/i3/m".
func (s *Shop) StateKey() string {
	p := s.page
	if p.kind == home {
		return "home"
	}
	b := s.scratch[:0]
	b = append(b, "q="...)
	first := true
	for w := range numColors + numCategories {
		if p.query&(1<<w) == 0 {
			continue
		}
		if !first {
			b = append(b, '+')
		}
		first = false
		if w < numColors {
			b = append(b, nth(colorWords, w)...)
		} else {
			b = append(b, nth(categoryWords, w-numColors)...)
		}
	}
	if p.kind == itemPage {
		b = append(b, '/')
		b = append(b, nth(itemWords, int(p.item))...)
		if p.chosen >= 0 {
			b = append(b, '/')
			b = append(b, nth(sizeWords, int(p.chosen))...)
		}
	}
	return string(b)
}

// Vocabulary returns the words of the env (see the package doc), the same for every option.
func (s *Shop) Vocabulary() []string { return strings.Fields(vocabulary) }

// ActionWords returns the words actions are made of: the verbs, the colors and categories a search
// takes, the item ids and the sizes (see envs.ActionWorder).
func (s *Shop) ActionWords() []string { return strings.Fields(actionWords) }

// MaxTurns returns the step cap.
func (s *Shop) MaxTurns() int { return s.cfg.MaxTurns }

// Clone returns an independent copy of the shop in its current state.
func (s *Shop) Clone() envs.Env {
	c := *s
	return &c
}

// Render describes the task for people: the instruction, the catalogue one item per line (the item
// matching the goal marked '*'), and the current page with its state key. Before the first Reset of a
// generated catalogue it returns "".
func (s *Shop) Render() string {
	if !s.fixed && !s.seeded {
		return ""
	}
	var b strings.Builder
	b.WriteString(s.instruction())
	b.WriteByte('\n')
	for i := range s.n {
		it := s.items[i]
		mark := "  "
		if s.correct(i) {
			mark = "* "
		}
		b.WriteString(mark)
		b.WriteString(nth(itemWords, i))
		b.WriteByte(' ')
		b.WriteString(nth(colorWords, int(it.color)))
		b.WriteByte(' ')
		b.WriteString(nth(categoryWords, int(it.category)))
		b.WriteByte(' ')
		b.WriteString(nth(priceWords, int(it.price)))
		for z := range numSizes {
			if it.sizes&(1<<z) != 0 {
				b.WriteByte(' ')
				b.WriteString(nth(sizeWords, z))
			}
		}
		b.WriteByte('\n')
	}
	if s.started {
		b.WriteString("page ")
		b.WriteString(s.StateKey())
		b.WriteString(": ")
		b.WriteString(s.text(false))
		b.WriteByte('\n')
	}
	return b.String()
}
