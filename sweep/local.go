package sweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/graftrl/graftrl/rundir"
)

// ErrInterrupted is wrapped by the error of an execution stopped by its context (Ctrl-C).
// graftrl exits on it with the status of an interrupted `train` (trainer.ErrInterrupted, whose
// words it shares): running the same command again continues.
var ErrInterrupted = errors.New("training interrupted")

// Launcher trains runs of a sweep, one `graftrl train` process per run.
type Launcher struct {
	// Binary is the graftrl executable (default: the running executable).
	Binary string
	// GOMAXPROCS is set in each training process's environment (0: inherited, or one per
	// worker's share of the cores under RunLocal).
	GOMAXPROCS int
	// Grace is how long a run may take to stop after SIGINT before it is killed (default 15 s).
	Grace time.Duration
	// Metric is the eval metric reported when a run finishes (default eval/success).
	Metric string
	// Out receives one line per event (nil: discarded).
	Out io.Writer
	// SlurmJob is recorded in the attempt records (JOBID_TASK under Slurm).
	SlurmJob string
}

// syncWriter serialises the lines of concurrent workers.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// Write writes p under the lock.
func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// outcome is what one attempt at a run came to.
type outcome int

const (
	outSkipped outcome = iota // finished before: nothing to do
	outBusy                   // another process is training it
	outDone                   // trained to its budget
	outFailed                 // the training process failed
	outStopped                // stopped by the context
)

func (l *Launcher) logf(format string, args ...any) {
	if l.Out == nil {
		return
	}
	fmt.Fprintf(l.Out, "[%s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func (l *Launcher) binary() (string, error) {
	if l.Binary != "" {
		return l.Binary, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("sweep: cannot find the graftrl executable: %w", err)
	}
	return exe, nil
}

// attempt trains run r of the sweep in dir unless it is finished or busy: it takes the run's
// lock, checks its state again under the lock, resumes it from its newest checkpoint or starts
// it over when it wrote none (prepareAttempt), and runs `graftrl train` with the run's resolved
// config, its output appended to logs/<run>.log. Cancelling ctx sends SIGINT to the training
// process (it stops after its current iteration), and SIGKILL after the grace period. started
// reports whether a training process was started.
func (l *Launcher) attempt(ctx context.Context, dir string, r *Run) (out outcome, started bool, err error) {
	release, err := rundir.TryLock(filepath.Join(dir, StateDir, r.Name+".lock"))
	if errors.Is(err, rundir.ErrLocked) {
		return outBusy, false, nil
	}
	if err != nil {
		return outFailed, false, fmt.Errorf("run %s: lock: %w", r.Name, err)
	}
	defer release()
	if Check(dir, r, l.Metric).State == Finished {
		return outSkipped, false, nil
	}
	if ctx.Err() != nil {
		return outStopped, false, nil
	}
	bin, err := l.binary()
	if err != nil {
		return outFailed, false, err
	}
	extra, err := prepareAttempt(dir, r)
	if err != nil {
		return outFailed, false, err
	}
	prev, _ := readAttempt(dir, r)
	host, _ := os.Hostname()
	a := &Attempt{N: 1, Host: host, PID: os.Getpid(), SlurmJob: l.SlurmJob, Started: time.Now().UTC().Truncate(time.Second)}
	if prev != nil {
		a.N = prev.N + 1
		// The record keeps the last attempt; what the earlier ones cost is carried over, so
		// that a run trained over several invocations is counted whole (a study's Time note).
		a.EarlierCPUSeconds = prev.EarlierCPUSeconds + prev.CPUSeconds
		a.EarlierWallSeconds = prev.EarlierWallSeconds + prev.wallSeconds()
	}
	args := append([]string{"train", "--config", filepath.Join(dir, r.Config), "--out-dir", filepath.Join(dir, RunDir)}, extra...)
	logPath := filepath.Join(dir, LogDir, r.Name+".log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return outFailed, false, err
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return outFailed, false, err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "== attempt %d of run %s on %s at %s: %s %s\n", a.N, r.Name, host, a.Started.Format(time.RFC3339),
		bin, strings.Join(args, " "))

	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = os.Environ()
	if l.GOMAXPROCS > 0 {
		cmd.Env = setEnv(cmd.Env, "GOMAXPROCS", strconv.Itoa(l.GOMAXPROCS))
	}
	startInGroup(cmd)
	cmd.WaitDelay = l.Grace
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = 15 * time.Second
	}
	if err := writeAttempt(dir, r, a); err != nil {
		return outFailed, false, fmt.Errorf("run %s: %w", r.Name, err)
	}
	l.logf("start   %s (attempt %d; log %s)", r.Name, a.N, logPath)
	t0 := time.Now()
	runErr := cmd.Run()
	ended := time.Now().UTC().Truncate(time.Second)
	a.Ended = &ended
	if cmd.ProcessState != nil {
		code := exitCode(cmd.ProcessState)
		a.Exit = &code
		a.CPUSeconds = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	}
	if runErr != nil {
		a.Error = runErr.Error()
	}
	fmt.Fprintf(logf, "== attempt %d ended after %s (%.0f s of CPU): %v\n", a.N, time.Since(t0).Round(time.Second), a.CPUSeconds, errText(runErr))
	if err := writeAttempt(dir, r, a); err != nil {
		return outFailed, true, fmt.Errorf("run %s: %w", r.Name, err)
	}
	st := Check(dir, r, l.Metric)
	switch {
	case st.State == Finished:
		metric := l.Metric
		if metric == "" {
			metric = "eval/success"
		}
		val := "n/a"
		if !math.IsNaN(st.Metric) {
			val = strconv.FormatFloat(st.Metric, 'f', 3, 64)
		}
		l.logf("done    %s in %s (%.0f s of CPU): %d iterations, %d env steps, %s %s", r.Name, time.Since(t0).Round(time.Second),
			a.CPUSeconds, st.Iter, st.EnvSteps, metric, val)
		return outDone, true, nil
	case ctx.Err() != nil:
		l.logf("stopped %s at iteration %d (it resumes from its newest checkpoint next time)", r.Name, st.Iter)
		return outStopped, true, nil
	}
	tail := logTail(logPath, 5)
	l.logf("FAILED  %s after %s: %s; %s\n%s", r.Name, time.Since(t0).Round(time.Second), errText(runErr), st.Detail, tail)
	return outFailed, true, fmt.Errorf("run %s failed (%s); log: %s", r.Name, errText(runErr), logPath)
}

func errText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// setEnv returns env with key set to value (replacing any earlier setting).
func setEnv(env []string, key, value string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}

// logTail returns the last n lines of a file, indented.
func logTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var b bytes.Buffer
	for i, s := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("          | " + s)
	}
	return b.String()
}

// LocalOptions configure RunLocal.
type LocalOptions struct {
	Launcher
	// Workers is the number of runs trained at once (0: one per core).
	Workers int
}

// Result counts what an execution did.
type Result struct {
	// Runs is the number of runs in the sweep; Skipped were finished before; Done were trained now.
	Runs, Skipped, Done int
	// Busy are runs another process was training; Failed are runs whose training failed;
	// Stopped are runs interrupted by the context.
	Busy, Failed, Stopped []string
	// Started counts the training processes started: the runs Done, and those of Failed and
	// Stopped that trained before they ended.
	Started int
	// Elapsed is the wall-clock time of the execution.
	Elapsed time.Duration
}

// Finished is the number of finished runs after the execution.
func (r Result) Finished() int { return r.Skipped + r.Done }

// RunLocal trains the sweep's unfinished runs on this machine: a pool of o.Workers workers,
// each run in its own `graftrl train` process with GOMAXPROCS = cores / workers (one process
// per core by default: the fastest way to run independent runs, see GOMLX-NOTES). Finished runs
// are skipped; unfinished ones resume from their newest checkpoint (from the beginning when
// they wrote none). Cancelling ctx stops every run (SIGINT, then SIGKILL after the grace
// period) and returns an error wrapping ErrInterrupted; running the sweep again then finishes
// it. Failed runs do not stop the others; the error lists them.
func RunLocal(ctx context.Context, dir string, m *Manifest, o LocalOptions) (Result, error) {
	t0 := time.Now()
	res := Result{Runs: len(m.Runs)}
	var todo []*Run
	for i := range m.Runs {
		r := &m.Runs[i]
		if Check(dir, r, o.Metric).State == Finished {
			res.Skipped++
			continue
		}
		todo = append(todo, r)
	}
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	workers = max(1, min(workers, len(todo)))
	l := &o.Launcher
	if l.Out != nil {
		l.Out = &syncWriter{w: l.Out}
	}
	if l.GOMAXPROCS == 0 {
		l.GOMAXPROCS = max(1, runtime.NumCPU()/workers)
	}
	if len(todo) == 0 {
		l.logf("sweep %s: all %d runs are finished", m.Name, len(m.Runs))
		return res, nil
	}
	l.logf("sweep %s: %d runs, %d finished before, %d to train on %d worker(s) with GOMAXPROCS=%d; sweep directory %s",
		m.Name, len(m.Runs), res.Skipped, len(todo), workers, l.GOMAXPROCS, dir)

	queue := make(chan *Run)
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range queue {
				out, started, err := l.attempt(ctx, dir, r)
				mu.Lock()
				if started {
					res.Started++
				}
				switch out {
				case outSkipped:
					res.Skipped++
				case outDone:
					res.Done++
					l.logf("progress %d/%d runs finished", res.Finished(), res.Runs)
				case outBusy:
					res.Busy = append(res.Busy, r.Name)
					l.logf("busy    %s: another process is training it; left to it", r.Name)
				case outFailed:
					res.Failed = append(res.Failed, r.Name)
					errs = append(errs, err)
				case outStopped:
					res.Stopped = append(res.Stopped, r.Name)
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for _, r := range todo {
		select {
		case queue <- r:
		case <-ctx.Done():
			break feed
		}
	}
	close(queue)
	wg.Wait()
	res.Elapsed = time.Since(t0)
	if ctx.Err() != nil {
		return res, fmt.Errorf("sweep %s: %w after %s: %d of %d runs finished; run the same command again to finish the sweep (finished runs are kept, unfinished ones resume from their newest checkpoint)",
			m.Name, ErrInterrupted, res.Elapsed.Round(time.Second), res.Finished(), res.Runs)
	}
	if len(errs) > 0 {
		return res, fmt.Errorf("sweep %s: %d of %d runs failed:\n  %w", m.Name, len(errs), res.Runs, joinErrs(errs))
	}
	if len(res.Busy) > 0 {
		return res, fmt.Errorf("sweep %s: %d run(s) are being trained by another process (%s); run the sweep again once they finish",
			m.Name, len(res.Busy), strings.Join(res.Busy, ", "))
	}
	l.logf("sweep %s: all %d runs finished (%d trained now) in %s", m.Name, res.Runs, res.Done, res.Elapsed.Round(time.Second))
	return res, nil
}

// joined is errors.Join with each error on an indented line of its own.
type joined []error

// Error lists the errors, one per line.
func (j joined) Error() string {
	s := make([]string, len(j))
	for i, e := range j {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n  ")
}

// Unwrap returns the errors.
func (j joined) Unwrap() []error { return j }

func joinErrs(errs []error) error { return joined(errs) }

// RunOne trains run index of the sweep in dir unless it is finished (Slurm array tasks run
// it). A run another process is training is left to it.
func RunOne(ctx context.Context, dir string, index int, l *Launcher) error {
	m, err := LoadManifest(dir)
	if err != nil {
		return err
	}
	r, err := m.Run(index)
	if err != nil {
		return err
	}
	out, _, err := l.attempt(ctx, dir, r)
	switch out {
	case outSkipped:
		l.logf("skip    %s: finished before", r.Name)
	case outBusy:
		l.logf("busy    %s: another process is training it", r.Name)
	case outStopped:
		return fmt.Errorf("run %s: %w", r.Name, ErrInterrupted)
	}
	return err
}
