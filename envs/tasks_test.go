package envs

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestTaskSeeds(t *testing.T) {
	tests := []struct {
		split     Split
		n         int
		panelSeed int64
		want      []int64
	}{
		{Train, 3, 0, []int64{0, 1, 2}},
		{Eval, 3, 0, []int64{500_000, 500_001, 500_002}},
		{Train, 2, 7, []int64{7_000_000, 7_000_001}},
		{Eval, 2, 7, []int64{7_500_000, 7_500_001}},
		{Train, 1, -1, []int64{-1_000_000}},
		{Train, 0, 7, []int64{}},
		{Eval, -4, 7, []int64{}},
	}
	for _, tc := range tests {
		got := TaskSeeds(tc.split, tc.n, tc.panelSeed)
		if !slices.Equal(got, tc.want) || got == nil {
			t.Errorf("TaskSeeds(%s, %d, %d) = %v, want %v", tc.split, tc.n, tc.panelSeed, got, tc.want)
		}
	}
}

func TestTaskPanelsDisjointAndDeterministic(t *testing.T) {
	const n = 500_000 // the documented bound
	seen := map[int64]string{}
	for _, ps := range []int64{0, 1, 2} {
		for _, split := range []Split{Train, Eval} {
			seeds := TaskSeeds(split, n, ps)
			if !slices.Equal(seeds, TaskSeeds(split, n, ps)) {
				t.Fatalf("panel %s/%d differs between calls", split, ps)
			}
			for _, s := range seeds {
				if prev, dup := seen[s]; dup {
					t.Fatalf("seed %d in panel %s/%d and %s", s, split, ps, prev)
				}
				seen[s] = string(split)
			}
		}
	}
	if len(seen) != 6*n {
		t.Errorf("%d distinct seeds, want %d", len(seen), 6*n)
	}
}

func TestTaskSeedsOfUnknownSplitPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("TaskSeeds of an unknown split did not panic")
		}
	}()
	TaskSeeds("test", 1, 0)
}

// Fresh seeds are reproducible from the stream, fall in their own space, and never in a panel:
// checked against the largest panels the config allows.
func TestFreshTaskSeeds(t *testing.T) {
	open := OpenTaskSeeds(rand.New(rand.NewPCG(1, 2)), 1000)
	if again := OpenTaskSeeds(rand.New(rand.NewPCG(1, 2)), 1000); !slices.Equal(open, again) {
		t.Fatal("open seeds differ for the same stream")
	}
	demo := DemoTaskSeeds(rand.New(rand.NewPCG(1, 2)), 1000)
	for i := range open {
		if seedSpace(open[i]) != "open" || seedSpace(demo[i]) != "demo" {
			t.Fatalf("seeds %d, %d in spaces %q, %q", open[i], demo[i], seedSpace(open[i]), seedSpace(demo[i]))
		}
		if open[i] >= 1<<53 || demo[i] >= 1<<53 {
			t.Fatalf("seed above 2^53: %d %d", open[i], demo[i])
		}
	}
	const maxPanelSeed, maxPanel = 1_000_000_000, 500_000
	for _, s := range []int64{TaskSeeds(Train, maxPanel, maxPanelSeed)[maxPanel-1], TaskSeeds(Eval, maxPanel, maxPanelSeed)[maxPanel-1]} {
		if s >= openBase {
			t.Fatalf("panel seed %d reaches the open space (from %d)", s, int64(openBase))
		}
	}
	if seedSpace(TaskSeeds(Eval, 3, 7)[2]) != "eval" || seedSpace(TaskSeeds(Train, 3, 7)[2]) != "train" || seedSpace(-1) != "" {
		t.Fatal("panel seeds are not named by their space")
	}
}

// seedSpace names the seed space a task seed belongs to: "train", "eval", "open", "demo", or
// "" for a seed outside them all (e.g. negative).
func seedSpace(seed int64) string {
	switch {
	case seed < 0:
		return ""
	case seed >= demoBase && seed < demoBase+freshSize:
		return "demo"
	case seed >= openBase && seed < openBase+freshSize:
		return "open"
	case seed < openBase && seed%panelStride >= evalOffset:
		return string(Eval)
	case seed < openBase:
		return string(Train)
	}
	return ""
}
