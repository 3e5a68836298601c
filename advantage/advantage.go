// Package advantage is the registry of advantage estimators: each by name, with its options and
// their defaults, its one-line help and its constructor (the estimators themselves live in grpo
// and graft). A config's estimator section builds one with New.
package advantage

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/graftrl/graftrl/config/strict"
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

// estimators is the registry. Adding an estimator is one file in grpo or graft and one line here.
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

// Names lists the registered estimators, sorted.
func Names() []string {
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
	for _, n := range Names() {
		if estimators[n].groupRelative {
			names = append(names, n)
		}
	}
	return names
}

// Help returns the one-line description of an estimator.
func Help(name string) string { return estimators[name].help }

// New builds the named estimator from its config options (the estimator section without name),
// decoded strictly (config/strict) over the estimator's defaults. Unknown names, unknown keys and
// bad values are errors naming the key and what is allowed.
func New(name string, options map[string]any) (Estimator, error) {
	spec, ok := estimators[name]
	if !ok {
		return nil, fmt.Errorf("estimator.name: unknown estimator %q (allowed: %s)", name, strings.Join(Names(), ", "))
	}
	opts := spec.defaults()
	if err := strict.DecodeMap(options, opts); err != nil {
		var se *strict.Error
		if !errors.As(err, &se) {
			return nil, fmt.Errorf("estimator %s: %w", name, err)
		}
		key, _, _ := strings.Cut(se.Key, ".")
		if se.Unknown {
			return nil, fmt.Errorf("estimator %s: unknown option %q (allowed: %s)", name, key, strings.Join(se.Allowed, ", "))
		}
		return nil, fmt.Errorf("estimator %s: option %q: %v has the wrong type (allowed %s)", name, key, options[key], strict.Words(se.Type))
	}
	est, err := spec.build(opts)
	if err != nil {
		return nil, fmt.Errorf("estimator.%w", err)
	}
	return est, nil
}
