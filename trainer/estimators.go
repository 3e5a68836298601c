package trainer

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/graft"
	"github.com/graftrl/graftrl/grpo"
	"github.com/graftrl/graftrl/rollout"
)

// Estimator turns a batch of trajectories into one advantage per step, plus named diagnostics.
type Estimator interface {
	Estimate(b *rollout.Batch) (rollout.Advantages, rollout.Diagnostics)
}

// estimatorSpec registers an estimator: its options (defaults filled in) and its constructor.
type estimatorSpec struct {
	help     string
	defaults func() any                        // pointer to an options struct holding the defaults
	build    func(opts any) (Estimator, error) // opts is what defaults returned, decoded
	// groupRelative marks an estimator whose advantages compare a task's N rollouts with each
	// other: with tasks.group_size 1 it has nothing to compare and gives no signal.
	groupRelative bool
}

// estimators is the registry of advantage estimators. Adding one is one file and one line here.
var estimators = map[string]estimatorSpec{
	"grpo": {"trajectory-level group-normalised outcome (ALGORITHMS.md §1)",
		func() any { o := grpo.DefaultOptions(); return &o },
		func(o any) (Estimator, error) { return grpo.New(*o.(*grpo.Options)) }, true},
	"drgrpo": {"GRPO without the division by the group std (Dr.GRPO)",
		func() any { o := grpo.DefaultOptions(); return &o },
		func(o any) (Estimator, error) { return grpo.NewDrGRPO(*o.(*grpo.Options)) }, true},
	"gigpo": {"episode term plus anchor-state step groups (GiGPO, ALGORITHMS.md §2)",
		func() any { o := grpo.DefaultGiGPOOptions(); return &o },
		func(o any) (Estimator, error) { return grpo.NewGiGPO(*o.(*grpo.GiGPOOptions)) }, true},
	"graphgpo": {"shortest path to the goal on the trajectory graph (GraphGPO, ALGORITHMS.md §3)",
		func() any { o := graft.DefaultGraphGPOOptions(); return &o },
		func(o any) (Estimator, error) { return graft.NewGraphGPO(*o.(*graft.GraphGPOOptions)) }, true},
	"graft": {"Bellman expectation on the trajectory graph (GRAFT, ALGORITHMS.md §4)",
		func() any { o := graft.DefaultOptions(); return &o },
		func(o any) (Estimator, error) { return graft.New(*o.(*graft.Options)) }, false},
}

// EstimatorNames lists the registered estimators, sorted.
func EstimatorNames() []string {
	names := make([]string, 0, len(estimators))
	for n := range estimators {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// GroupRelative lists the estimators that need tasks.group_size ≥ 2: their advantages compare a
// task's rollouts with each other (grpo, drgrpo, gigpo, graphgpo).
func GroupRelative() []string {
	var names []string
	for _, n := range EstimatorNames() {
		if estimators[n].groupRelative {
			names = append(names, n)
		}
	}
	return names
}

// EstimatorHelp returns the one-line description of an estimator.
func EstimatorHelp(name string) string { return estimators[name].help }

// NewEstimator builds the named estimator from its config options (the estimator section without
// name). Unknown names, unknown keys and bad values are errors naming the key and what is allowed.
func NewEstimator(name string, options map[string]any) (Estimator, error) {
	spec, ok := estimators[name]
	if !ok {
		return nil, fmt.Errorf("estimator.name: unknown estimator %q (allowed: %s)", name, strings.Join(EstimatorNames(), ", "))
	}
	opts := spec.defaults()
	if err := envs.Options(options).Decode(name, opts); err != nil {
		var oe *envs.OptionError
		if errors.As(err, &oe) {
			if oe.Reason == "" {
				return nil, fmt.Errorf("estimator %s: unknown option %q (allowed: %s)", name, oe.Key, oe.Allowed)
			}
			return nil, fmt.Errorf("estimator %s: option %q: %v %s (allowed %s)", name, oe.Key, oe.Value, oe.Reason, oe.Allowed)
		}
		return nil, fmt.Errorf("estimator %s: %w", name, err)
	}
	est, err := spec.build(opts)
	if err != nil {
		return nil, fmt.Errorf("estimator.%w", err)
	}
	return est, nil
}
