package audit

import (
	"encoding/json"
	"math"
)

// Num is a float64 that is written to JSON as null when it is NaN or infinite (a statistic that
// is undefined, such as the correlation of a constant estimate), and read back as NaN.
type Num float64

// MarshalJSON writes the number, or null when it is not finite.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// UnmarshalJSON reads a number, or null as NaN.
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num(math.NaN())
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*n = Num(f)
	return nil
}

// Result is one audit: a fresh batch of one checkpoint, the steps audited in it with their Monte
// Carlo truth, every estimator's advantage on them and the statistics comparing the two.
type Result struct {
	// Run is the run directory, Checkpoint the checkpoint directory and Iter its iteration
	// (empty and 0 when the audit did not come from a run).
	Run        string `json:"run,omitempty"`
	Checkpoint string `json:"checkpoint,omitempty"`
	Iter       int    `json:"iter"`
	// Env is the environment name.
	Env string `json:"env"`
	// Settings are the options the audit ran with.
	Settings Settings `json:"settings"`
	// Batch describes the fresh batch.
	Batch BatchInfo `json:"batch"`
	// Shares are the progress slice shares over every step of the batch.
	Shares Shares `json:"shares"`
	// Strata give the population N_h and audited count n_h of each stratum.
	Strata []StratumInfo `json:"strata"`
	// Truth summarises the true advantages of the audited steps.
	Truth TruthSummary `json:"truth"`
	// Estimators are the labels of the estimator variants, in column order.
	Estimators []string `json:"estimators"`
	// Metrics are the statistics of each estimator against the truth, in Estimators order.
	Metrics []Metrics `json:"metrics"`
	// Steps are the audited steps.
	Steps []StepResult `json:"steps"`
	// Timing is where the audit's time went.
	Timing Timing `json:"timing"`
}

// Settings are the options an audit ran with.
type Settings struct {
	// Steps, MC, Gamma, Seed and Slots are Options' fields of the same names.
	Steps int     `json:"steps"`
	MC    int     `json:"mc"`
	Gamma float64 `json:"gamma"`
	Seed  uint64  `json:"seed"`
	Slots int     `json:"slots"`
	// Z is the number of standard errors a true advantage must be from 0 for its sign to count
	// in the sign agreement.
	Z float64 `json:"z"`
	// Bootstrap is the number of bootstrap resamples behind the correlations' standard errors
	// (Options.Bootstrap; absent in audits written before those existed).
	Bootstrap int `json:"bootstrap,omitempty"`
}

// BatchInfo describes the fresh batch an audit drew.
type BatchInfo struct {
	// Tasks × Group episodes were rolled out; Errors of them ended in an env fault and were
	// left out of everything else.
	Tasks    int `json:"tasks"`
	Group    int `json:"group"`
	Episodes int `json:"episodes"`
	Errors   int `json:"errors"`
	// Steps is the number of steps of the valid episodes; Success their success rate.
	Steps   int     `json:"steps"`
	Success float64 `json:"success"`
}

// StratumInfo is one stratum's size in the batch (Population) and in the audit (Audited).
type StratumInfo struct {
	// Name is the stratum (StratumName).
	Name string `json:"name"`
	// Population is N_h, the batch's steps in the stratum; Audited is n_h.
	Population int `json:"population"`
	Audited    int `json:"audited"`
}

// TruthSummary summarises the Monte Carlo truth over the audited steps (weighted to the batch).
type TruthSummary struct {
	// Mean and Var are the weighted mean and variance of the true advantage estimates.
	Mean Num `json:"mean"`
	Var  Num `json:"var"`
	// NoiseFloor is the weighted mean of SE(A)²: the part of Var that is Monte Carlo noise, and
	// the smallest MSE any estimator can reach against this truth.
	NoiseFloor Num `json:"noise_floor"`
	// Ceiling is √(1 − NoiseFloor/Var): the correlation a perfect estimator would reach with this
	// noisy truth (the attenuation of the noise), NaN when the noise exceeds the variance.
	Ceiling Num `json:"ceiling"`
	// Resolved is the weighted share of steps whose true advantage is at least Z standard
	// errors from 0 (the steps the sign agreement counts).
	Resolved Num `json:"resolved"`
	// ResolvedSteps is the number of audited steps whose sign is resolved (unweighted).
	ResolvedSteps int `json:"resolved_steps"`
	// Dropped counts continuations left out because an env fault ended them.
	Dropped int `json:"dropped"`
}

// Metrics compare one estimator with the truth over the audited steps, each step weighted by
// its stratum weight.
type Metrics struct {
	// Label is the estimator variant.
	Label string `json:"label"`
	// Pearson and Spearman are the weighted correlations of the estimate with the truth.
	Pearson  Num `json:"pearson"`
	Spearman Num `json:"spearman"`
	// PearsonSE and SpearmanSE are their standard errors over the sampling of the audited steps,
	// by a nonparametric bootstrap: Settings.Bootstrap resamples (DefaultBootstrap), each
	// drawing within every stratum as many audited steps as it holds, with replacement, a step
	// keeping its weight; the correlation recomputed on each resample as on the audited steps
	// (Spearman on the resample's own mid-ranks); the SE is the standard deviation of those
	// values (with B − 1). The generator is a PCG (math/rand/v2) seeded with Settings.Seed, so
	// the same audit gives the same SEs. The SE is the sampling error over steps only: the Monte
	// Carlo noise of the truth, which attenuates the correlations (TruthSummary.Ceiling), is not
	// part of it. NaN (null in JSON) when the correlation is undefined, when fewer than half of
	// the resamples define it, and when read from an audit written before SEs existed.
	PearsonSE  Num `json:"pearson_se"`
	SpearmanSE Num `json:"spearman_se"`
	// Sign is the weighted share of resolved steps whose estimate has the truth's sign.
	Sign Num `json:"sign_agreement"`
	// Scale is c, the least-squares factor that puts the estimate on the truth's scale; MSE is
	// the weighted mean of (c·Â − A)² and NMSE is MSE divided by the weighted mean of A² (1:
	// no better than predicting 0).
	Scale Num `json:"scale"`
	MSE   Num `json:"mse"`
	NMSE  Num `json:"nmse"`
	// ByStratum is the Pearson correlation within each stratum (unweighted), in stratum order.
	ByStratum []Num `json:"pearson_by_stratum"`
	// ByStratumSE are the bootstrap standard errors of ByStratum, computed as PearsonSE on the
	// same resamples (each stratum's resample is a bootstrap of that stratum alone); absent in
	// audits written before SEs existed.
	ByStratumSE []Num `json:"pearson_by_stratum_se,omitempty"`
	// Slices are the diagnostic slices.
	Slices []SliceMetrics `json:"slices"`
}

// UnmarshalJSON reads Metrics as written; the standard errors missing from an audit written
// before they existed read as NaN, like null, not as 0.
func (m *Metrics) UnmarshalJSON(b []byte) error {
	type plain Metrics
	p := plain{PearsonSE: Num(math.NaN()), SpearmanSE: Num(math.NaN())}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*m = Metrics(p)
	return nil
}

// Diagnostic slice names.
const (
	// SliceFailedProgress are steps of failed trajectories that made progress.
	SliceFailedProgress = "failed+progress"
	// SliceSuccessNoProgress are steps of successful trajectories that made none.
	SliceSuccessNoProgress = "success+no-progress"
)

// SliceMetrics compare an estimator with the truth on one diagnostic slice of the audited steps.
type SliceMetrics struct {
	// Name is SliceFailedProgress or SliceSuccessNoProgress.
	Name string `json:"name"`
	// N is the number of audited steps in the slice.
	N int `json:"n"`
	// Truth is the weighted mean true advantage; Estimate the weighted mean of c·Â, the
	// scale-matched estimate; Bias = Estimate − Truth.
	Truth    Num `json:"truth"`
	Estimate Num `json:"estimate"`
	Bias     Num `json:"bias"`
	// Positive is the weighted share of the slice whose estimate is > 0; TruthPositive the same
	// for the truth.
	Positive      Num `json:"positive_share"`
	TruthPositive Num `json:"truth_positive_share"`
}

// StepResult is one audited step.
type StepResult struct {
	// Traj is the trajectory's index in the batch, Task its task index and TaskSeed its task
	// seed; T is the step and Len the trajectory's number of steps.
	Traj     int   `json:"traj"`
	Task     int   `json:"task"`
	TaskSeed int64 `json:"task_seed"`
	T        int   `json:"t"`
	Len      int   `json:"len"`
	// Success is the trajectory's result; Stratum the step's stratum and Weight its weight.
	Success bool    `json:"success"`
	Stratum string  `json:"stratum"`
	Weight  float64 `json:"weight"`
	// Key is φ(s_t) and Action the action text a_t.
	Key    string `json:"key"`
	Action string `json:"action"`
	// DistBefore and DistAfter are d(s_t) and d(s_{t+1}); Progress is MadeProgress,
	// NoProgress or ProgressUnknown.
	DistBefore int `json:"dist_before"`
	DistAfter  int `json:"dist_after"`
	Progress   int `json:"progress"`
	// LogPAction is log π(a_t | context_t) under the audited policy.
	LogPAction Num `json:"logp_action"`
	// Q, V and A = Q − V are the Monte Carlo estimates with their standard errors; NQ and NV
	// the continuations they average.
	Q   Num `json:"q"`
	QSE Num `json:"q_se"`
	V   Num `json:"v"`
	VSE Num `json:"v_se"`
	A   Num `json:"a"`
	ASE Num `json:"a_se"`
	NQ  int `json:"n_q"`
	NV  int `json:"n_v"`
	// Est are the estimators' advantages of the step, in Result.Estimators order.
	Est []float64 `json:"estimates"`
}

// Timing is where an audit's wall-clock time went, in seconds, with the decoding work done.
type Timing struct {
	// Batch, Estimators and MonteCarlo are the seconds spent rolling out the fresh batch,
	// running the estimators and running the continuations; Total is the whole audit.
	Batch      float64 `json:"batch_s"`
	Estimators float64 `json:"estimators_s"`
	MonteCarlo float64 `json:"monte_carlo_s"`
	Total      float64 `json:"total_s"`
	// Continuations is the number of continued episodes; DecodeCalls the batched decoder calls
	// of batch and continuations; SampledTokens the tokens the policy sampled (forced ones
	// excluded).
	Continuations int `json:"continuations"`
	DecodeCalls   int `json:"decode_calls"`
	SampledTokens int `json:"sampled_tokens"`
}
