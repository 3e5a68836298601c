package advantage_test

import (
	"fmt"
	"strings"

	"github.com/graftrl/graftrl/advantage"
	_ "github.com/graftrl/graftrl/advantage/all"
	"github.com/graftrl/graftrl/rollout"
)

// The estimator registry builds an advantage estimator from a config's estimator section: its name
// and its options, the defaults filling in what is left out. Unknown names and keys are refused,
// naming what is allowed.
func ExampleNew() {
	fmt.Println(strings.Join(advantage.Names(), " "))
	est, err := advantage.New("grpo", map[string]any{"score": "outcome"})
	if err != nil {
		fmt.Println(err)
		return
	}
	// One task, two rollouts: a success (R = 1) and a failure (R = 0). GRPO gives every step of a
	// rollout (R − mean R)/(std R + ε) with the sample std (N − 1, as torch.std): ±0.5/√0.5 = ±0.7071.
	b := &rollout.Batch{Tasks: 1, Trajs: []rollout.Trajectory{
		{Task: 0, Outcome: 1, Success: true, Steps: []rollout.Step{{Key: "S", NextKey: "A"}, {Key: "A", NextKey: "G"}}},
		{Task: 0, Outcome: 0, Steps: []rollout.Step{{Key: "S", NextKey: "T"}}},
	}}
	adv, d := est.Estimate(b)
	fmt.Printf("advantages %.4f, groups %g\n", adv, d["groups"])
	for _, bad := range []struct {
		name string
		opts map[string]any
	}{{"ppo", nil}, {"graft", map[string]any{"gama": 0.9}}} {
		_, err := advantage.New(bad.name, bad.opts)
		fmt.Println(err)
	}
	// Output:
	// drgrpo gigpo graft graphgpo grpo
	// advantages [[0.7071 0.7071] [-0.7071]], groups 1
	// estimator.name: unknown estimator "ppo" (allowed: drgrpo, gigpo, graft, graphgpo, grpo)
	// unknown key "estimator.gama" (allowed under estimator: episode_norm, episode_std, episode_weight, eps, gamma, lambda, mode, normalize, policy_weighting, score, tol, truncation, use_step_rewards)
}
