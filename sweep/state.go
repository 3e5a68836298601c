package sweep

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/graftrl/graftrl/internal/limits"
	"github.com/graftrl/graftrl/rundir"
)

// State is what a run's directory says about it.
type State string

// Run states.
const (
	// Pending: the run has no directory yet.
	Pending State = "pending"
	// Unfinished: the run has a directory but no summary.json that reaches its budget with the
	// sweep's config (it is running, or was stopped, killed or crashed). Executors resume it
	// from its newest checkpoint, or start it over when it wrote none.
	Unfinished State = "unfinished"
	// Finished: summary.json reaches the budget and config.yaml is the sweep's config.
	Finished State = "finished"
)

// Status is a run's state with its progress.
type Status struct {
	// Run is the run checked.
	Run *Run
	// State is what its directory says.
	State State
	// Detail says why a run is unfinished.
	Detail string
	// Iter and EnvSteps are the progress metrics.jsonl shows (the last line).
	Iter     int
	EnvSteps int64
	// Metric is the compared metric at the last evaluation (NaN when not evaluated yet).
	Metric float64
	// Attempt is the last attempt's record (nil when the run was never started by an executor).
	Attempt *Attempt
}

// Attempt is state/<run>.json: the last attempt to train a run.
type Attempt struct {
	// N counts the attempts.
	N int `json:"attempt"`
	// Host, PID and SlurmJob (JOBID_TASK, under Slurm) say where it ran.
	Host     string    `json:"host"`
	PID      int       `json:"pid"`
	SlurmJob string    `json:"slurm_job,omitempty"`
	Started  time.Time `json:"started"`
	// Ended and Exit are set when the attempt's process ended (Exit -1: killed by a signal).
	Ended *time.Time `json:"ended,omitempty"`
	Exit  *int       `json:"exit,omitempty"`
	// CPUSeconds is the user + system CPU time of the training process.
	CPUSeconds float64 `json:"cpu_seconds,omitempty"`
	// EarlierCPUSeconds and EarlierWallSeconds add up the CPU and wall-clock times of the
	// run's attempts before this one (those that recorded them: an attempt killed with its
	// executor has no end), so that the run's whole cost survives this record replacing theirs.
	EarlierCPUSeconds  float64 `json:"earlier_cpu_seconds,omitempty"`
	EarlierWallSeconds float64 `json:"earlier_wall_seconds,omitempty"`
	// Error is why the attempt could not start or what it ended with.
	Error string `json:"error,omitempty"`
}

// wallSeconds is the attempt's wall-clock time, 0 while it has no end.
func (a *Attempt) wallSeconds() float64 {
	if a.Ended == nil {
		return 0
	}
	return a.Ended.Sub(a.Started).Seconds()
}

// TotalCPUSeconds is the CPU time of every attempt at the run that recorded it, this one
// included.
func (a *Attempt) TotalCPUSeconds() float64 { return a.EarlierCPUSeconds + a.CPUSeconds }

// TotalWallSeconds is the wall-clock time of every attempt at the run that recorded it, this
// one included.
func (a *Attempt) TotalWallSeconds() float64 { return a.EarlierWallSeconds + a.wallSeconds() }

// Check reads a run's directory inside the sweep directory dir. metric is the eval metric to
// report (empty: eval/success).
func Check(dir string, r *Run, metric string) Status {
	if metric == "" {
		metric = "eval/success"
	}
	st := Status{Run: r, State: Pending, Metric: math.NaN()}
	st.Attempt, _ = readAttempt(dir, r)
	runDir := filepath.Join(dir, r.RunPath())
	if _, err := os.Stat(runDir); err != nil {
		return st
	}
	st.State = Unfinished
	st.Iter, st.EnvSteps, st.Metric = progress(filepath.Join(runDir, rundir.MetricsFile), metric)
	st.Detail = finishedDetail(dir, r)
	if st.Detail == "" {
		st.State = Finished
	}
	return st
}

// finishedDetail returns "" for a finished run, else why it is not finished.
func finishedDetail(dir string, r *Run) string {
	runDir := filepath.Join(dir, r.RunPath())
	data, err := limits.Metrics.ReadFile(filepath.Join(runDir, rundir.SummaryFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "no " + rundir.SummaryFile + " (running, or killed or crashed)"
	}
	if err != nil {
		return err.Error()
	}
	var s struct {
		Iterations *int   `json:"iterations"`
		EnvSteps   *int64 `json:"env_steps"`
	}
	if err := json.Unmarshal(data, &s); err != nil || s.Iterations == nil || s.EnvSteps == nil {
		return rundir.SummaryFile + " is unreadable"
	}
	if *s.Iterations < r.Iterations && (r.EnvSteps == 0 || *s.EnvSteps < r.EnvSteps) {
		budget := fmt.Sprintf("%d iterations", r.Iterations)
		if r.EnvSteps > 0 {
			budget = fmt.Sprintf("%d env steps", r.EnvSteps)
		}
		return fmt.Sprintf("stopped at iteration %d, %d env steps, short of its budget of %s", *s.Iterations, *s.EnvSteps, budget)
	}
	runCfg, err := limits.Config.ReadFile(filepath.Join(runDir, rundir.ConfigFile))
	if err != nil {
		return err.Error()
	}
	want, err := limits.Config.ReadFile(filepath.Join(dir, r.Config))
	if err != nil {
		return err.Error()
	}
	diff, err := configDiff(want, runCfg)
	if err != nil {
		return fmt.Sprintf("%s: %v", rundir.ConfigFile, err)
	}
	if len(diff) > 0 {
		return fmt.Sprintf("%s differs from the sweep's %s (%s)", rundir.ConfigFile, r.Config, diff[0])
	}
	return ""
}

// progress reads the last line's iteration and env steps and the metric's last evaluation. It
// reads no further than the metrics limit (limits.Metrics): a file that never ends shows the
// progress of what was read.
func progress(path, metric string) (int, int64, float64) {
	f, err := limits.Metrics.Open(path)
	if err != nil {
		return 0, 0, math.NaN()
	}
	defer f.Close()
	iter, steps, val := 0, int64(0), math.NaN()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 64*1024*1024)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		if v, ok := m["iter"].(float64); ok {
			iter = int(v)
		}
		if v, ok := m["env_steps"].(float64); ok {
			steps = int64(v)
		}
		if m["type"] == "eval" {
			if v, ok := m[metric].(float64); ok {
				val = v
			}
		}
	}
	return iter, steps, val
}

func attemptPath(dir string, r *Run) string {
	return filepath.Join(dir, StateDir, r.Name+".json")
}

func readAttempt(dir string, r *Run) (*Attempt, error) {
	data, err := os.ReadFile(attemptPath(dir, r))
	if err != nil {
		return nil, err
	}
	var a Attempt
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

func writeAttempt(dir string, r *Run, a *Attempt) error {
	data, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, StateDir), 0o755); err != nil {
		return err
	}
	path := attemptPath(dir, r)
	if err := os.WriteFile(path+".tmp", append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

// prepareAttempt readies an unfinished run's directory for a new attempt and returns extra
// arguments for `graftrl train`: a run that wrote a checkpoint resumes from its newest usable one
// (--resume); one that did not starts over (its directory is deleted).
func prepareAttempt(dir string, r *Run) ([]string, error) {
	runDir := filepath.Join(dir, r.RunPath())
	if ckpts, err := rundir.ListCheckpoints(runDir); err == nil && len(ckpts) > 0 {
		// The trainer verifies the checkpoints, falls back past a corrupt one and cuts the
		// metrics back to it: the attempt continues exactly where the last one stopped.
		return []string{"--resume", runDir}, nil
	}
	if err := os.RemoveAll(runDir); err != nil {
		return nil, fmt.Errorf("run %s: remove the unfinished run directory: %w", r.Name, err)
	}
	return nil, nil
}
