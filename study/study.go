// Package study runs a study: a sweep whose bases are one training config per environment and
// whose grid is estimators × seeds. Run trains the grid (locally or as one Slurm job array),
// audits a mid-training checkpoint per environment and records each invocation's time in the
// study directory (TimesFile); Notes turns those records into the report's paragraphs on the
// study's time, machine and build. The report itself is the comparison of the study's runs.
package study

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/graftrl/graftrl/audit"
	"github.com/graftrl/graftrl/bench"
	"github.com/graftrl/graftrl/rundir"
	"github.com/graftrl/graftrl/sweep"
)

// TimesFile, in the study directory, holds one line per invocation of Run (Invocation).
const TimesFile = "study-times.jsonl"

// Options are the choices of one invocation of Run beyond the sweep config.
type Options struct {
	// Binary is the graftrl executable the training processes run (empty: this one).
	Binary string
	// AuditSteps is the number of steps audited per environment and AuditMC the Monte Carlo
	// continuations per Q and per V; NoAudit skips the audits.
	AuditSteps, AuditMC int
	NoAudit             bool
	// Build is the graftrl version and commit of this invocation, recorded in TimesFile.
	Build string
	// Log receives progress lines (nil: discarded).
	Log io.Writer
}

// Invocation is one line of TimesFile.
type Invocation struct {
	Started  time.Time `json:"started"`
	Ended    time.Time `json:"ended"`
	Executor string    `json:"executor"`
	Host     string    `json:"host"`
	// WallSeconds is Ended − Started; CPUSeconds the study process's own CPU time (audits,
	// report), the training processes' being in the sweep's state files.
	WallSeconds float64 `json:"wall_s"`
	CPUSeconds  float64 `json:"cpu_s"`
	// Trained counts the runs trained (under Slurm: 1 when an array was submitted) and Audited
	// the audits made; an invocation with neither only rewrote the report.
	Trained  int  `json:"trained"`
	Audited  int  `json:"audited"`
	Finished bool `json:"finished"`
	// Build is the graftrl version and commit of the invocation (empty in logs written before
	// it was recorded).
	Build string `json:"build,omitempty"`
}

// Run prepares the study of c (its manifest), trains the runs that are not finished with c's
// executor (under Slurm it waits for the job array), audits per environment a mid-training
// checkpoint of the baseline's run with the lowest seed unless o.NoAudit, and appends the
// invocation to TimesFile in the study directory (c.Dir()), finished or not. Runs and audits
// that exist already are kept, so a finished study trains and audits nothing. It returns the
// manifest of the study.
func Run(ctx context.Context, c *sweep.Config, o Options) (*sweep.Manifest, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	m, err := c.Prepare()
	if err != nil {
		return nil, err
	}
	dir := c.Dir()
	inv := Invocation{Started: time.Now().UTC(), Executor: c.Executor, Build: o.Build}
	inv.Host, _ = os.Hostname()
	cpu0 := selfCPU()
	record := func() error {
		inv.Ended = time.Now().UTC()
		inv.WallSeconds = inv.Ended.Sub(inv.Started).Seconds()
		inv.CPUSeconds = selfCPU() - cpu0
		return appendJSONLine(filepath.Join(dir, TimesFile), inv)
	}

	fmt.Fprintf(o.Log, "study %s: %d runs (%d envs) in %s, executor %s\n", m.Name, len(m.Runs), len(c.Bases), dir, c.Executor)
	if c.Executor == sweep.ExecSlurm {
		var job string
		job, err = sweep.SubmitSlurm(ctx, dir, m, sweep.SlurmOptions{Binary: o.Binary, Wait: true, Out: o.Log})
		if job != "" {
			inv.Trained = 1
		}
	} else {
		var res sweep.Result
		res, err = sweep.RunLocal(ctx, dir, m, sweep.LocalOptions{Workers: c.Workers,
			Launcher: sweep.Launcher{Binary: o.Binary, Out: o.Log, Metric: m.Compare.Metric}})
		inv.Trained = res.Done
	}
	if err == nil && !o.NoAudit {
		inv.Audited, err = audits(ctx, dir, m, o)
	}
	if err != nil {
		if rerr := record(); rerr != nil {
			fmt.Fprintf(o.Log, "study: %v\n", rerr)
		}
		return nil, err
	}
	inv.Finished = true
	if err := record(); err != nil {
		return nil, err
	}
	return m, nil
}

// audits audits, per environment, a mid-training checkpoint of the baseline's run with the
// lowest seed (the checkpoint nearest to half its iterations), into <run>/audit; an audit that
// already exists is kept. It returns the number of audits made.
func audits(ctx context.Context, dir string, m *sweep.Manifest, o Options) (int, error) {
	base := m.Compare.Baseline
	if base == "" {
		base = "grpo"
	}
	chosen := map[string]sweep.Run{}
	for _, r := range m.Runs {
		if r.Method != base {
			continue
		}
		if old, ok := chosen[r.Env]; !ok || r.Seed < old.Seed {
			chosen[r.Env] = r
		}
	}
	envs := make([]string, 0, len(chosen))
	for env := range chosen {
		envs = append(envs, env)
	}
	sort.Strings(envs)
	done := 0
	for _, env := range envs {
		if err := ctx.Err(); err != nil {
			return done, err
		}
		r := chosen[env]
		run := filepath.Join(dir, r.RunPath())
		out := rundir.AuditPath(run)
		if _, err := os.Stat(filepath.Join(out, rundir.AuditJSON)); err == nil {
			continue
		}
		ckpt, err := MidCheckpoint(run, r.Iterations)
		if err != nil {
			return done, fmt.Errorf("study: audit of %s: %w", r.Name, err)
		}
		fmt.Fprintf(o.Log, "study: auditing %s at %s (%d steps, %d continuations each)\n", r.Name, filepath.Base(ckpt), o.AuditSteps, o.AuditMC)
		if _, err := audit.AuditRun(audit.RunOptions{Run: run, Checkpoint: ckpt, Out: out,
			Audit: audit.Options{Steps: o.AuditSteps, MC: o.AuditMC, Gamma: audit.DefaultGamma, Seed: 1, Slots: audit.DefaultSlots, Log: io.Discard}}); err != nil {
			return done, fmt.Errorf("study: audit of %s: %w", r.Name, err)
		}
		done++
	}
	return done, nil
}

// MidCheckpoint returns the checkpoint of the run directory run nearest to half of iterations
// (the earlier one on a tie): the checkpoint a study audits.
func MidCheckpoint(run string, iterations int) (string, error) {
	list, err := rundir.ListCheckpoints(run)
	if err != nil {
		return "", err
	}
	best, bestDist := "", math.MaxInt
	for _, c := range list {
		n, err := rundir.ParseCheckpointName(filepath.Base(c))
		if err != nil {
			continue
		}
		if d := abs(2*n - iterations); d < bestDist {
			best, bestDist = c, d
		}
	}
	if best == "" {
		return "", errors.New("no checkpoint (the study config must keep them: checkpoint.keep_last)")
	}
	return best, nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Notes are the report paragraphs only a study knows, from TimesFile in dir and the sweep's
// state files: its wall and CPU time, its machine, and the builds that trained and audited it
// beside build, the graftrl writing the report.
func Notes(dir string, m *sweep.Manifest, build string) ([]string, error) {
	var wall, selfCPU float64
	var parts int
	var builds []string
	data, err := os.ReadFile(filepath.Join(dir, TimesFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var inv Invocation
		if line == "" || json.Unmarshal([]byte(line), &inv) != nil {
			continue
		}
		if inv.Trained > 0 || inv.Audited > 0 {
			wall += inv.WallSeconds
			selfCPU += inv.CPUSeconds
			parts++
			if b := cmp.Or(inv.Build, unrecordedBuild); !slices.Contains(builds, b) {
				builds = append(builds, b)
			}
		}
	}
	var runCPU, runWall float64
	var hosts []string
	for _, st := range sweep.Statuses(dir, m, m.Compare.Metric) {
		if a := st.Attempt; a != nil {
			runCPU += a.CPUSeconds
			if a.Ended != nil {
				runWall += a.Ended.Sub(a.Started).Seconds()
			}
			if !slices.Contains(hosts, a.Host) {
				hosts = append(hosts, a.Host)
			}
		}
	}
	mc := bench.ProbeMachine()
	notes := []string{
		fmt.Sprintf("Time: the study took %s of wall clock in %d invocation(s) of graftrl study that trained or audited (re-runs that only rewrote the report are not counted) and %s of CPU time (%s in the %d training processes, SFT warm starts included; %s in the study process: audits and reports). The training processes' own wall times add up to %s.",
			hm(wall), parts, hm(runCPU+selfCPU), hm(runCPU), len(m.Runs), hm(selfCPU), hm(runWall)),
		fmt.Sprintf("Machine: %s, %d cores (SIMD %s), %s/%s, %s; runs trained on host(s) %s.",
			mc.CPU, mc.Cores, mc.SIMD, runtime.GOOS, runtime.GOARCH, runtime.Version(), strings.Join(hosts, ", ")),
		buildNote(builds, build),
	}
	return notes, nil
}

// unrecordedBuild stands for a TimesFile line without a build.
const unrecordedBuild = "?"

// buildNote says which graftrl trained and audited (the builds the study's training
// invocations recorded) and which wrote the report, once when they are the same.
func buildNote(trained []string, report string) string {
	if len(trained) == 0 || (len(trained) == 1 && trained[0] == report) {
		return "Build: graftrl " + report + "."
	}
	named := make([]string, len(trained))
	for i, b := range trained {
		named[i] = "graftrl " + b
		if b == unrecordedBuild {
			named[i] = "a graftrl that did not record its build"
		}
	}
	return fmt.Sprintf("Build: runs trained and audited by %s; this report written by graftrl %s.", strings.Join(named, ", "), report)
}

// hm formats seconds as hours and minutes (minutes and seconds under an hour).
func hm(s float64) string {
	d := time.Duration(s * float64(time.Second)).Round(time.Second)
	if d >= time.Hour {
		return fmt.Sprintf("%d h %02d min", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%d min %02d s", int(d.Minutes()), int(d.Seconds())%60)
}

// selfCPU is this process's user + system CPU time in seconds.
func selfCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// appendJSONLine appends v as one JSON line to path.
func appendJSONLine(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("study: %w", err)
	}
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("study: %w", err)
	}
	return f.Close()
}
