package shop

import (
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
)

// allActions lists actions that cover every transition of every task: each query of one word and each
// pair (in vocabulary order; other orders lead to the same pages), each click, select, back and buy.
func allActions() []string {
	as := append([]string(nil), searchActions...)
	for _, id := range strings.Fields(itemWords) {
		as = append(as, "click "+id)
	}
	for _, z := range strings.Fields(sizeWords) {
		as = append(as, "select "+z)
	}
	return append(as, "back", "buy")
}

// suiteOptions are the declarations of the shop to the conformance suite.
func suiteOptions() []envtest.Option {
	return []envtest.Option{
		envtest.ActionSet(allActions()...),
		envtest.Penalty(DefaultConfig().InvalidPenalty),
		envtest.Invalid("search", "search m", "search red shirt hat", "search 10", "click", "click red", "click i1 i2",
			"select", "select xl", "back home", "buy now", "find red shirt", "i1"),
		envtest.MaxVocabulary(50),
	}
}

// TestConformance runs the envs conformance suite, expert checks included, on the default shop, the
// smallest and the largest.
func TestConformance(t *testing.T) {
	for name, cfg := range map[string]Config{
		"default": DefaultConfig(),
		"small":   {Items: MinItems, Results: MinResults, MaxTurns: 8, InvalidPenalty: -0.1, SuccessReward: 1},
		"large":   {Items: MaxItems, Results: MaxResults, MaxTurns: 16, InvalidPenalty: -0.1, SuccessReward: 1},
	} {
		t.Run(name, func(t *testing.T) {
			envtest.RunWithExpert(t, func() (envs.Env, error) { return New(cfg) }, suiteOptions()...)
		})
	}
}

// FuzzShopStep fuzzes the action parser through the suite's fuzz target.
func FuzzShopStep(f *testing.F) {
	envtest.Fuzz(f, func() (envs.Env, error) { return New(DefaultConfig()) }, suiteOptions()...)
}
