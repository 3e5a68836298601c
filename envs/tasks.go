package envs

import "fmt"

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

// ParseSplit checks a split name from a config or a flag.
func ParseSplit(s string) (Split, error) {
	switch Split(s) {
	case Train, Eval:
		return Split(s), nil
	}
	return "", fmt.Errorf("envs: unknown split %q (allowed: %s, %s)", s, Train, Eval)
}

// TaskSeeds returns the n task seeds of a panel, fixed by panelSeed so that every method of a
// comparison sees the same tasks. Train seeds are panelSeed*1_000_000 + i and eval seeds
// panelSeed*1_000_000 + 500_000 + i for i in [0, n); the two panels of one panel seed are therefore
// disjoint as long as n <= 500_000, and panels of different panel seeds are disjoint under the same
// bound. The caller validates n; n <= 0 gives an empty panel. An unknown split is a programming
// error (configs go through ParseSplit) and panics.
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
