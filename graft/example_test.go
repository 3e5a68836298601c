package graft_test

import (
	"fmt"

	"github.com/graftrl/graftrl/graft"
	"github.com/graftrl/graftrl/rollout"
)

// One task, three rollouts from the start state S: two reach the door A, where one goes on to the
// goal (R = 1) and one into a trap (R = 0); the third goes to B and into the trap. With γ = 0.9 the
// graph values are V(A) = ½·0.9·1 = 0.45, V(B) = 0 and V(S) = (2·0.9·0.45 + 0.9·0)/3 = 0.27, so the
// TD advantages δ = r + γ·V(v) − V(u) (Eq. 8) are 0.135 on S → A, −0.27 on S → B, ±0.45 on A's two
// steps and 0 on B's. Eq. 11 normalises them over the steps leaving each node: at S (mean 0,
// σ = √0.03645 ≈ 0.1909) to 0.7071, 0.7071 and −1.4142, at A to ±1; B's lone step gets sign(0) = 0.
// Three state nodes carry six steps (merge ratio 2), one of them alone at its node.
func ExampleNew() {
	opts := graft.DefaultOptions()
	opts.Gamma, opts.Mode = 0.9, graft.ModeTD
	est, err := graft.New(opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	step := func(from, to, action string) rollout.Step {
		return rollout.Step{Key: from, NextKey: to, Action: action}
	}
	b := &rollout.Batch{Tasks: 1, Trajs: []rollout.Trajectory{
		{Task: 0, Outcome: 1, Success: true, Steps: []rollout.Step{step("S", "A", "right"), step("A", "G", "right")}},
		{Task: 0, Outcome: 0, Steps: []rollout.Step{step("S", "A", "right"), step("A", "T", "down")}},
		{Task: 0, Outcome: 0, Steps: []rollout.Step{step("S", "B", "down"), step("B", "T", "right")}},
	}}
	adv, d := est.Estimate(b)
	for i, row := range adv {
		fmt.Printf("trajectory %d:", i)
		for _, a := range row {
			fmt.Printf(" %+.4f", a)
		}
		fmt.Println()
	}
	fmt.Printf("nodes %g, merge ratio %g, singleton share %.4f\n", d["nodes"], d["merge_ratio"], d["singleton_share"])
	// Output:
	// trajectory 0: +0.7071 +1.0000
	// trajectory 1: +0.7071 -1.0000
	// trajectory 2: -1.4142 +0.0000
	// nodes 3, merge ratio 2, singleton share 0.1667
}
