package graft

import (
	"math"
	"testing"

	"github.com/graftrl/graftrl/rollout"
)

// ep builds a trajectory of task through the state keys ks[0] … ks[T] (T steps) with outcome R,
// a success when R > 0. Step t's action is "to "+ks[t+1]. The last key is the real final state;
// GRAFT routes that step to ⊥(R) instead.
func ep(task int, R float64, ks ...string) rollout.Trajectory {
	t := rollout.Trajectory{Task: task, Outcome: R, Success: R > 0}
	for k := 0; k+1 < len(ks); k++ {
		t.Steps = append(t.Steps, rollout.Step{Key: ks[k], NextKey: ks[k+1], Action: "to " + ks[k+1]})
	}
	return t
}

// cut marks t as truncated by the step cap: a failure with outcome 0.
func cut(t rollout.Trajectory) rollout.Trajectory {
	t.Truncated, t.Success, t.Outcome = true, false, 0
	return t
}

// pen puts the per-step reward r on step k of t.
func pen(t rollout.Trajectory, k int, r float64) rollout.Trajectory {
	t.Steps = append([]rollout.Step(nil), t.Steps...)
	t.Steps[k].Reward, t.Steps[k].Invalid = r, r < 0
	return t
}

// act renames the action of step k of t.
func act(t rollout.Trajectory, k int, a string) rollout.Trajectory {
	t.Steps = append([]rollout.Step(nil), t.Steps...)
	t.Steps[k].Action = a
	return t
}

func batch(tasks int, ts ...rollout.Trajectory) *rollout.Batch {
	return &rollout.Batch{Tasks: tasks, Trajs: ts}
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// checkAdv compares advantages with want (one row per trajectory) within tol.
func checkAdv(t *testing.T, got rollout.Advantages, want [][]float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d trajectories, want %d", len(got), len(want))
	}
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("trajectory %d: got %d steps, want %d", i, len(got[i]), len(want[i]))
		}
		for k := range want[i] {
			if !near(got[i][k], want[i][k], tol) {
				t.Errorf("A[%d][%d] = %.10g, want %.10g (±%g)", i, k, got[i][k], want[i][k], tol)
			}
		}
	}
}

// handOpts are the options of the hand-computed tests: γ = 0.9 (round numbers), the raw TD
// advantage, a tolerance far below the test's, and an ε that does not blur ±1.
func handOpts(mod func(*Options)) Options {
	o := DefaultOptions()
	o.Gamma, o.Mode, o.Normalize, o.Eps, o.Tol = 0.9, ModeTD, false, 1e-12, 1e-14
	if mod != nil {
		mod(&o)
	}
	return o
}

func mustGRAFT(t testing.TB, o Options) *GRAFT {
	t.Helper()
	x, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// solved runs GRAFT on one task and returns the workspace (graph, V, per-instance advantages).
func solved(t testing.TB, b *rollout.Batch, task int, o Options) (*workspace, taskStats) {
	t.Helper()
	x := mustGRAFT(t, o)
	ws := newWorkspace()
	st := x.estimateTask(ws, b, b.Groups()[task], rollout.NewAdvantages(b))
	return ws, st
}

// values returns V by state key, and by "⊥(R)" for sinks.
func values(t testing.TB, b *rollout.Batch, o Options) map[string]float64 {
	t.Helper()
	ws, _ := solved(t, b, 0, o)
	v := map[string]float64{}
	for u, k := range ws.g.key {
		if ws.g.kind[u] == kindSink {
			k = "⊥(" + num(ws.g.fixed[u]) + ")"
		}
		v[k] = ws.V[u]
	}
	return v
}

func checkValues(t *testing.T, got, want map[string]float64, tol float64) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("V(%s) missing", k)
			continue
		}
		if !near(g, w, tol) {
			t.Errorf("V(%s) = %.10g, want %.10g", k, g, w)
		}
	}
}
