package envtest

import (
	"testing"

	"github.com/graftrl/graftrl/envs"
)

// Oracle is an independent check of Info.Distance on a deterministic env: it explores every state
// reachable from start by stepping clones with the actions, then labels each state with its number
// of steps to success (StepsToSuccess) over the explored graph. A step that ends the episode without
// success leads nowhere. It returns, for every explored state key, the label (-1 where success cannot
// be reached) and Info.Distance on entering the state (startDist for start). start must implement
// envs.Cloner, its state keys must tell its states apart, and its step cap must not cut the search
// short.
func Oracle(t *testing.T, start envs.Env, startDist int, actions []string) map[string][2]int {
	t.Helper()
	type node struct {
		env  envs.Env
		dist int // Info.Distance on entering the state
	}
	nodes := map[string]node{start.StateKey(): {start, startDist}}
	preds := map[string][]string{}
	var solvedFrom []string
	queue := []string{start.StateKey()}
	for len(queue) > 0 {
		k := queue[0]
		queue = queue[1:]
		for _, a := range actions {
			c := nodes[k].env.(envs.Cloner).Clone()
			obs := MustStep(t, c, a)
			switch {
			case obs.Info.Invalid:
				continue
			case obs.Info.Success:
				solvedFrom = append(solvedFrom, k)
				continue
			case obs.Done:
				continue
			}
			nk := c.StateKey()
			preds[nk] = append(preds[nk], k)
			if _, seen := nodes[nk]; !seen {
				nodes[nk] = node{c, obs.Info.Distance}
				queue = append(queue, nk)
			}
		}
	}
	label := StepsToSuccess(preds, solvedFrom)
	out := map[string][2]int{}
	for k, n := range nodes {
		l, ok := label[k]
		if !ok {
			l = -1
		}
		out[k] = [2]int{l, n.dist}
	}
	return out
}

// StepsToSuccess labels every state from which success can be reached with its least number of
// steps to success, by a breadth-first search backwards over preds (the states one step before each
// state): 1 for the states of solvedFrom, from which one step succeeds, one more for each step
// before. States without a label cannot reach success.
func StepsToSuccess[S comparable](preds map[S][]S, solvedFrom []S) map[S]int {
	label := map[S]int{}
	var queue []S
	for _, s := range solvedFrom {
		if _, ok := label[s]; !ok {
			label[s] = 1
			queue = append(queue, s)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, p := range preds[s] {
			if _, ok := label[p]; !ok {
				label[p] = label[s] + 1
				queue = append(queue, p)
			}
		}
	}
	return label
}
