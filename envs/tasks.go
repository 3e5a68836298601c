package envs

import (
	"fmt"
	"math/rand/v2"
)

// Split names a task panel: the tasks trained on, or the held-out tasks evaluated on.
type Split string

// The two task panels.
const (
	Train Split = "train"
	Eval  Split = "eval"
)

// panelStride separates the seeds of consecutive panel seeds, and evalOffset the eval panel from the
// train panel within one panel seed. Both are part of the task identity: changing them changes every
// panel of every run.
const (
	panelStride = 1_000_000
	evalOffset  = 500_000
)

// TaskSeeds returns the n task seeds of a panel, fixed by panelSeed so that every method of a
// comparison sees the same tasks. Train seeds are panelSeed*1_000_000 + i and eval seeds
// panelSeed*1_000_000 + 500_000 + i for i in [0, n); the two panels of one panel seed are therefore
// disjoint as long as n <= 500_000, and panels of different panel seeds are disjoint under the same
// bound. The caller validates n; n <= 0 gives an empty panel. An unknown split is a programming
// error (the splits are Train and Eval) and panics.
func TaskSeeds(split Split, n int, panelSeed int64) []int64 {
	base := panelSeed * panelStride
	switch split {
	case Train:
	case Eval:
		base += evalOffset
	default:
		panic(fmt.Sprintf("envs: TaskSeeds of unknown split %q", split))
	}
	seeds := make([]int64, max(n, 0))
	for i := range seeds {
		seeds[i] = base + int64(i)
	}
	return seeds
}

// Seed spaces of tasks drawn fresh instead of taken from a panel. Panel seeds stay below 2^50
// (panel_seed ≤ 10^9, panels ≤ 500 000 tasks), open training seeds lie in [2^51, 2^52) and
// demonstration seeds in [2^52, 2^52 + 2^51): no fresh task is ever in a panel, and every seed is an
// integer that a JSON number holds exactly (remote environments).
const (
	openBase  = 1 << 51
	demoBase  = 1 << 52
	freshSize = 1 << 51
)

// OpenTaskSeeds draws n fresh training task seeds from rng (tasks.train: open): with 2^51 seeds to
// draw from, an iteration's tasks are new tasks, never those of any eval panel.
func OpenTaskSeeds(rng *rand.Rand, n int) []int64 { return freshSeeds(rng, n, openBase) }

// DemoTaskSeeds draws n task seeds for expert demonstrations from rng, disjoint from every panel
// and from open training seeds.
func DemoTaskSeeds(rng *rand.Rand, n int) []int64 { return freshSeeds(rng, n, demoBase) }

func freshSeeds(rng *rand.Rand, n int, base int64) []int64 {
	seeds := make([]int64, max(n, 0))
	for i := range seeds {
		seeds[i] = base + rng.Int64N(freshSize)
	}
	return seeds
}
