package shop

import (
	"fmt"
	"strings"

	"github.com/graftrl/graftrl/envs"
)

// searchActions are the canonical texts of every query: each color or category alone, then with each
// later word, in vocabulary order ("search red", "search red blue", ..., "search red shirt", ...). A
// query is a set of words, so these 55 texts cover every search. Never written after init.
var searchActions = func() []string {
	words := strings.Fields(colorWords + " " + categoryWords)
	var as []string
	for i, w := range words {
		as = append(as, "search "+w)
		for _, v := range words[i+1:] {
			as = append(as, "search "+w+" "+v)
		}
	}
	return as
}()

// ValidActions returns the actions allowed on the current page (see envs.ValidActioner): on a result
// page a click on each listed item, in id order, and back; on an item page the select of each size
// the item comes in, back, and buy once it is allowed; then, on every page, the 55 searches of
// searchActions.
func (s *Shop) ValidActions() []string {
	if !s.started || s.over {
		return nil
	}
	var as []string
	switch p := s.page; p.kind {
	case resultsPage:
		ids, n := s.results(p.query, s.cfg.Results)
		for _, id := range ids[:n] {
			as = append(as, "click "+nth(itemWords, int(id)))
		}
		as = append(as, "back")
	case itemPage:
		for z := range numSizes {
			if s.items[p.item].sizes&(1<<z) != 0 {
				as = append(as, "select "+nth(sizeWords, z))
			}
		}
		as = append(as, "back")
		if _, ok := s.next(action{verb: buy}); ok {
			as = append(as, "buy")
		}
	}
	return append(as, searchActions...)
}

// listedTarget returns the first item on the result page of a query that matches the goal, or -1.
func (s *Shop) listedTarget(query uint16) int {
	ids, n := s.results(query, s.cfg.Results)
	for _, id := range ids[:n] {
		if s.correct(int(id)) {
			return int(id)
		}
	}
	return -1
}

// ExpertAction is a scripted shopper that knows the catalogue (see envs.Expert): it searches the
// goal's "<color> <category>", clicks the listed item that matches the goal (never a look-alike),
// selects the goal's size unless it is a bag or the size is chosen, and buys: search, click, select,
// buy, the shortest way. From anywhere else it takes the shortest way back: back from a wrong item
// page whose result page lists the target, otherwise the goal's search. It relies, like
// Info.Distance, on the generator's promise that the goal's query lists the target.
func (s *Shop) ExpertAction() (string, error) {
	if !s.started || s.over {
		return "", fmt.Errorf("shop: %w", envs.ErrNoAction)
	}
	switch p := s.page; p.kind {
	case itemPage:
		switch {
		case !s.correct(int(p.item)):
			if s.listedTarget(p.query) >= 0 {
				return "back", nil
			}
		case s.goalSize >= 0 && p.chosen != s.goalSize:
			return "select " + nth(sizeWords, int(s.goalSize)), nil
		default:
			return "buy", nil
		}
	case resultsPage:
		if i := s.listedTarget(p.query); i >= 0 {
			return "click " + nth(itemWords, i), nil
		}
	}
	return "search " + nth(colorWords, int(s.goalColor)) + " " + nth(categoryWords, int(s.goalCategory)), nil
}
