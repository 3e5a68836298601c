package trainer

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/rollout"
)

// creditKeys are every key credit_diagnostics may add to a train line.
var creditKeys = []string{KeyDecisionShare, KeyDecisionSteps, KeyWastedSuccess, KeySuccessSteps, KeyWastedFail, KeyFailSteps, KeyParamChange}

// creditEp builds an episode of task through the state keys ks[0] … ks[T] with outcome R (a success
// when R > 0); the env's distances are start (the first state's) and ds (after each step), none
// recorded when start is 0.
func creditEp(task int, R float64, start int, ds []int, ks ...string) rollout.Trajectory {
	t := rollout.Trajectory{Task: task, Outcome: R, Success: R > 0, StartDistance: start}
	for k := 0; k+1 < len(ks); k++ {
		s := rollout.Step{Key: ks[k], NextKey: ks[k+1], Action: "to " + ks[k+1], Distance: -1}
		if ds != nil {
			s.Distance = ds[k]
		}
		t.Steps = append(t.Steps, s)
	}
	return t
}

// Hand-computed diagnostics. Task 0 is a corridor C – A – B – G with distances 3, 2, 1, 0 and a
// dead end X (-2) off C:
//
//	success A→B→G            distances 2 → 1 → 0:          0 of 2 steps wasted
//	success A→C→A→B→G        distances 2 → 3 → 2 → 1 → 0:  1 of 4 wasted (A→C)
//	failure A→C→X            distances 2 → 3 → dead:       2 of 2 wasted
//
// so est/wasted_success = 1/6 of 6 steps and est/wasted_fail = 2/2 of 2. Its graph (last steps
// routed to the sinks ⊥(1), ⊥(0); γ = 0.99, count weighting): V(B) = γ, V(C) = ½γ·V(A) (C left
// once to A, once to ⊥(0)), V(A) = ½γ·V(B) + ½γ·V(C) = ½γ²/(1 − ¼γ²) ≈ 0.653. A's four
// instances lead to γ·V(B) ≈ 0.980 and γ·V(C) ≈ 0.320: all four count; B's two both lead to
// γ·1: none counts; C's two lead to γ·V(A) ≈ 0.647 and 0: both count. 6 of 8 steps.
// Task 1 records no distances (StartDistance 0): two identical successes a→b→g, 0 of 4 decision
// steps, no detours; its faulted episode counts nowhere. Over the batch: 6 of 12 = 0.5.
func TestCreditDiagnosticsHandBuilt(t *testing.T) {
	faulted := creditEp(1, 0, 5, []int{6, 7}, "a", "c", "x")
	faulted.Err = "env fault"
	b := &rollout.Batch{Tasks: 2, Trajs: []rollout.Trajectory{
		creditEp(0, 1, 2, []int{1, 0}, "A", "B", "G"),
		creditEp(0, 1, 2, []int{3, 2, 1, 0}, "A", "C", "A", "B", "G"),
		creditEp(0, 0, 2, []int{3, -2}, "A", "C", "X"),
		creditEp(1, 1, 0, nil, "a", "b", "g"),
		creditEp(1, 1, 0, nil, "a", "b", "g"),
		faulted,
	}}
	got, err := creditDiagnostics(b)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		KeyDecisionShare: 0.5, KeyDecisionSteps: 12,
		KeyWastedSuccess: 1.0 / 6, KeySuccessSteps: 6,
		KeyWastedFail: 1, KeyFailSteps: 2,
	}
	if len(got) != len(want) {
		t.Errorf("keys %v, want %v", got, want)
	}
	for k, w := range want {
		if v, ok := got[k]; !ok || math.Abs(v-w) > 1e-12 {
			t.Errorf("%s = %v (present %v), want %v", k, v, ok, w)
		}
	}

	// Without distances the wasted shares and their counts are left out, not written as 0.
	noDist := &rollout.Batch{Tasks: 1, Trajs: b.Trajs[3:5]}
	for i := range noDist.Trajs {
		noDist.Trajs[i].Task = 0
	}
	got, err = creditDiagnostics(noDist)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[KeyDecisionShare] != 0 || got[KeyDecisionSteps] != 4 {
		t.Errorf("no distances: %v, want only %s = 0 and %s = 4", got, KeyDecisionShare, KeyDecisionSteps)
	}

	// Successes only (A→B→G wastes 0 of 2, A→C→A→B→G 1 of 4): no failure keys.
	succ := &rollout.Batch{Tasks: 1, Trajs: b.Trajs[:2]}
	got, err = creditDiagnostics(succ)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got[KeyWastedFail]; ok || got[KeyWastedSuccess] != 1.0/6 || got[KeySuccessSteps] != 6 {
		t.Errorf("successes only: %v, want %s = 1/6 of 6 and no %s", got, KeyWastedSuccess, KeyWastedFail)
	}
}

// credit_diagnostics: true adds its keys to every train line and changes nothing else: every
// other key of every line (train and eval) is byte-identical to the run without it, so the
// diagnostics disturb no random stream; and two runs with it write the same file.
func TestCreditDiagnosticsRun(t *testing.T) {
	_, off := runTiny(t, t.TempDir())
	_, on := runTiny(t, t.TempDir(), "credit_diagnostics=true")
	_, again := runTiny(t, t.TempDir(), "credit_diagnostics=true")
	if !bytes.Equal(on, again) {
		t.Fatalf("two runs with credit_diagnostics differ:\n%s\n---\n%s", on, again)
	}
	offLines := strings.Split(strings.TrimSpace(string(off)), "\n")
	onLines := strings.Split(strings.TrimSpace(string(on)), "\n")
	if len(offLines) != len(onLines) {
		t.Fatalf("%d lines with credit_diagnostics, %d without", len(onLines), len(offLines))
	}
	train, withFail := 0, 0
	for i := range onLines {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(onLines[i]), &m); err != nil {
			t.Fatal(err)
		}
		if string(m["type"]) == `"train"` {
			train++
			var change float64
			if err := json.Unmarshal(m[KeyParamChange], &change); err != nil || !(change > 0 && change < 1) {
				t.Errorf("train line %d: %s = %s; want a relative change in (0, 1)", i+1, KeyParamChange, m[KeyParamChange])
			}
			for _, k := range []string{KeyDecisionShare, KeyDecisionSteps} {
				if _, ok := m[k]; !ok {
					t.Errorf("train line %d lacks %s: %s", i+1, k, onLines[i])
				}
			}
			for _, pair := range [][2]string{{KeyWastedSuccess, KeySuccessSteps}, {KeyWastedFail, KeyFailSteps}} {
				_, share := m[pair[0]]
				_, steps := m[pair[1]]
				if share != steps {
					t.Errorf("train line %d has one of %s and %s without the other: %s", i+1, pair[0], pair[1], onLines[i])
				}
				if string(m[pair[1]]) == "0" {
					t.Errorf("train line %d writes %s = 0: %s", i+1, pair[1], onLines[i])
				}
			}
			if _, ok := m[KeyWastedFail]; ok {
				withFail++
			}
		}
		for _, k := range creditKeys {
			delete(m, k)
		}
		rest, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if string(rest) != offLines[i] {
			t.Errorf("line %d differs beyond the credit keys:\n on: %s\noff: %s", i+1, rest, offLines[i])
		}
	}
	if train != 3 || withFail == 0 {
		t.Errorf("%d train lines (want 3), %d with %s (the maze records distances: want some)", train, withFail, KeyWastedFail)
	}
	if strings.Contains(string(off), "decision_share") {
		t.Error("credit_diagnostics is off by default, but the run wrote decision_share")
	}
}

// paramChange by hand: before (3, 4) and (0), after (3, 4.5) and (1.2): ‖Δ‖ = √(0.25 + 1.44) =
// 1.3, ‖before‖ = 5, so 0.26; all-zero weights give 0 rather than a division by zero.
func TestParamChange(t *testing.T) {
	got := paramChange([][]float32{{3, 4}, {0}}, [][]float32{{3, 4.5}, {1.2}})
	if math.Abs(got-0.26) > 1e-7 {
		t.Errorf("paramChange = %.9f, want 0.26", got)
	}
	if z := paramChange([][]float32{{0}}, [][]float32{{1}}); z != 0 {
		t.Errorf("paramChange from zeros = %g, want 0", z)
	}
}
