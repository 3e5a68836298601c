package main

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

	"github.com/spf13/cobra"

	"github.com/graftrl/graftrl/audit"
	"github.com/graftrl/graftrl/bench"
	"github.com/graftrl/graftrl/rundir"
	"github.com/graftrl/graftrl/sweep"
)

// DefaultStudyConfig is the study `graftrl study` runs without --config.
const DefaultStudyConfig = "configs/study.yaml"

// studyTimesFile, in the study directory, holds one line per invocation of `graftrl study`.
const studyTimesFile = "study-times.jsonl"

// studyOptions are the flags of `graftrl study`.
type studyOptions struct {
	config     string
	executor   string
	out        string
	report     string
	workers    int
	auditSteps int
	auditMC    int
	noAudit    bool
	binary     string // graftrl executable the runs use (default: this one)
	command    string
	out1, log  io.Writer
}

func newStudyCmd() *cobra.Command {
	o := &studyOptions{}
	cmd := &cobra.Command{
		Use:   "study [--config configs/study.yaml] [--executor local|slurm] [--out DIR]",
		Short: "Run the study (every estimator on every env, paired seeds) and write its report",
		Long: `Run a study: a sweep whose bases are one training config per environment and whose grid is
estimators × seeds (configs/study.yaml), so every run of an (env, seed) starts from the same
warm start. It trains the grid locally (--workers processes) or as one Slurm job array
(--executor slurm, which waits for the array), audits a mid-training checkpoint per environment
(the baseline's run of the first seed: each estimator against the Monte Carlo true advantage),
then writes the comparison report with the ranking in words, the state-sharing and audit
columns, the study's wall and CPU time, the machine and the commit.

Running it again skips finished runs and audits, so an interrupted study continues where it
stopped, and a finished one only rewrites its report.

  --out DIR      the study directory (default: the config's out_dir/name)
  --report DIR   where the report goes (default: DIR/report)`,
		Example: `  graftrl study
  # as one Slurm job array (the command waits for it), without the audits
  graftrl study --executor slurm --no-audit
  # 4 local runs at a time, the study directory elsewhere
  graftrl study --workers 4 --out /tmp/study`,
		Args: noArgs("study"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.out1, o.log = cmd.OutOrStdout(), cmd.ErrOrStderr()
			o.command = commandLineOf(cmd, []string{"config", "executor", "out", "report", "workers", "audit-steps", "audit-mc", "no-audit"})
			ctx, stop := interruptContext(cmd.Context(), o.log)
			defer stop()
			return studyRun(ctx, o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.config, "config", "c", DefaultStudyConfig, "study config (a sweep config with bases: one per env)")
	f.StringVar(&o.executor, "executor", "", "local or slurm (default: the config's executor)")
	f.StringVar(&o.out, "out", "", "study directory (default: the config's out_dir/name)")
	f.StringVar(&o.report, "report", "", "report directory (default: the study directory's report/)")
	f.IntVar(&o.workers, "workers", -1, "local executor: runs at once (0: one per core; default: the config's workers)")
	f.IntVar(&o.auditSteps, "audit-steps", 120, "steps audited per environment")
	f.IntVar(&o.auditMC, "audit-mc", 16, "Monte Carlo continuations per Q and per V in the audits")
	f.BoolVar(&o.noAudit, "no-audit", false, "skip the advantage audits")
	return cmd
}

// commandLineOf rebuilds the command as typed: its path and the named flags that were set.
func commandLineOf(cmd *cobra.Command, names []string) string {
	parts := []string{cmd.CommandPath()}
	for _, name := range names {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			parts = append(parts, "--"+name+"="+f.Value.String())
		}
	}
	return strings.Join(parts, " ")
}

// studyInvocation is one line of study-times.jsonl.
type studyInvocation struct {
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

func studyRun(ctx context.Context, o *studyOptions) error {
	switch {
	case o.auditSteps < 1:
		return &usageError{fmt.Sprintf("study: --audit-steps %d: must be ≥ 1", o.auditSteps)}
	case o.auditMC < 2:
		return &usageError{fmt.Sprintf("study: --audit-mc %d: must be ≥ 2", o.auditMC)}
	case o.executor != "" && o.executor != sweep.ExecLocal && o.executor != sweep.ExecSlurm:
		return &usageError{fmt.Sprintf("study: --executor %q is not allowed (allowed: local, slurm)", o.executor)}
	}
	c, err := loadSweep(o.config, "")
	if err != nil {
		return err
	}
	if o.out != "" {
		c.OutDir, c.Name = filepath.Dir(filepath.Clean(o.out)), filepath.Base(filepath.Clean(o.out))
	}
	if o.executor != "" {
		c.Executor = o.executor
	}
	if o.workers >= 0 {
		c.Workers = o.workers
	}
	m, err := c.Prepare()
	if err != nil {
		return err
	}
	dir := c.Dir()
	inv := studyInvocation{Started: time.Now().UTC(), Executor: c.Executor, Build: versionString()}
	inv.Host, _ = os.Hostname()
	cpu0 := selfCPU()
	record := func() error {
		inv.Ended = time.Now().UTC()
		inv.WallSeconds = inv.Ended.Sub(inv.Started).Seconds()
		inv.CPUSeconds = selfCPU() - cpu0
		return appendJSONLine(filepath.Join(dir, studyTimesFile), inv)
	}

	fmt.Fprintf(o.log, "study %s: %d runs (%d envs) in %s, executor %s\n", m.Name, len(m.Runs), len(c.Bases), dir, c.Executor)
	if c.Executor == sweep.ExecSlurm {
		var job string
		job, err = sweep.SubmitSlurm(ctx, dir, m, sweep.SlurmOptions{Binary: o.binary, Wait: true, Out: o.log})
		if job != "" {
			inv.Trained = 1
		}
	} else {
		var res sweep.Result
		res, err = sweep.RunLocal(ctx, dir, m, sweep.LocalOptions{Workers: c.Workers,
			Launcher: sweep.Launcher{Binary: o.binary, Out: o.log, Metric: m.Compare.Metric}})
		inv.Trained = res.Done
	}
	if err == nil && !o.noAudit {
		inv.Audited, err = studyAudits(ctx, dir, m, o)
	}
	if err != nil {
		if rerr := record(); rerr != nil {
			fmt.Fprintf(o.log, "study: %v\n", rerr)
		}
		return err
	}
	inv.Finished = true
	if err := record(); err != nil {
		return err
	}
	notes, err := studyNotes(dir, m, o)
	if err != nil {
		return err
	}
	return compareRun(ctx, &compareOptions{dir: dir, outDir: o.report, budgetTol: -1, workers: -1,
		command: o.command, notes: notes, out: o.out1, log: o.log})
}

// studyAudits audits, per environment, a mid-training checkpoint of the baseline's run with the
// lowest seed (the checkpoint nearest to half its iterations), into <run>/audit; an audit that
// already exists is kept.
func studyAudits(ctx context.Context, dir string, m *sweep.Manifest, o *studyOptions) (int, error) {
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
		ckpt, err := midCheckpoint(run, r.Iterations)
		if err != nil {
			return done, fmt.Errorf("study: audit of %s: %w", r.Name, err)
		}
		fmt.Fprintf(o.log, "study: auditing %s at %s (%d steps, %d continuations each)\n", r.Name, filepath.Base(ckpt), o.auditSteps, o.auditMC)
		if _, err := audit.AuditRun(audit.RunOptions{Run: run, Checkpoint: ckpt, Out: out,
			Audit: audit.Options{Steps: o.auditSteps, MC: o.auditMC, Gamma: audit.DefaultGamma, Seed: 1, Slots: audit.DefaultSlots, Log: io.Discard}}); err != nil {
			return done, fmt.Errorf("study: audit of %s: %w", r.Name, err)
		}
		done++
	}
	return done, nil
}

// midCheckpoint returns the run's checkpoint nearest to half of iterations (the earlier one on
// a tie).
func midCheckpoint(run string, iterations int) (string, error) {
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

// studyNotes are the report paragraphs only a study knows: its time, its machine, its commit.
func studyNotes(dir string, m *sweep.Manifest, o *studyOptions) ([]string, error) {
	var wall, selfCPU float64
	var parts int
	var builds []string
	data, err := os.ReadFile(filepath.Join(dir, studyTimesFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var inv studyInvocation
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
		buildNote(builds, versionString()),
	}
	return notes, nil
}

// unrecordedBuild stands for a study-times.jsonl line without a build.
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
