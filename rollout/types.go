// Package rollout holds the data a training iteration collects — steps, trajectories, batches — and
// the collector that runs many multi-turn episodes at once with batched policy calls.
package rollout

import "math"

// Step is one turn of an episode: in state s_t the agent took action a_t and the env moved to s_{t+1}.
type Step struct {
	// Key is the state key φ(s_t) before the action.
	Key string `json:"key"`
	// NextKey is the state key φ(s_{t+1}) after the action.
	NextKey string `json:"next_key"`
	// Action is the action text the env received.
	Action string `json:"action"`
	// Reward is the per-step reward r_t (excluding the episode outcome).
	Reward float64 `json:"reward"`
	// Invalid is set when the env rejected the action.
	Invalid bool `json:"invalid,omitempty"`
	// Distance is the env's optimal distance to success from s_{t+1} (-1 unknown, -2 success unreachable; see envs.Info).
	Distance int `json:"distance"`
}

// Row is one training sequence: token ids, the log-probs they were sampled with, and which step
// each token's action belongs to. In the episode layout a trajectory has one row; in the window
// layout it has one row per step.
type Row struct {
	// Tokens are the token ids of the sequence, starting with the begin-of-sequence token.
	Tokens []int32 `json:"tokens"`
	// LogProb[i] is log π_old(Tokens[i] | Tokens[:i]) for action tokens, 0 for context tokens.
	LogProb []float32 `json:"logprob"`
	// StepOf[i] is the index of the step whose action Tokens[i] belongs to, or -1 for tokens that
	// never enter the loss (instruction, observations, forced end-of-action tokens).
	StepOf []int16 `json:"step_of"`
}

// Trajectory is one episode of a task.
type Trajectory struct {
	// Task is the index of the task (the group) within the batch.
	Task int `json:"task"`
	// TaskSeed is the env task seed.
	TaskSeed int64 `json:"task_seed"`
	// StartDistance is the env's optimal distance to success from the first state (Info.Distance
	// of Reset's observation; -1 unknown). A first state is never the goal, so 0 means not
	// recorded (batch files written before it was kept).
	StartDistance int `json:"start_distance,omitempty"`
	// Steps are the episode's turns in order.
	Steps []Step `json:"steps"`
	// Outcome is the episode outcome R_i (the success reward or 0; 0 when truncated or errored).
	Outcome float64 `json:"outcome"`
	// Success is set when the episode ended in success.
	Success bool `json:"success"`
	// Truncated is set when the step cap (or the context length) ended the episode.
	Truncated bool `json:"truncated"`
	// Err is non-empty when an env fault ended the episode; such episodes are excluded from updates.
	Err string `json:"error,omitempty"`
	// Rows are the token sequences of the episode (see Row).
	Rows []Row `json:"rows"`
}

// Return is the undiscounted sum of step rewards plus the outcome.
func (t *Trajectory) Return() float64 {
	r := t.Outcome
	for _, s := range t.Steps {
		r += s.Reward
	}
	return r
}

// Batch is the rollouts of one iteration: Tasks tasks, each rolled out several times (a group).
type Batch struct {
	// Tasks is the number of tasks (groups) in the batch.
	Tasks int `json:"tasks"`
	// Trajs are the trajectories; Trajs[i].Task says which group each belongs to.
	Trajs []Trajectory `json:"trajectories"`
}

// Groups returns, for each task, the indices of its trajectories in Trajs, in order.
func (b *Batch) Groups() [][]int {
	g := make([][]int, b.Tasks)
	for i := range b.Trajs {
		t := b.Trajs[i].Task
		g[t] = append(g[t], i)
	}
	return g
}

// NumSteps is the total number of steps in the batch.
func (b *Batch) NumSteps() int {
	n := 0
	for i := range b.Trajs {
		n += len(b.Trajs[i].Steps)
	}
	return n
}

// Advantages holds one scalar advantage per step: A[i][t] for trajectory i, step t.
type Advantages [][]float64

// NewAdvantages allocates zero advantages shaped like the batch.
func NewAdvantages(b *Batch) Advantages {
	a := make(Advantages, len(b.Trajs))
	for i := range b.Trajs {
		a[i] = make([]float64, len(b.Trajs[i].Steps))
	}
	return a
}

// Diagnostics are named scalar statistics an estimator reports about a batch (nodes, merge ratio,
// singleton share, advantage mean/std …); they are logged into metrics.jsonl.
type Diagnostics map[string]float64

// Ratio is a/b, the share or mean a diagnostic reports, and 0 when b is 0: an empty batch or
// stratum has no share, and NaN would poison the means that metrics.jsonl readers take.
func Ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// AdvantageStats adds the advantage summary every estimator logs: adv_mean, adv_std (population)
// and adv_zero_share (share of steps whose advantage is exactly 0).
func AdvantageStats(a Advantages, d Diagnostics) {
	var n, zeros int
	var sum, sq float64
	for _, row := range a {
		for _, v := range row {
			n++
			sum += v
			sq += v * v
			if v == 0 {
				zeros++
			}
		}
	}
	if n == 0 {
		d["adv_mean"], d["adv_std"], d["adv_zero_share"] = 0, 0, 0
		return
	}
	mean := sum / float64(n)
	variance := sq/float64(n) - mean*mean
	if variance < 0 {
		variance = 0
	}
	d["adv_mean"] = mean
	d["adv_std"] = math.Sqrt(variance)
	d["adv_zero_share"] = float64(zeros) / float64(n)
}

// WithoutErrors returns the batch without the episodes an env fault ended (Trajectory.Err): they
// are left out of every estimator and of the update (their count is in the metrics).
func (b *Batch) WithoutErrors() *Batch {
	out := &Batch{Tasks: b.Tasks}
	for _, tr := range b.Trajs {
		if tr.Err == "" {
			out.Trajs = append(out.Trajs, tr)
		}
	}
	return out
}
