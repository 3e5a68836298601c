package sweep

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Files of the slurm/ folder of a sweep directory.
const (
	// SlurmScript is the batch script of the job array.
	SlurmScript = "sweep.sbatch"
	// SlurmJobs records every submitted job array, one JSON object per line.
	SlurmJobs = "jobs.jsonl"
)

// ScriptParams are the inputs of the batch script.
type ScriptParams struct {
	// Sweep is the sweep name; Dir the absolute sweep directory; WorkDir the absolute working
	// directory of the tasks (--chdir: relative paths in the sweep resolve against it).
	Sweep, Dir, WorkDir string
	// Binary is the absolute path of the graftrl executable the tasks run.
	Binary string
	// Slurm holds the resources.
	Slurm SlurmConfig
}

// Script renders the batch script of the sweep's job array: task i runs
// `graftrl sweep run-one --dir DIR --index i`, with GOMAXPROCS set to the task's CPUs. The
// array itself (--array) is given on the sbatch command line (see SubmitArgs), so that a
// re-submission can leave finished runs out.
func Script(p ScriptParams) string {
	s := p.Slurm
	job := s.JobName
	if job == "" {
		job = "graftrl-" + p.Sweep
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/bash\n")
	fmt.Fprintf(&b, "# graftrl sweep %s: one array task per run; task i trains run i of %s.\n", p.Sweep, filepath.Join(p.Dir, ManifestFile))
	fmt.Fprintf(&b, "# Written by `graftrl sweep --executor slurm`, which submits it with sbatch --parsable --array=...\n")
	fmt.Fprintf(&b, "#SBATCH --job-name=%s\n", job)
	fmt.Fprintf(&b, "#SBATCH --output=%s\n", sbatchQuote(filepath.Join(p.Dir, SlurmDir, "%A_%a.out")))
	fmt.Fprintf(&b, "#SBATCH --chdir=%s\n", sbatchQuote(p.WorkDir))
	fmt.Fprintf(&b, "#SBATCH --ntasks=1\n")
	fmt.Fprintf(&b, "#SBATCH --cpus-per-task=%d\n", max(s.CPUsPerTask, 1))
	if s.Partition != "" {
		fmt.Fprintf(&b, "#SBATCH --partition=%s\n", s.Partition)
	}
	if s.Time != "" {
		fmt.Fprintf(&b, "#SBATCH --time=%s\n", s.Time)
	}
	if s.GPUs > 0 {
		fmt.Fprintf(&b, "#SBATCH --gres=gpu:%d\n", s.GPUs)
	}
	for _, l := range s.Extra {
		fmt.Fprintf(&b, "%s\n", l)
	}
	fmt.Fprintf(&b, "set -euo pipefail\n")
	fmt.Fprintf(&b, "export GOMAXPROCS=\"${SLURM_CPUS_PER_TASK:-1}\"\n")
	fmt.Fprintf(&b, "exec %s sweep run-one --dir %s --index \"$SLURM_ARRAY_TASK_ID\"\n", shellQuote(p.Binary), shellQuote(p.Dir))
	return b.String()
}

// sbatchQuote double-quotes an #SBATCH option value holding white space (sbatch splits the
// line at white space outside quotes).
func sbatchQuote(s string) string {
	if strings.ContainsAny(s, " \t") {
		return `"` + s + `"`
	}
	return s
}

// shellQuote quotes s for bash when it holds anything but safe characters.
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._+=-,:@%", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ArraySpec is the --array value for the given task indices: ranges joined by commas, with
// %maxParallel when it is positive (0-5%2, 1,3-4).
func ArraySpec(indices []int, maxParallel int) string {
	idx := slices.Clone(indices)
	slices.Sort(idx)
	idx = slices.Compact(idx)
	var parts []string
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		if i == j {
			parts = append(parts, strconv.Itoa(idx[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", idx[i], idx[j]))
		}
		i = j + 1
	}
	spec := strings.Join(parts, ",")
	if maxParallel > 0 {
		spec += "%" + strconv.Itoa(maxParallel)
	}
	return spec
}

// SubmitArgs are the sbatch arguments that submit the script as an array of the given tasks.
func SubmitArgs(script string, indices []int, maxParallel int) []string {
	return []string{"--parsable", "--array=" + ArraySpec(indices, maxParallel), script}
}

// SlurmOptions configure SubmitSlurm.
type SlurmOptions struct {
	// Binary is the graftrl executable the tasks run (default: slurm.binary, else the running
	// executable). It must outlive this command: a `go run` binary does not.
	Binary string
	// WorkDir is the tasks' working directory (default: the current one).
	WorkDir string
	// DryRun prints the script and the sbatch command instead of submitting.
	DryRun bool
	// Wait polls squeue until the array has finished, then checks every run.
	Wait bool
	// Poll is the squeue polling interval of Wait (default 2 s).
	Poll time.Duration
	// Out receives the messages (and, on a dry run, the script).
	Out io.Writer
}

// SlurmJob is one line of slurm/jobs.jsonl.
type SlurmJob struct {
	JobID     string    `json:"job_id"`
	Array     string    `json:"array"`
	Submitted time.Time `json:"submitted"`
	Runs      []string  `json:"runs"`
}

// PlanSlurm returns the script parameters and the tasks (unfinished runs) of a submission.
func PlanSlurm(dir string, m *Manifest, o SlurmOptions) (ScriptParams, []int, error) {
	p, err := scriptParams(dir, m.Name, m.Slurm, o)
	if err != nil {
		return ScriptParams{}, nil, err
	}
	var todo []int
	for i := range m.Runs {
		if Check(dir, &m.Runs[i], "").State != Finished {
			todo = append(todo, i)
		}
	}
	return p, todo, nil
}

// DryRunNewSlurm prints what SubmitSlurm would submit for a sweep of n runs whose directory does
// not exist yet (every run is to run): the batch script and the sbatch command. Unlike a dry run
// of SubmitSlurm it needs no manifest.
func DryRunNewSlurm(c *Config, n int, o SlurmOptions) error {
	o.DryRun = true
	dir := c.Dir()
	p, err := scriptParams(dir, c.Name, c.Slurm, o)
	if err != nil {
		return err
	}
	todo := make([]int, n)
	for i := range todo {
		todo[i] = i
	}
	script := filepath.Join(p.Dir, SlurmDir, SlurmScript)
	fmt.Fprintf(orDiscard(o.Out), "# %s (%d of %d runs to submit)\n%s\n# submit: sbatch %s\n", script, n, n, Script(p),
		strings.Join(SubmitArgs(script, todo, c.Slurm.MaxParallel), " "))
	return nil
}

// scriptParams resolves the batch script's parameters: the sweep directory and working directory
// made absolute, the graftrl binary the tasks run.
func scriptParams(dir, name string, slurm SlurmConfig, o SlurmOptions) (ScriptParams, error) {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return ScriptParams{}, err
	}
	wd := o.WorkDir
	if wd == "" {
		if wd, err = os.Getwd(); err != nil {
			return ScriptParams{}, err
		}
	}
	bin := o.Binary
	if bin == "" {
		bin = slurm.Binary
	}
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return ScriptParams{}, fmt.Errorf("slurm: cannot find the graftrl executable: %w", err)
		}
		if resolved, err := filepath.EvalSymlinks(exe); err == nil {
			exe = resolved
		}
		if strings.Contains(exe, string(filepath.Separator)+"go-build") {
			err := fmt.Errorf("slurm: this graftrl (%s) is a temporary `go run` binary that the array's tasks cannot run; build one (go build -o graftrl ./cmd/graftrl) and run it, or set slurm.binary", exe)
			if !o.DryRun {
				return ScriptParams{}, err
			}
			fmt.Fprintf(orDiscard(o.Out), "# warning: %v\n", err)
		}
		bin = exe
	} else if abs, err := filepath.Abs(bin); err == nil {
		bin = abs
	}
	return ScriptParams{Sweep: name, Dir: absDir, WorkDir: wd, Binary: bin, Slurm: slurm}, nil
}

// SubmitSlurm submits the sweep's unfinished runs as one Slurm job array through the
// machine's sbatch: it writes slurm/sweep.sbatch, runs sbatch --parsable --array=…, and
// records the job in slurm/jobs.jsonl. It refuses while an earlier array of the sweep still
// has tasks queued or running. With o.Wait it then waits for the array and returns an error
// unless every run finished. It returns the job id ("" when nothing was submitted).
func SubmitSlurm(ctx context.Context, dir string, m *Manifest, o SlurmOptions) (string, error) {
	out := o.Out
	if out == nil {
		out = io.Discard
	}
	p, todo, err := PlanSlurm(dir, m, o)
	if err != nil {
		return "", err
	}
	script := filepath.Join(p.Dir, SlurmDir, SlurmScript)
	args := SubmitArgs(script, todo, m.Slurm.MaxParallel)
	if o.DryRun {
		fmt.Fprintf(out, "# %s (%d of %d runs to submit)\n%s\n# submit: sbatch %s\n", script, len(todo), len(m.Runs), Script(p), strings.Join(args, " "))
		return "", nil
	}
	if len(todo) == 0 {
		fmt.Fprintf(out, "sweep %s: all %d runs are finished; nothing to submit\n", m.Name, len(m.Runs))
		return "", nil
	}
	sbatch, err := exec.LookPath("sbatch")
	if err != nil {
		return "", fmt.Errorf("slurm executor: sbatch is not on PATH (%v): run on a Slurm login node, or use --executor local; --dry-run shows the batch script", err)
	}
	if active, err := activeTasks(ctx, dir); err == nil && len(active) > 0 {
		return "", fmt.Errorf("slurm: an earlier job array of sweep %s still has %d task(s) queued or running (%s); wait for it (graftrl sweep status --dir %s) or scancel it",
			m.Name, len(active), strings.Join(active, ", "), dir)
	}
	if err := os.MkdirAll(filepath.Join(dir, SlurmDir), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(script, []byte(Script(p)), 0o755); err != nil {
		return "", fmt.Errorf("slurm: %w", err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, sbatch, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("slurm: sbatch %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	// --parsable prints "jobid" or "jobid;cluster".
	jobID, _, _ := strings.Cut(strings.TrimSpace(stdout.String()), ";")
	if _, err := strconv.ParseUint(jobID, 10, 64); err != nil {
		return "", fmt.Errorf("slurm: sbatch printed %q, not a job id", stdout.String())
	}
	job := SlurmJob{JobID: jobID, Array: ArraySpec(todo, m.Slurm.MaxParallel), Submitted: time.Now().UTC().Truncate(time.Second)}
	for _, i := range todo {
		job.Runs = append(job.Runs, m.Runs[i].Name)
	}
	if err := appendJob(dir, job); err != nil {
		return jobID, err
	}
	fmt.Fprintf(out, "sweep %s: submitted job array %s (%d of %d runs; --array=%s); script %s; task output in %s\n",
		m.Name, jobID, len(todo), len(m.Runs), job.Array, script, filepath.Join(dir, SlurmDir))
	fmt.Fprintf(out, "follow it with: graftrl sweep status --dir %s\n", dir)
	if !o.Wait {
		return jobID, nil
	}
	finished := func() int {
		n := 0
		for i := range m.Runs {
			if Check(dir, &m.Runs[i], "").State == Finished {
				n++
			}
		}
		return n
	}
	if err := waitJob(ctx, jobID, o.Poll, out, finished, len(m.Runs)); err != nil {
		return jobID, err
	}
	var unfinished []string
	for i := range m.Runs {
		if st := Check(dir, &m.Runs[i], ""); st.State != Finished {
			unfinished = append(unfinished, fmt.Sprintf("%s (%s: %s)", st.Run.Name, st.State, st.Detail))
		}
	}
	if len(unfinished) > 0 {
		return jobID, fmt.Errorf("slurm: job %s ended with %d run(s) unfinished: %s; see %s and the logs in %s",
			jobID, len(unfinished), strings.Join(unfinished, "; "), filepath.Join(dir, SlurmDir), filepath.Join(dir, LogDir))
	}
	fmt.Fprintf(out, "sweep %s: job %s finished; all %d runs are finished\n", m.Name, jobID, len(m.Runs))
	return jobID, nil
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

func appendJob(dir string, j SlurmJob) error {
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, SlurmDir, SlurmJobs), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Write(append(data, '\n'))
	return err
}

// Jobs reads slurm/jobs.jsonl (nil when nothing was submitted).
func Jobs(dir string) ([]SlurmJob, error) {
	f, err := os.Open(filepath.Join(dir, SlurmDir, SlurmJobs))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var jobs []SlurmJob
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var j SlurmJob
		if err := json.Unmarshal(sc.Bytes(), &j); err != nil {
			return nil, fmt.Errorf("%s: %v", f.Name(), err)
		}
		jobs = append(jobs, j)
	}
	return jobs, sc.Err()
}

// TaskState is one array task as squeue shows it.
type TaskState struct {
	JobID string
	Task  int
	// State is squeue's state (PENDING, RUNNING, COMPLETED, FAILED, TIMEOUT …).
	State string
	// Reason is squeue's %R: the node list of a running task, the reason a task waits.
	Reason string
}

// terminal are the squeue states of tasks that will not run again.
var terminal = []string{"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
	"BOOT_FAIL", "DEADLINE", "PREEMPTED", "SPECIAL_EXIT", "REVOKED"}

// Active reports a task that is queued or running.
func (t TaskState) Active() bool { return !slices.Contains(terminal, t.State) }

// Squeue asks squeue about the jobs (one line per array task, finished tasks included while
// Slurm remembers them). Jobs Slurm has forgotten are simply absent.
func Squeue(ctx context.Context, jobIDs []string) ([]TaskState, error) {
	if len(jobIDs) == 0 {
		return nil, nil
	}
	bin, err := exec.LookPath("squeue")
	if err != nil {
		return nil, fmt.Errorf("squeue is not on PATH")
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "--noheader", "--array", "--states=all", "--jobs="+strings.Join(jobIDs, ","), "--format=%i|%T|%R")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if strings.Contains(stderr.String(), "Invalid job id") {
			return nil, nil // every job has left slurmctld's memory
		}
		return nil, fmt.Errorf("squeue: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return ParseSqueue(stdout.String()), nil
}

// ParseSqueue reads `squeue --array --format=%i|%T|%R` output: lines JOBID_TASK|STATE|REASON.
// Lines that are not array tasks are skipped.
func ParseSqueue(s string) []TaskState {
	var out []TaskState
	for _, line := range strings.Split(s, "\n") {
		parts := strings.SplitN(strings.TrimSpace(line), "|", 3)
		if len(parts) < 2 {
			continue
		}
		job, task, ok := strings.Cut(parts[0], "_")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(task)
		if err != nil {
			continue // a pending range such as 12_[3-5] (not expanded without --array)
		}
		t := TaskState{JobID: job, Task: n, State: strings.TrimSuffix(parts[1], "+")}
		if len(parts) == 3 {
			t.Reason = parts[2]
		}
		out = append(out, t)
	}
	return out
}

// SlurmStates maps run indices to the state of their task in the sweep's newest job that has
// one (nil without submissions).
func SlurmStates(ctx context.Context, dir string) (map[int]TaskState, error) {
	jobs, err := Jobs(dir)
	if err != nil || len(jobs) == 0 {
		return nil, err
	}
	ids := make([]string, len(jobs))
	order := map[string]int{}
	for i, j := range jobs {
		ids[i] = j.JobID
		order[j.JobID] = i
	}
	tasks, err := Squeue(ctx, ids)
	if err != nil {
		return nil, err
	}
	states := map[int]TaskState{}
	for _, t := range tasks {
		if old, ok := states[t.Task]; !ok || order[t.JobID] > order[old.JobID] {
			states[t.Task] = t
		}
	}
	return states, nil
}

// activeTasks lists the sweep's array tasks that are queued or running.
func activeTasks(ctx context.Context, dir string) ([]string, error) {
	jobs, err := Jobs(dir)
	if err != nil || len(jobs) == 0 {
		return nil, err
	}
	var ids []string
	for _, j := range jobs {
		ids = append(ids, j.JobID)
	}
	tasks, err := Squeue(ctx, ids)
	if err != nil {
		return nil, err
	}
	var active []string
	for _, t := range tasks {
		if t.Active() {
			active = append(active, fmt.Sprintf("%s_%d %s", t.JobID, t.Task, t.State))
		}
	}
	return active, nil
}

// waitJob polls squeue until no task of the job is queued or running. Each time the picture
// changes it prints how many of the sweep's total runs are finished (finished counts them in the
// run directories: squeue forgets completed tasks after a few minutes) and squeue's count of
// every state but COMPLETED.
func waitJob(ctx context.Context, jobID string, poll time.Duration, out io.Writer, finished func() int, total int) error {
	if poll <= 0 {
		poll = 2 * time.Second
	}
	last := ""
	for {
		tasks, err := Squeue(ctx, []string{jobID})
		if err != nil {
			return err
		}
		counts := map[string]int{}
		active := 0
		for _, t := range tasks {
			if t.State != "COMPLETED" {
				counts[t.State]++
			}
			if t.Active() {
				active++
			}
		}
		parts := []string{fmt.Sprintf("%d of %d runs finished", finished(), total)}
		for _, s := range sortedKeysInt(counts) {
			parts = append(parts, fmt.Sprintf("%s %d", s, counts[s]))
		}
		if line := strings.Join(parts, ", "); line != last {
			fmt.Fprintf(out, "[%s] job %s: %s\n", time.Now().Format("15:04:05"), jobID, line)
			last = line
		}
		if active == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("slurm: stopped waiting for job %s (%w); it keeps running: scancel %s to stop it", jobID, ErrInterrupted, jobID)
		case <-time.After(poll):
		}
	}
}

func sortedKeysInt(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
