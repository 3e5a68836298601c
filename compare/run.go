package compare

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/internal/limits"
	"github.com/graftrl/graftrl/rundir"
	"gopkg.in/yaml.v3"
)

// TrainPrefix marks the metrics an eval point carries from the train lines: train/success is the
// mean of the train lines' success over the iterations since the previous evaluation (their
// sampled episodes: on fresh tasks when tasks.train is open), train/turns their mean length.
// The evaluation before training has none.
const TrainPrefix = "train/"

// trainMetrics are the train-line keys an eval point carries under TrainPrefix.
func trainMetrics() []string { return []string{"success", "turns", "return"} }

// DefaultMetric is the metric compared when none is chosen: greedy success on the training panel.
const DefaultMetric = "eval/success"

// Run is one training run read back from its directory.
type Run struct {
	// Dir is the run directory as given to LoadRun.
	Dir string
	// Name is the config's name (the directory's base name when the config has none).
	Name string
	// Method is what the run is compared as: the config's label when it has one, else the
	// estimator name. Callers may relabel runs (e.g. "graft-td") before Compare.
	Method string
	// Estimator is the config's estimator.name.
	Estimator string
	// Env is the config's env.name.
	Env string
	// Seed is the run seed.
	Seed uint64
	// Iterations is the number of completed iterations (summary.json, else the last train line).
	Iterations int
	// EnvSteps is the budget the run used: its final env_steps.
	EnvSteps int64
	// Tokens is the final count of trained tokens.
	Tokens int64
	// Complete reports whether the run wrote summary.json (it finished or was stopped cleanly).
	Complete bool
	// Config holds the config fields a comparison reports.
	Config RunConfig
	// ConfigYAML is config.yaml as written by the trainer.
	ConfigYAML []byte
	// Evals are the evaluation lines of metrics.jsonl in file order (iterations increasing).
	Evals []Eval
	// Init is the directory the run's initial weights came from (its warm start or policy.init)
	// and InitSHA256 their checkpoint's SHA-256, as summary.json records them; both empty for
	// random initial weights or when the run has no summary.json.
	Init, InitSHA256 string
	// EstimatorMeans are the means over the run's train lines of each estimator diagnostic
	// (the est/ keys of metrics.jsonl, such as est/merge_ratio), each over the lines that have it.
	EstimatorMeans map[string]float64
	// StepMeans are the means over the run's train lines of its step-size diagnostics
	// (est/adv_std, grad_norm, approx_kl, clip_frac, param_change), each over the lines that have
	// it; a key no line has is absent.
	StepMeans map[string]float64
	// FirstTrain holds every numeric value of the train line of iteration 1, whose batch was
	// sampled from the initial weights before any update (the warm start's own episodes, such as
	// its est/wasted_success); nil when metrics.jsonl has no such line.
	FirstTrain map[string]float64
}

// RunConfig holds the config fields that define a comparison's protocol. Zero means the key was
// absent from config.yaml.
type RunConfig struct {
	Iterations  int
	TrainTasks  int   // tasks.train: the training panel; greedy eval/success runs one episode per task
	OpenTasks   bool  // tasks.train: open — no training panel; eval/success is the held-out panel's
	EvalTasks   int   // tasks.eval: the held-out panel
	PanelSeed   int64 // tasks.panel_seed
	PerIter     int   // tasks.per_iter
	GroupSize   int   // tasks.group_size
	EvalEvery   int   // eval.every
	EvalSampled bool  // eval.sampled
	EvalAtStart bool  // eval.at_start
	WarmStart   bool  // policy.init is set or sft.demos > 0: the run starts from trained weights
}

// Eval is one evaluation: its iteration, the env steps trained so far and every numeric value
// of the line (null values, which mark numbers that could not be computed, are left out).
type Eval struct {
	Iter     int
	EnvSteps int64
	Values   map[string]float64
}

// Point is one point of a learning curve.
type Point struct {
	EnvSteps float64
	Value    float64
}

// Curve returns the run's evaluation curve of metric: one point per evaluation that has it.
func (r *Run) Curve(metric string) []Point {
	var pts []Point
	for _, e := range r.Evals {
		if v, ok := e.Values[metric]; ok {
			pts = append(pts, Point{EnvSteps: float64(e.EnvSteps), Value: v})
		}
	}
	return pts
}

// Start returns the metric at the run's evaluation before training (iteration 0, no env steps);
// ok is false when the run has no such evaluation of metric.
func (r *Run) Start(metric string) (v float64, ok bool) {
	if len(r.Evals) == 0 || r.Evals[0].Iter != 0 || r.Evals[0].EnvSteps != 0 {
		return 0, false
	}
	v, ok = r.Evals[0].Values[metric]
	return v, ok
}

// Final returns the metric at the run's last evaluation. It is an error when the run has no
// evaluation or the last one lacks the metric (an earlier value is never substituted).
func (r *Run) Final(metric string) (float64, error) {
	if len(r.Evals) == 0 {
		return 0, fmt.Errorf("run %s: %s has no eval line", r.Dir, rundir.MetricsFile)
	}
	last := r.Evals[len(r.Evals)-1]
	v, ok := last.Values[metric]
	if !ok {
		return 0, fmt.Errorf("run %s: the last evaluation (iter %d) has no value for %q (metrics there: %s)",
			r.Dir, last.Iter, metric, strings.Join(sortedKeys(last.Values), ", "))
	}
	return v, nil
}

// LoadError is a problem in one input file, at a line when the file is line-oriented.
type LoadError struct {
	File string
	Line int // 0 when the problem is not on one line
	Err  error
}

// Error is "file:line: problem".
func (e *LoadError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

// Unwrap returns the underlying problem.
func (e *LoadError) Unwrap() error { return e.Err }

// LoadRun reads a run directory. config.yaml and metrics.jsonl are required; summary.json is
// read when present (a run without it is loaded but marked incomplete). Corrupt input is a
// *LoadError naming the file and, for metrics.jsonl, the line. Every file is read within its
// size limit (config.yaml the config limit, metrics.jsonl and summary.json the metrics limit of
// internal/limits): one over it is an error naming the file, the limit and the variable that
// raises it, which wraps limits.ErrTooLarge.
func LoadRun(dir string) (*Run, error) { return LoadRunContext(context.Background(), dir) }

// LoadRunContext is LoadRun that stops when ctx is cancelled, with an error wrapping
// ErrInterrupted, even while a read waits on a file that is slow to give its bytes (a pipe).
func LoadRunContext(ctx context.Context, dir string) (*Run, error) {
	if ctx.Err() != nil {
		return nil, interrupted("reading " + dir)
	}
	r := &Run{Dir: dir, Name: filepath.Base(filepath.Clean(dir))}
	if err := r.loadConfig(filepath.Join(dir, rundir.ConfigFile)); err != nil {
		return nil, err
	}
	last, err := r.loadMetrics(ctx, filepath.Join(dir, rundir.MetricsFile))
	if err != nil {
		return nil, err
	}
	r.Iterations, r.EnvSteps, r.Tokens = last.iter, last.envSteps, last.tokens
	if err := r.loadSummary(filepath.Join(dir, rundir.SummaryFile)); err != nil {
		return nil, err
	}
	return r, nil
}

// LoadRuns loads every directory; the error joins the problems of all directories that failed,
// so that one pass shows every broken run.
func LoadRuns(dirs []string) ([]*Run, error) { return LoadRunsContext(context.Background(), dirs) }

// LoadRunsContext is LoadRuns that stops when ctx is cancelled, with an error wrapping
// ErrInterrupted.
func LoadRunsContext(ctx context.Context, dirs []string) ([]*Run, error) {
	var runs []*Run
	var errs []error
	for _, d := range dirs {
		r, err := LoadRunContext(ctx, d)
		if errors.Is(err, ErrInterrupted) {
			return nil, err
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		runs = append(runs, r)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return runs, nil
}

// FindRuns returns every directory under root (root included) that holds a metrics.jsonl,
// sorted. It does not descend into a run's own subdirectories (checkpoints, batches).
func FindRuns(root string) ([]string, error) {
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if _, err := os.Stat(filepath.Join(path, rundir.MetricsFile)); err == nil {
			dirs = append(dirs, path)
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("find runs under %s: %w", root, err)
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("find runs under %s: no directory holds a %s", root, rundir.MetricsFile)
	}
	sort.Strings(dirs)
	return dirs, nil
}

// loadConfig reads the run's config.yaml as train reads it (config.Decode: its keys and types,
// the defaults for what it leaves out); the ranges of its values are the trainer's concern.
func (r *Run) loadConfig(path string) error {
	data, err := limits.Config.ReadFile(path)
	if err != nil {
		return fileError(path, err)
	}
	c, err := config.Decode(path, data, nil)
	if err != nil {
		var ce *config.Error
		if errors.As(err, &ce) {
			err = errors.New(ce.Msg)
		}
		return &LoadError{File: path, Err: err}
	}
	if err := namesSections(data); err != nil {
		return &LoadError{File: path, Err: err}
	}
	if c.Name != "" {
		r.Name = c.Name
	}
	r.Env, r.Estimator = c.Env.Name, c.Estimator.Name
	r.Method = r.Estimator
	if c.Label != "" {
		r.Method = c.Label
	}
	r.Seed = c.Seed
	r.Config = RunConfig{Iterations: c.Iterations, TrainTasks: c.Tasks.Train.Size, OpenTasks: c.Tasks.Train.Open, EvalTasks: c.Tasks.Eval,
		PanelSeed: c.Tasks.PanelSeed, PerIter: c.Tasks.PerIter, GroupSize: c.Tasks.GroupSize,
		EvalEvery: c.Eval.Every, EvalSampled: c.Eval.Sampled, EvalAtStart: c.Eval.AtStart,
		WarmStart: c.Policy.Init != "" || c.SFT.Demos > 0}
	r.ConfigYAML = data
	return nil
}

// namesSections refuses a config.yaml that does not name its env and its estimator: train
// writes both, and the defaults that config.Decode fills in for a missing section would file the
// run under an env or a method it may not have had.
func namesSections(data []byte) error {
	var top map[string]any
	if err := yaml.Unmarshal(data, &top); err != nil {
		return err
	}
	for _, key := range []string{"env", "estimator"} {
		switch v := top[key].(type) {
		case nil:
			return fmt.Errorf("no %s section (a run's config.yaml names its %s)", key, key)
		case map[string]any:
			if name, ok := v["name"].(string); !ok || name == "" {
				return fmt.Errorf("%s: must be a name or a mapping with a name key", key)
			}
		}
	}
	return nil
}

// lastSeen is what the last lines of metrics.jsonl say about the run's progress.
type lastSeen struct {
	iter     int
	envSteps int64
	tokens   int64
}

// interruptCheckLines is how many lines of metrics.jsonl are read between two looks at the
// context: often enough to stop at once, rarely enough to cost nothing.
const interruptCheckLines = 1024

// loadMetrics reads metrics.jsonl into r.Evals, r.EstimatorMeans, r.StepMeans and
// r.FirstTrain and returns the progress its last lines record.
func (r *Run) loadMetrics(ctx context.Context, path string) (lastSeen, error) {
	f, err := limits.Metrics.Open(path)
	if err != nil {
		return lastSeen{}, fileError(path, err)
	}
	defer f.Close()
	// A read that waits (a pipe, a stalled network file system) is ended by closing the file
	// when ctx is cancelled; the loop's own checks see to a file that keeps giving lines.
	defer context.AfterFunc(ctx, func() { f.Close() })()
	// A read error ends the scan after one more token: the bytes read before it, which are
	// the cut-off start of a line when the file hit its limit. The error, not that line's,
	// is then the problem.
	rd := &errReader{r: f}
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 0, 64*1024), 64*1024*1024)
	lineNo := 0
	ml := metricsLog{run: r, est: map[string][]float64{}, step: map[string][]float64{}, since: map[string][]float64{}}
	for sc.Scan() {
		lineNo++
		if lineNo%interruptCheckLines == 0 && ctx.Err() != nil {
			return ml.last, interrupted("reading " + path)
		}
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if err := ml.add(line); err != nil {
			if errors.Is(rd.err, limits.ErrTooLarge) {
				return ml.last, rd.err
			}
			return ml.last, &LoadError{File: path, Line: lineNo, Err: err}
		}
	}
	if ctx.Err() != nil {
		return ml.last, interrupted("reading " + path)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, limits.ErrTooLarge) {
			return ml.last, err // it names the file and the limit
		}
		return ml.last, &LoadError{File: path, Line: lineNo + 1, Err: err}
	}
	r.EstimatorMeans = make(map[string]float64, len(ml.est))
	for k, vs := range ml.est {
		r.EstimatorMeans[k] = Mean(vs)
	}
	r.StepMeans = make(map[string]float64, len(ml.step))
	for k, vs := range ml.step {
		r.StepMeans[k] = Mean(vs)
	}
	if len(r.Evals) == 0 {
		return ml.last, &LoadError{File: path, Err: errors.New(`no "eval" line: the run has not been evaluated yet`)}
	}
	return ml.last, nil
}

// metricsLog reads the lines of metrics.jsonl into a Run, one at a time.
type metricsLog struct {
	run  *Run
	last lastSeen
	// est holds the est/ diagnostics of every train line, step its step-size diagnostics.
	est, step map[string][]float64
	// since holds the trainMetrics of the train lines since the last eval line.
	since map[string][]float64
}

// add reads one non-blank line; its error is the line's problem.
func (m *metricsLog) add(line []byte) error {
	typ, values, err := metricsLine(line)
	if err != nil {
		return err
	}
	if typ != "train" && typ != "eval" {
		return nil // other line types (future additions) carry nothing a comparison reads
	}
	iter, steps, err := m.advance(values)
	if err != nil {
		return err
	}
	if typ == "train" {
		if iter == 1 && m.run.FirstTrain == nil {
			m.run.FirstTrain = values
		}
		m.addTrain(values)
		return nil
	}
	return m.addEval(iter, steps, values)
}

// metricsLine decodes a line: its type and, for the train and eval lines a comparison reads,
// every numeric value (nil for other types).
func metricsLine(line []byte) (string, map[string]float64, error) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return "", nil, fmt.Errorf("invalid JSON: %v", err)
	}
	if dec.More() {
		return "", nil, errors.New("invalid JSON: more than one value on the line")
	}
	if m == nil {
		return "", nil, errors.New("expected a JSON object, got null")
	}
	typ, ok := m["type"].(string)
	if !ok {
		return "", nil, errors.New(`missing or non-string "type" (want "train" or "eval")`)
	}
	if typ != "train" && typ != "eval" {
		return typ, nil, nil
	}
	values := map[string]float64{}
	for k, v := range m {
		num, isNum := v.(json.Number)
		if !isNum {
			continue
		}
		x, err := num.Float64()
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return "", nil, fmt.Errorf("key %q: %s is not a finite number", k, num)
		}
		values[k] = x
	}
	return typ, values, nil
}

// advance reads a line's iter and env_steps, which never decrease, into m.last.
func (m *metricsLog) advance(values map[string]float64) (iter, steps int64, err error) {
	if iter, err = intKey(values, "iter"); err != nil {
		return 0, 0, err
	}
	if steps, err = intKey(values, "env_steps"); err != nil {
		return 0, 0, err
	}
	if steps < m.last.envSteps {
		return 0, 0, fmt.Errorf("env_steps %d decreases (the previous line had %d)", steps, m.last.envSteps)
	}
	if int(iter) < m.last.iter {
		return 0, 0, fmt.Errorf("iter %d decreases (the previous line had %d)", iter, m.last.iter)
	}
	m.last.iter, m.last.envSteps = int(iter), steps
	return iter, steps, nil
}

// addTrain keeps a train line's tokens, diagnostics, step sizes and trainMetrics.
func (m *metricsLog) addTrain(values map[string]float64) {
	if tok, ok := values["tokens"]; ok {
		m.last.tokens = int64(tok)
	}
	for k, v := range values {
		if strings.HasPrefix(k, "est/") {
			m.est[k] = append(m.est[k], v)
		}
	}
	for _, k := range stepSizeKeys() {
		if v, ok := values[k]; ok {
			m.step[k] = append(m.step[k], v)
		}
	}
	for _, k := range trainMetrics() {
		if v, ok := values[k]; ok {
			m.since[k] = append(m.since[k], v)
		}
	}
}

// addEval appends an eval line to the run's evaluations, with the means of the train lines
// since the previous one as train/ metrics.
func (m *metricsLog) addEval(iter, steps int64, values map[string]float64) error {
	r := m.run
	if n := len(r.Evals); n > 0 && r.Evals[n-1].Iter >= int(iter) {
		return fmt.Errorf("eval at iter %d repeats or precedes the eval at iter %d", iter, r.Evals[n-1].Iter)
	}
	delete(values, "iter")
	delete(values, "env_steps")
	for k, vs := range m.since {
		if len(vs) > 0 {
			values[TrainPrefix+k] = Mean(vs)
		}
		m.since[k] = vs[:0]
	}
	r.Evals = append(r.Evals, Eval{Iter: int(iter), EnvSteps: steps, Values: values})
	return nil
}

// errReader is a reader that keeps the first error its reader gave.
type errReader struct {
	r   io.Reader
	err error
}

// Read reads from r, keeping its first error.
func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && e.err == nil {
		e.err = err
	}
	return n, err
}

// fileError is the error of a file that could not be read: a *LoadError naming it, but for a
// file over its size limit, whose error already names the file, the limit and the variable.
func fileError(path string, err error) error {
	if errors.Is(err, limits.ErrTooLarge) {
		return err
	}
	return &LoadError{File: path, Err: err}
}

func intKey(values map[string]float64, key string) (int64, error) {
	v, ok := values[key]
	if !ok {
		return 0, fmt.Errorf("missing numeric %q", key)
	}
	if v < 0 || v != math.Trunc(v) {
		return 0, fmt.Errorf("key %q: %v is not a non-negative integer", key, v)
	}
	return int64(v), nil
}

// summaryFile is trainer.Summary without the final metrics (the comparison reads them from
// metrics.jsonl, the same numbers).
type summaryFile struct {
	Iterations *int   `json:"iterations"`
	EnvSteps   *int64 `json:"env_steps"`
	Tokens     *int64 `json:"tokens"`
	Init       string `json:"init"`
	InitSHA256 string `json:"init_sha256"`
}

func (r *Run) loadSummary(path string) error {
	data, err := limits.Metrics.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fileError(path, err)
	}
	var s summaryFile
	if err := json.Unmarshal(data, &s); err != nil {
		return &LoadError{File: path, Err: fmt.Errorf("invalid JSON: %v", err)}
	}
	if s.EnvSteps == nil || s.Iterations == nil {
		return &LoadError{File: path, Err: errors.New(`missing "env_steps" or "iterations"`)}
	}
	if *s.EnvSteps < r.EnvSteps {
		return &LoadError{File: path, Err: fmt.Errorf("env_steps %d is less than the %d of %s", *s.EnvSteps, r.EnvSteps, rundir.MetricsFile)}
	}
	r.Complete = true
	r.Iterations, r.EnvSteps = *s.Iterations, *s.EnvSteps
	r.Init, r.InitSHA256 = s.Init, s.InitSHA256
	if s.Tokens != nil {
		r.Tokens = *s.Tokens
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
