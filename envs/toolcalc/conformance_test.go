package toolcalc

import (
	"strconv"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
)

// allCalls lists every well-formed call: each tool with each number word, undo and submit. It covers
// every transition of every task, for the suite's Bellman check.
func allCalls() []string {
	calls := []string{"undo", "submit"}
	for _, op := range []string{"add", "sub", "mul"} {
		for x := 0; x <= MaxValue; x++ {
			calls = append(calls, op+" "+strconv.Itoa(x))
		}
	}
	return calls
}

// suiteOptions are the declarations of toolcalc to the conformance suite.
func suiteOptions() []envtest.Option {
	return []envtest.Option{
		envtest.ActionSet(allCalls()...),
		envtest.Penalty(DefaultConfig(DefaultCalls).InvalidPenalty),
		envtest.Invalid("add", "add x", "mul 7 7", "add 07", "add -3", "add 21", "div 2", "submit now", "undo 1", "add3", "value 4"),
		envtest.MaxVocabulary(40),
	}
}

// TestConformance runs the envs conformance suite, expert checks included, on the default, on every
// undo depth and on the hardest settings.
func TestConformance(t *testing.T) {
	cfgs := map[string]Config{"default": DefaultConfig(DefaultCalls)}
	for u := 0; u <= MaxUndo; u++ {
		c := DefaultConfig(DefaultCalls)
		c.Undo = u
		cfgs["undo"+strconv.Itoa(u)] = c
	}
	hard := DefaultConfig(MaxCalls)
	hard.Operands = MaxOperands
	cfgs["hard"] = hard
	easy := DefaultConfig(1)
	easy.Operands = 1
	cfgs["easy"] = easy
	for name, cfg := range cfgs {
		t.Run(name, func(t *testing.T) {
			envtest.RunWithExpert(t, func() (envs.Env, error) { return New(cfg) }, suiteOptions()...)
		})
	}
}

// FuzzToolCalcStep fuzzes the call parser through the suite's fuzz target.
func FuzzToolCalcStep(f *testing.F) {
	envtest.Fuzz(f, func() (envs.Env, error) { return New(DefaultConfig(DefaultCalls)) }, suiteOptions()...)
}
