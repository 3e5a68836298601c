package rollout

// Detours counts the steps that make no progress towards success, apart for successful and
// failed episodes: the measure GraphGPO reports for ALFWorld, where successes waste 65 % of
// their steps and, in failures, 22 % of the steps make progress, so 78 % are wasted.
// Trajectory-level credit rewards a success's wasted steps and punishes a failure's useful ones.
type Detours struct {
	// SuccessSteps and FailSteps are the steps whose progress is known (the distance before and
	// after the step both known); SuccessWasted and FailWasted those among them that did not
	// bring success closer.
	SuccessSteps, SuccessWasted, FailSteps, FailWasted int
}

// SuccessShare is the share of wasted steps in successful episodes (0 without any).
func (d Detours) SuccessShare() float64 { return Ratio(d.SuccessWasted, d.SuccessSteps) }

// FailShare is the share of wasted steps in failed episodes (0 without any).
func (d Detours) FailShare() float64 { return Ratio(d.FailWasted, d.FailSteps) }

// CountDetours counts the wasted steps of a batch. A step from distance d_t to d_{t+1} (the
// trajectory's StartDistance, then each step's Distance) makes progress when 0 ≤ d_{t+1} < d_t;
// it is wasted when d_{t+1} ≥ d_t (a detour, an invalid action, a step back) or success became
// unreachable (-2), and so is every step taken from an unreachable state (d_t = −2: nothing can
// bring success closer). Steps whose distance before or after is unknown (-1, or a StartDistance
// not recorded) are not counted; neither are episodes with an env fault.
func CountDetours(b *Batch) Detours {
	var d Detours
	for i := range b.Trajs {
		t := &b.Trajs[i]
		if t.Err != "" || t.StartDistance <= 0 {
			continue
		}
		prev := t.StartDistance
		for _, s := range t.Steps {
			next := s.Distance
			if prev != -1 && next != -1 {
				wasted := prev == -2 || next == -2 || next >= prev
				if t.Success {
					d.SuccessSteps++
					if wasted {
						d.SuccessWasted++
					}
				} else {
					d.FailSteps++
					if wasted {
						d.FailWasted++
					}
				}
			}
			prev = next
		}
	}
	return d
}
