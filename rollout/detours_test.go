package rollout

import "testing"

// Hand-counted: a success 3 → 2 → 2 (invalid) → 3 (back) → 2 → 1 → 0 wastes 2 of 6 steps; a
// failure 3 → 2 → dead wastes 1 of 2; a failure 2 → 1 → dead → dead → dead (an env that goes
// on after success became unreachable) wastes 3 of 4, the steps from a dead state included; a
// failure from an unknown start and a faulted episode count
// nothing; a step into an unknown distance is skipped, and so is the one after it.
func TestCountDetours(t *testing.T) {
	walk := func(start int, success bool, ds ...int) Trajectory {
		tr := Trajectory{StartDistance: start, Success: success}
		for _, d := range ds {
			tr.Steps = append(tr.Steps, Step{Distance: d})
		}
		return tr
	}
	faulted := walk(3, false, 4, 5)
	faulted.Err = "env fault"
	b := &Batch{Tasks: 1, Trajs: []Trajectory{
		walk(3, true, 2, 2, 3, 2, 1, 0),
		walk(3, false, 2, -2),
		walk(2, false, 1, -2, -2, -2),
		walk(0, false, 4, 5),
		faulted,
		walk(4, false, 3, -1, 2, 3),
	}}
	got := CountDetours(b)
	want := Detours{SuccessSteps: 6, SuccessWasted: 2, FailSteps: 2 + 4 + 2, FailWasted: 1 + 3 + 1}
	if got != want {
		t.Errorf("CountDetours = %+v, want %+v", got, want)
	}
	if got.SuccessShare() != 2.0/6 || got.FailShare() != 5.0/8 {
		t.Errorf("shares %g, %g; want 1/3, 5/8", got.SuccessShare(), got.FailShare())
	}
	if (Detours{}).SuccessShare() != 0 {
		t.Error("share of no steps is not 0")
	}
}
