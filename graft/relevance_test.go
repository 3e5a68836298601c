package graft

import "testing"

// Hand-counted shares. Task 0: two successes s0→s1→goal and one failure s0→s2→dead end. At s0
// the three instances lead to V(s1) = γ·1 and V(s2) = γ·0: they differ, so its 3 steps count;
// s1 is left twice, both to ⊥(1): equal values, not counted; s2 once: not counted. 3 of 6.
// Task 1: two identical successes: nothing to choose between, 0 of 4. Over the batch 3 of 10.
func TestDecisionShare(t *testing.T) {
	b := batch(2,
		ep(0, 1, "s0", "s1", "g"), ep(0, 1, "s0", "s1", "g"), ep(0, 0, "s0", "s2", "x"),
		ep(1, 1, "a", "b", "g"), ep(1, 1, "a", "b", "g"))
	share, steps, err := DecisionShare(b, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if steps != 10 || !near(share, 0.3, 1e-12) {
		t.Errorf("share %g of %d steps, want 0.3 of 10", share, steps)
	}
	// The same actions with equal outcomes everywhere: no decision matters.
	flat := batch(1, ep(0, 1, "s0", "s1", "g"), ep(0, 1, "s0", "s2", "g"))
	if share, steps, _ := DecisionShare(flat, DefaultOptions()); share != 0 || steps != 4 {
		t.Errorf("equal-valued branches: share %g of %d steps, want 0 of 4", share, steps)
	}
	// A faulted episode is left out.
	bad := ep(0, 0, "s0", "s2", "x")
	bad.Err = "env fault"
	if _, steps, _ := DecisionShare(batch(1, ep(0, 1, "s0", "s1", "g"), bad), DefaultOptions()); steps != 2 {
		t.Errorf("with a faulted episode: %d steps, want 2", steps)
	}
	opts := DefaultOptions()
	opts.Gamma = 2
	if _, _, err := DecisionShare(b, opts); err == nil {
		t.Error("gamma 2 accepted")
	}
}
