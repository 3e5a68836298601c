package trainer

import (
	"math"

	"github.com/graftrl/graftrl/graft"
	"github.com/graftrl/graftrl/rollout"
)

// Keys of the credit-assignment diagnostics (config key credit_diagnostics) in the train lines
// of metrics.jsonl.
const (
	// KeyDecisionShare is the share of the batch's steps that leave a state whose actions lead
	// to different values (graft.DecisionShare under graft.DefaultOptions).
	KeyDecisionShare = "est/decision_share"
	// KeyDecisionSteps is the number of steps KeyDecisionShare counts.
	KeyDecisionSteps = "est/decision_steps"
	// KeyWastedSuccess is the share of the steps of successful episodes that brought success no
	// closer (rollout.CountDetours).
	KeyWastedSuccess = "est/wasted_success"
	// KeySuccessSteps is the number of steps of successful episodes whose progress is known.
	KeySuccessSteps = "est/success_steps"
	// KeyWastedFail is the share of the steps of failed episodes that brought success no closer.
	KeyWastedFail = "est/wasted_fail"
	// KeyFailSteps is the number of steps of failed episodes whose progress is known.
	KeyFailSteps = "est/fail_steps"
	// KeyParamChange is the size of the iteration's update, ‖θ_after − θ_before‖₂ / ‖θ_before‖₂
	// over every weight (paramChange), so that a bigger step can be told from better credit; not
	// for a pretrained model, whose weights are too many to copy every iteration.
	KeyParamChange = "param_change"
)

// paramChange is ‖after − before‖₂ / ‖before‖₂ over all tensors (0 when before is all zeros),
// summed in float64.
func paramChange(before, after [][]float32) float64 {
	var diff, norm float64
	for i, b := range before {
		for j, x := range b {
			d := float64(after[i][j]) - float64(x)
			diff += d * d
			norm += float64(x) * float64(x)
		}
	}
	if norm == 0 {
		return 0
	}
	return math.Sqrt(diff / norm)
}

// creditDiagnostics measures how much step-level credit assignment a batch asks for, as the
// train line's keys above. The decision share always uses graft.DefaultOptions, whatever the
// run's estimator, so that runs of different methods report the same measure. A share is given
// only with a step count > 0: envs that record no distances (Info.Distance) report no wasted
// shares rather than zeros. It only reads the batch and draws no random numbers. An error of
// DecisionShare leaves its two keys out; the wasted shares are returned all the same.
func creditDiagnostics(b *rollout.Batch) (map[string]float64, error) {
	m := map[string]float64{}
	d := rollout.CountDetours(b)
	if d.SuccessSteps > 0 {
		m[KeyWastedSuccess], m[KeySuccessSteps] = d.SuccessShare(), float64(d.SuccessSteps)
	}
	if d.FailSteps > 0 {
		m[KeyWastedFail], m[KeyFailSteps] = d.FailShare(), float64(d.FailSteps)
	}
	share, steps, err := graft.DecisionShare(b, graft.DefaultOptions())
	if err != nil {
		return m, err
	}
	if steps > 0 {
		m[KeyDecisionShare], m[KeyDecisionSteps] = share, float64(steps)
	}
	return m, nil
}

// addCreditDiagnostics writes the batch's credit diagnostics into the train line m when the
// config asks for them. An error of DecisionShare is logged once per process and leaves its
// keys out; it never stops the run.
func (t *Trainer) addCreditDiagnostics(b *rollout.Batch, m Metrics) {
	if !t.cfg.CreditDiagnostics {
		return
	}
	cd, err := creditDiagnostics(b)
	if err != nil && !t.creditWarned {
		t.creditWarned = true
		t.logf("warning: credit_diagnostics: %v; %s and %s are left out of metrics.jsonl (logged once)",
			err, KeyDecisionShare, KeyDecisionSteps)
	}
	for k, v := range cd {
		m[k] = v
	}
}
