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
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/graftrl/graftrl/audit"
	"github.com/graftrl/graftrl/bench"
	"github.com/graftrl/graftrl/compare"
	"github.com/graftrl/graftrl/config"
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
	// Trained counts the runs trained to their end (under Slurm: 1 when an array was
	// submitted), Partial the runs whose training started but did not end (stopped by a signal,
	// or failed: the next invocation resumes them) and Audited the audits made; an invocation
	// with none of them only rewrote the report.
	Trained  int  `json:"trained"`
	Partial  int  `json:"partial,omitempty"`
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
	// Every run's config and the audit section are checked before any work.
	planned, err := c.Expand()
	if err != nil {
		return nil, err
	}
	if err := checkAuditMethods(c, planned); err != nil {
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
	fail := func(err error) (*sweep.Manifest, error) {
		if _, serr := os.Stat(dir); serr == nil {
			if rerr := record(); rerr != nil {
				fmt.Fprintf(o.Log, "study: %v\n", rerr)
			}
		}
		return nil, err
	}

	if tc := c.TuneSweep(); tc != nil {
		res, trained, err := tune(ctx, tc, c, o)
		inv.Trained += trained.done
		inv.Partial += trained.partial
		if err != nil {
			return fail(err)
		}
		if c, err = c.WithChoice(res.Chosen); err != nil {
			return fail(err)
		}
	}
	m, err := c.Prepare()
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(o.Log, "study %s: %d runs (%d bases) in %s, executor %s\n", m.Name, len(m.Runs), len(c.Bases), dir, c.Executor)
	trained, err := execute(ctx, c, m, o)
	inv.Trained += trained.done
	inv.Partial += trained.partial
	if err == nil && !o.NoAudit {
		inv.Audited, err = audits(ctx, dir, c, m, o)
	}
	if err != nil {
		return fail(err)
	}
	inv.Finished = true
	if err := record(); err != nil {
		return nil, err
	}
	return m, nil
}

// trainedCount is what an execution trained: done runs reached their end, partial runs started
// training and stopped before it.
type trainedCount struct{ done, partial int }

// execute trains the unfinished runs of m, the prepared sweep c, with c's executor (under
// Slurm it submits one job array and waits for it). It returns the runs trained (under Slurm:
// 1 done when an array was submitted).
func execute(ctx context.Context, c *sweep.Config, m *sweep.Manifest, o Options) (trainedCount, error) {
	if c.Executor == sweep.ExecSlurm {
		job, err := sweep.SubmitSlurm(ctx, c.Dir(), m, sweep.SlurmOptions{Binary: o.Binary, Wait: true, Out: o.Log})
		if job != "" {
			return trainedCount{done: 1}, err
		}
		return trainedCount{}, err
	}
	res, err := sweep.RunLocal(ctx, c.Dir(), m, sweep.LocalOptions{Workers: c.Workers,
		Launcher: sweep.Launcher{Binary: o.Binary, Out: o.Log, Metric: m.Compare.Metric}})
	return trainedCount{done: res.Done, partial: res.Started - res.Done}, err
}

// tune trains the tuning sweep tc of the study c, applies the rule and writes the result to
// the study directory (sweep.TuneFile). It returns the result and the runs trained.
func tune(ctx context.Context, tc, c *sweep.Config, o Options) (*sweep.TuneResult, trainedCount, error) {
	m, err := tc.Prepare()
	if err != nil {
		return nil, trainedCount{}, err
	}
	fmt.Fprintf(o.Log, "study %s: selecting %s among %s on seeds %v: %d tuning runs in %s\n",
		c.Name, c.Tune.Key, strings.Join(c.Tune.Values, ", "), c.Tune.Seeds, len(m.Runs), tc.Dir())
	trained, err := execute(ctx, tc, m, o)
	if err != nil {
		return nil, trained, fmt.Errorf("study: tuning: %w", err)
	}
	metric := cmp.Or(c.Tune.Metric, c.Compare.Metric, compare.DefaultMetric)
	scores := map[string]map[string][]float64{}
	var methods []string
	for _, r := range m.Runs {
		variant, value := paramOf(r, "variant"), paramOf(r, c.Tune.Key)
		run, err := compare.LoadRun(filepath.Join(tc.Dir(), r.RunPath()))
		if err != nil {
			return nil, trained, fmt.Errorf("study: tuning: %w", err)
		}
		v, err := run.Final(metric)
		if err != nil {
			return nil, trained, fmt.Errorf("study: tuning: %w", err)
		}
		if scores[variant] == nil {
			scores[variant] = map[string][]float64{}
			methods = append(methods, variant)
		}
		scores[variant][value] = append(scores[variant][value], v)
	}
	t := c.Tune
	t.Metric = metric
	res, err := t.Choose(methods, scores)
	if err != nil {
		return nil, trained, err
	}
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return nil, trained, err
	}
	if err := os.WriteFile(filepath.Join(c.Dir(), sweep.TuneFile), append(data, '\n'), 0o644); err != nil {
		return nil, trained, fmt.Errorf("study: %w", err)
	}
	for _, meth := range methods {
		fmt.Fprintf(o.Log, "study %s: %s chose %s=%s\n", c.Name, meth, c.Tune.Key, res.Chosen[meth])
	}
	return res, trained, nil
}

// paramOf is the value of the run's grid parameter key ("" when it has none).
func paramOf(r sweep.Run, key string) string {
	for _, p := range r.Params {
		if p.Key == key {
			return p.Value
		}
	}
	return ""
}

// checkAuditMethods refuses an audit section naming a method the study does not have.
func checkAuditMethods(c *sweep.Config, runs []sweep.Run) error {
	var methods []string
	for _, r := range runs {
		if !slices.Contains(methods, r.Method) {
			methods = append(methods, r.Method)
		}
	}
	for i, meth := range c.Audit.Methods {
		if !slices.Contains(methods, meth) {
			return &config.Error{File: c.File, Msg: fmt.Sprintf("audit.methods[%d]: %q is not a method of the study (allowed: %s)", i, meth, strings.Join(methods, ", "))}
		}
	}
	return nil
}

// audits audits a mid-training checkpoint (the one nearest to half its iterations) of the
// lowest-seed run of each audited method on each audited base, into <run>/audit: by default
// the compare baseline's run per base, else those the config's audit section names. An audit
// that already exists is kept. It returns the number of audits made.
func audits(ctx context.Context, dir string, c *sweep.Config, m *sweep.Manifest, o Options) (int, error) {
	methods := c.Audit.Methods
	if len(methods) == 0 {
		methods = []string{cmp.Or(m.Compare.Baseline, "grpo")}
	}
	steps, mc := cmp.Or(c.Audit.Steps, o.AuditSteps), cmp.Or(c.Audit.MC, o.AuditMC)
	type cell struct{ env, method string }
	chosen := map[cell]sweep.Run{}
	for _, r := range m.Runs {
		if !slices.Contains(methods, r.Method) || !c.Audit.Covers(r.Env, r.Base) {
			continue
		}
		k := cell{r.Env, r.Method}
		if old, ok := chosen[k]; !ok || r.Seed < old.Seed {
			chosen[k] = r
		}
	}
	cells := slices.SortedFunc(maps.Keys(chosen), func(a, b cell) int {
		return cmp.Or(strings.Compare(a.env, b.env), slices.Index(methods, a.method)-slices.Index(methods, b.method))
	})
	done := 0
	for _, k := range cells {
		if err := ctx.Err(); err != nil {
			return done, err
		}
		r := chosen[k]
		run := filepath.Join(dir, r.RunPath())
		out := rundir.AuditPath(run)
		if _, err := os.Stat(filepath.Join(out, rundir.AuditJSON)); err == nil {
			continue
		}
		ckpt, err := MidCheckpoint(run, r.Iterations)
		if err != nil {
			return done, fmt.Errorf("study: audit of %s: %w", r.Name, err)
		}
		fmt.Fprintf(o.Log, "study: auditing %s at %s (%d steps, %d continuations each)\n", r.Name, filepath.Base(ckpt), steps, mc)
		if _, err := audit.AuditRun(audit.RunOptions{Run: run, Checkpoint: ckpt, Out: out,
			Audit: audit.Options{Steps: steps, MC: mc, Gamma: audit.DefaultGamma, Seed: 1, Slots: audit.DefaultSlots, Log: io.Discard}}); err != nil {
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
// state files: its wall and CPU time, summed over every invocation that trained (a run it
// stopped included) or audited and over every attempt at each run, its machine, and the builds
// that trained and audited it beside build, the graftrl writing the report.
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
		if inv.Trained > 0 || inv.Partial > 0 || inv.Audited > 0 {
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
	nRuns := len(m.Runs)
	statuses := sweep.Statuses(dir, m, m.Compare.Metric)
	tuneNote, err := tuneNote(dir)
	if err != nil {
		return nil, err
	}
	if tuneNote != "" {
		tm, err := sweep.LoadManifest(sweep.TunePath(dir))
		if err != nil {
			return nil, err
		}
		statuses = append(statuses, sweep.Statuses(sweep.TunePath(dir), tm, tm.Compare.Metric)...)
		nRuns += len(tm.Runs)
	}
	for _, st := range statuses {
		if a := st.Attempt; a != nil {
			// A run resumed by a later invocation records its last attempt; the totals add
			// the attempts of the earlier invocations.
			runCPU += a.TotalCPUSeconds()
			runWall += a.TotalWallSeconds()
			if !slices.Contains(hosts, a.Host) {
				hosts = append(hosts, a.Host)
			}
		}
	}
	mc := bench.ProbeMachine()
	notes := []string{
		fmt.Sprintf("Time: the study took %s of wall clock in %d invocation(s) of graftrl study that trained or audited (interrupted ones included, also those that finished no run; re-runs that only rewrote the report are not counted) and %s of CPU time (%s in the training processes of its %d runs, over all their attempts, SFT warm starts included; %s in the study process: audits and reports). The training processes' own wall times, over all their attempts, add up to %s.",
			hm(wall), parts, hm(runCPU+selfCPU), hm(runCPU), nRuns, hm(selfCPU), hm(runWall)),
		fmt.Sprintf("Machine: %s, %d cores (SIMD %s), %s/%s, %s; runs trained on host(s) %s.",
			mc.CPU, mc.Cores, mc.SIMD, runtime.GOOS, runtime.GOARCH, runtime.Version(), strings.Join(hosts, ", ")),
		buildNote(builds, build),
	}
	if tuneNote != "" {
		notes = append([]string{tuneNote}, notes...)
	}
	return notes, nil
}

// tuneNote describes the study's selection (sweep.TuneFile in dir); "" when it made none.
func tuneNote(dir string) (string, error) {
	res, err := sweep.LoadTuneResult(dir)
	if err != nil || res == nil {
		return "", err
	}
	where := "every base"
	if len(res.Bases) > 0 {
		where = "the base(s) " + strings.Join(res.Bases, ", ")
	}
	var per []string
	for _, meth := range slices.Sorted(maps.Keys(res.Chosen)) {
		var means []string
		for _, v := range res.Values {
			means = append(means, fmt.Sprintf("%s %.3f", v, res.Scores[meth][v]))
		}
		per = append(per, fmt.Sprintf("%s **%s** (%s)", meth, res.Chosen[meth], strings.Join(means, ", ")))
	}
	seeds := make([]string, len(res.Seeds))
	for i, s := range res.Seeds {
		seeds[i] = strconv.FormatUint(s, 10)
	}
	return fmt.Sprintf("Selection: %s was chosen per method among %s on the tuning seeds %s (never evaluation seeds) on %s, by the rule written in the config before the evaluation runs (%s: the highest mean final %s over the tuning runs, the first listed on a tie). Chosen, with each value's mean: %s.",
		res.Key, strings.Join(res.Values, ", "), strings.Join(seeds, ", "), where, res.Rule, res.Metric, strings.Join(per, "; ")), nil
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
