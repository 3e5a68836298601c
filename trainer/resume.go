package trainer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/rundir"
)

// resumableKeys may differ between a run's recorded config and the config it is resumed with:
// they change how long the run goes or what it writes, not what it computes.
var resumableKeys = map[string]bool{
	"iterations": true, "env_steps": true, "resume": true, "save_batches": true,
	"checkpoint.every": true, "checkpoint.keep_last": true, "faults.step_timeout": true,
	"faults.max_error_share": true, "faults.max_skipped_updates": true, "faults.retries": true,
}

// ConfigDiff lists the keys whose values differ between two configs, as "key: old → new" lines,
// leaving out the keys a resumed run may change.
func ConfigDiff(recorded, current *config.Config) []string {
	a, b := flattenConfig(recorded), flattenConfig(current)
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var out []string
	for k := range keys {
		if resumableKeys[k] || locationKeys[k] || reflect.DeepEqual(a[k], b[k]) {
			continue
		}
		out = append(out, fmt.Sprintf("%s: %v → %v", k, show(a[k]), show(b[k])))
	}
	sort.Strings(out)
	return out
}

func show(v any) string {
	if v == nil {
		return "(absent)"
	}
	return fmt.Sprint(v)
}

// flattenConfig renders a config as key.path → value.
func flattenConfig(c *config.Config) map[string]any {
	var m map[string]any
	_ = yaml.Unmarshal(c.YAML(), &m)
	out := map[string]any{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if mm, ok := v.(map[string]any); ok {
			for k, x := range mm {
				if prefix != "" {
					k = prefix + "." + k
				}
				walk(k, x)
			}
			return
		}
		out[prefix] = v
	}
	walk("", m)
	return out
}

// locationKeys say where the run directory is, not what the run computes: a run resumed from
// a copied or moved directory has other values for them.
var locationKeys = map[string]bool{"name": true, "out_dir": true}

// holdsRun reports whether dir holds a run: its config, its history (metrics, timings, a
// summary) or a checkpoint. A new run is never started over any of them.
func holdsRun(dir string) bool {
	for _, f := range []string{rundir.MetricsFile, rundir.ConfigFile, rundir.TimingFile, rundir.SummaryFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	list, _ := rundir.ListCheckpoints(dir)
	return len(list) > 0
}

// claim takes the run directory for this process and decides, from the directory and the
// config alone, whether the run may start or continue there — before any work. It creates the
// directory and takes its lock (rundir.LockFile), refusing at once, with the holder's PID, when
// another process holds it; it refuses a directory that holds a run unless resuming. For a
// resumed run it checks the config against the recorded one and against the one the checkpoint
// was trained with, picks the newest usable checkpoint and checks the length (checkLength).
// A resumed run that is finished as it is (finishedAsIs) is decided first, without the lock:
// resuming it writes nothing.
//
// A checkpoint is usable when it verifies, its trainer.json reads, and metrics.jsonl and
// timing.jsonl still hold what it recorded of them; otherwise resume falls back to the previous
// one. A run whose checkpoints are all unusable, or gone while its history (metrics, timings,
// summary) remains, is refused with the reason rather than restarted over that history.
func (t *Trainer) claim() error {
	if t.resume && t.finishedAsIs() {
		return nil
	}
	notWritable := func(err error) error {
		return &DirError{Dir: t.dir, Msg: fmt.Sprintf("output directory %s is not writable: %v", t.dir, err)}
	}
	made, err := mkdirAllMade(t.dir)
	if err != nil {
		return notWritable(err)
	}
	t.made = made
	lock := filepath.Join(t.dir, rundir.LockFile)
	release, err := rundir.TryLock(lock)
	if errors.Is(err, rundir.ErrLocked) {
		return lockedError(t.dir, lock, "run directory "+t.dir)
	}
	if err != nil {
		removeMade(t.made)
		return notWritable(err)
	}
	t.release = release
	if err := t.checkRunDir(t.logf); err != nil {
		t.abandon()
		return err
	}
	return nil
}

// finishedAsIs reports whether the run to resume is finished as it is — at its length, with
// the summary.json of its newest usable checkpoint — deciding it by reading the run directory
// only. Such a run is left as it is without taking its lock: a lock rewrites the lock file
// with this process's PID, and would fail on storage that has since become read-only, where
// "already finished" is still the answer. Whatever else the directory holds (a run to continue
// or to refuse, a summary.json to write) is decided again under the lock, so a process training
// the run still refuses this one at once.
func (t *Trainer) finishedAsIs() bool {
	var notes []string
	err := t.checkRunDir(func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) })
	if err == nil && t.finished {
		if s, ok := t.recordedSummary(); ok {
			for _, n := range notes {
				t.logf("%s", n)
			}
			t.finishedAs = &s
			return true
		}
	}
	t.recorded, t.resumeFrom, t.resumeState, t.finished = nil, "", trainerState{}, false
	return false
}

// checkRunDir is claim's look at what the directory holds; it reads the directory only, and
// says what it warns about through logf.
func (t *Trainer) checkRunDir(logf func(format string, args ...any)) error {
	exists := holdsRun(t.dir)
	if exists && !t.resume {
		return &DirError{Dir: t.dir, Msg: fmt.Sprintf("run directory %s already holds a run; resume it (--resume %s, or resume: auto), choose another name (--name) or remove it", t.dir, t.dir)}
	}
	if !exists {
		return nil
	}
	recorded, err := config.Load(filepath.Join(t.dir, rundir.ConfigFile), nil)
	if err != nil {
		return fmt.Errorf("resume %s: %w", t.dir, err)
	}
	if diff := ConfigDiff(&recorded, &t.cfg); len(diff) > 0 {
		return &DirError{Dir: t.dir, Msg: fmt.Sprintf("cannot resume %s: the config differs from the run's recorded config in keys a resumed run may not change:\n  %s\n(allowed to differ: %s)",
			t.dir, strings.Join(diff, "\n  "), allowedToDiffer)}
	}
	t.recorded = &recorded
	metricsPath := filepath.Join(t.dir, rundir.MetricsFile)
	timingPath := filepath.Join(t.dir, rundir.TimingFile)
	var reasons []string
	var st trainerState
	ckpt, err := latestUsableCheckpoint(t.dir, func(format string, args ...any) {
		reasons = append(reasons, fmt.Sprintf(format, args...))
		logf(format, args...)
	}, func(_ string, s trainerState) error {
		if err := holdsPrefix(metricsPath, s.MetricsBytes, s.MetricsSHA256); err != nil {
			return err
		}
		if err := holdsPrefix(timingPath, s.TimingBytes, ""); err != nil {
			return err
		}
		st = s
		return nil
	})
	if err != nil {
		return err
	}
	switch {
	case ckpt != "":
		if err := t.checkTrainedConfig(ckpt, st, logf); err != nil {
			return err
		}
		t.resumeFrom, t.resumeState = ckpt, st
		return t.checkLength(&recorded)
	case len(reasons) > 0:
		return &DirError{Dir: t.dir, Msg: fmt.Sprintf("cannot resume %s: no checkpoint is usable:\n  %s\nRestore the files named above (from a backup or a copy of the run), or start the run again from the beginning: remove %s, or choose another name (--name)",
			t.dir, strings.Join(reasons, "\n  "), t.dir)}
	}
	// No checkpoint at all: starting again from the beginning truncates metrics.jsonl and
	// timing.jsonl and later replaces summary.json, so that is only done when they hold nothing.
	if history := runHistory(t.dir); len(history) > 0 {
		ckpts := filepath.Join(t.dir, rundir.CheckpointsDir)
		missing := ckpts + " holds no checkpoint"
		if _, err := os.Stat(ckpts); errors.Is(err, os.ErrNotExist) {
			missing = ckpts + " is missing"
		}
		return &DirError{Dir: t.dir, Msg: fmt.Sprintf("cannot resume %s: %s, but the run's history remains (%s); starting it again from the beginning would overwrite that history.\nRestore %s (from a backup or a copy of the run), or start the run again from the beginning: remove %s, or choose another name (--name)",
			t.dir, missing, strings.Join(history, ", "), ckpts, t.dir)}
	}
	logf("warning: %s has no checkpoint; starting the run again from the beginning", t.dir)
	return nil
}

// allowedToDiffer says which keys a resumed run may change (resumableKeys, locationKeys).
const allowedToDiffer = "iterations, env_steps, checkpoint.*, faults.*, save_batches; name and out_dir follow the run directory"

// runHistory lists the files of dir that record a run's past — metrics.jsonl, timing.jsonl
// and summary.json, when not empty — each with its size in lines.
func runHistory(dir string) []string {
	var out []string
	for _, f := range []string{rundir.MetricsFile, rundir.TimingFile, rundir.SummaryFile} {
		path := filepath.Join(dir, f)
		if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
			continue
		}
		n, err := countLines(path)
		switch {
		case err != nil:
			out = append(out, f)
		case n == 1:
			out = append(out, f+" (1 line)")
		default:
			out = append(out, fmt.Sprintf("%s (%d lines)", f, n))
		}
	}
	return out
}

// countLines counts the newline-ended lines of the file at path, and a last line without one.
func countLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n, last := 0, byte('\n')
	for {
		k, err := f.Read(buf)
		if k > 0 {
			n += bytes.Count(buf[:k], []byte{'\n'})
			last = buf[k-1]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if last != '\n' {
		n++
	}
	return n, nil
}

// checkLength compares the config's length with what the resumed run holds (its checkpoint)
// and was recorded with. Fewer iterations than the run holds — or, for a run not finished yet,
// no more than it holds — are refused naming both numbers, and so is a changed env_steps budget
// the run has already reached; a length the run has reached leaves it finished.
func (t *Trainer) checkLength(recorded *config.Config) error {
	st, c := t.resumeState, t.cfg
	done := st.Iter >= recorded.Iterations || (recorded.EnvSteps > 0 && st.EnvSteps >= recorded.EnvSteps)
	switch {
	case done && c.Iterations < st.Iter:
		return &DirError{Dir: t.dir, Msg: fmt.Sprintf("cannot resume %s with iterations: %d: the run holds %d iterations, more than that (allowed: %d, which leaves it finished, or more to extend it)",
			t.dir, c.Iterations, st.Iter, st.Iter)}
	case !done && c.Iterations <= st.Iter:
		return &DirError{Dir: t.dir, Msg: fmt.Sprintf("cannot resume %s with iterations: %d: the run holds %d iterations already, of the %d it was recorded with (allowed: %d or more)",
			t.dir, c.Iterations, st.Iter, recorded.Iterations, st.Iter+1)}
	case c.EnvSteps > 0 && c.EnvSteps != recorded.EnvSteps && st.EnvSteps >= c.EnvSteps:
		allowed := fmt.Sprintf("more than %d, or 0 for no budget", st.EnvSteps)
		if recorded.EnvSteps > 0 {
			allowed += fmt.Sprintf(", or %d as recorded", recorded.EnvSteps)
		}
		return &DirError{Dir: t.dir, Msg: fmt.Sprintf("cannot resume %s with env_steps: %d: the run holds %d env steps already (allowed: %s)",
			t.dir, c.EnvSteps, st.EnvSteps, allowed)}
	}
	t.finished = st.Iter >= c.Iterations || (c.EnvSteps > 0 && st.EnvSteps >= c.EnvSteps)
	return nil
}

// unlock releases the run directory's lock (once).
func (t *Trainer) unlock() {
	if t.release != nil {
		t.release()
		t.release = nil
	}
}

// abandon undoes claim when New fails after it: the directories claim created for the run are
// removed again — a run directory New created holds nothing by then but the lock and an empty
// checkpoints/ — the lock file first and while it is still held, so that a process waiting for
// it takes a new one (rundir.Lock); then the lock is released.
func (t *Trainer) abandon() {
	if len(t.made) > 0 && t.release != nil {
		os.Remove(filepath.Join(t.dir, rundir.LockFile))
		os.Remove(filepath.Join(t.dir, rundir.CheckpointsDir))
		removeMade(t.made)
	}
	t.unlock()
}

// openRun prepares the run directory claimed by New: a resumed run restores its checkpoint and
// truncates metrics.jsonl and timing.jsonl back to it, so no iteration appears twice; config.yaml
// records the config (with its new length, when that changed).
func (t *Trainer) openRun() error {
	var st trainerState
	if t.recorded != nil {
		t.keepLocation(t.recorded)
	}
	if t.resumeFrom != "" {
		var err error
		if st, err = t.restore(t.resumeFrom); err != nil {
			return err
		}
		t.resumed = t.resumeFrom
	}
	if err := os.WriteFile(filepath.Join(t.dir, rundir.ConfigFile), t.cfg.YAML(), 0o644); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	var err error
	if t.metrics, err = openTruncated(filepath.Join(t.dir, rundir.MetricsFile), st.MetricsBytes); err != nil {
		return err
	}
	if t.timing, err = openTruncated(filepath.Join(t.dir, rundir.TimingFile), st.TimingBytes); err != nil {
		return err
	}
	return nil
}

// finishedSummary is the summary of a run New found finished: its summary.json, when that
// records the checkpoint's iteration; otherwise — a process stopped between the last checkpoint
// and summary.json — one made from the checkpoint and the last evaluation in metrics.jsonl,
// which is then written (only under the run's lock: finishedAsIs takes none, and found the
// summary.json it keeps).
func (t *Trainer) finishedSummary() (Summary, error) {
	if t.finishedAs != nil {
		return *t.finishedAs, nil
	}
	st := t.resumeState
	path := filepath.Join(t.dir, rundir.SummaryFile)
	if s, ok := t.recordedSummary(); ok {
		return s, nil
	}
	s := Summary{Iterations: st.Iter, EnvSteps: st.EnvSteps, Tokens: st.Tokens}
	final, err := lastEval(filepath.Join(t.dir, rundir.MetricsFile), st.MetricsBytes, st.Iter)
	if err != nil {
		return s, err
	}
	s.Final = final
	if s.Init = t.cfg.Policy.Init; s.Init == "" && t.cfg.SFT.Enabled() {
		s.Init = WarmStartDir(t.cfg)
	}
	if s.Init != "" {
		s.InitSHA256, _ = hashDir(filepath.Join(s.Init, rundir.PolicyDir))
	}
	data, _ := json.MarshalIndent(s, "", "  ")
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return s, fmt.Errorf("write summary: %w", err)
	}
	t.logf("note: %s lacked the %s of its last checkpoint (iteration %d); written from the checkpoint and %s", t.dir, rundir.SummaryFile, st.Iter, rundir.MetricsFile)
	return s, nil
}

// recordedSummary is the run's summary.json when it records the iteration and env steps of the
// checkpoint the run resumes from.
func (t *Trainer) recordedSummary() (Summary, bool) {
	var s Summary
	data, err := os.ReadFile(filepath.Join(t.dir, rundir.SummaryFile))
	ok := err == nil && json.Unmarshal(data, &s) == nil && s.Iterations == t.resumeState.Iter && s.EnvSteps == t.resumeState.EnvSteps
	return s, ok
}

// lastEval returns the last evaluation of iteration iter within the first n bytes of the
// metrics file at path (nil when there is none).
func lastEval(path string, n int64, iter int) (Metrics, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var last Metrics
	sc := bufio.NewScanner(io.LimitReader(f, n))
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		var m Metrics
		if json.Unmarshal(sc.Bytes(), &m) == nil && m["type"] == "eval" && m["iter"] == float64(iter) {
			last = m
		}
	}
	return last, sc.Err()
}

// keepLocation keeps the recorded name and out_dir when they still lead to the run directory
// (another spelling of the same path, the same directory from another working directory), so
// that config.yaml stays as it was; when the directory was copied or moved, config.yaml records
// where it is now, and the log says so.
func (t *Trainer) keepLocation(recorded *config.Config) {
	here, errHere := os.Stat(t.dir)
	there, errThere := os.Stat(filepath.Join(recorded.OutDir, recorded.Name))
	if errHere == nil && errThere == nil && os.SameFile(here, there) {
		t.cfg.Name, t.cfg.OutDir = recorded.Name, recorded.OutDir
		return
	}
	if recorded.Name != t.cfg.Name || recorded.OutDir != t.cfg.OutDir {
		t.logf("note: %s was recorded as %s; its config.yaml now records name %s, out_dir %s",
			t.dir, filepath.Join(recorded.OutDir, recorded.Name), t.cfg.Name, t.cfg.OutDir)
	}
}

// holdsPrefix checks that the file at path is at least n bytes long and, when sum is not empty,
// that its first n bytes have that SHA-256. The error names the file.
func holdsPrefix(path string, n int64, sum string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist) && n > 0:
		return fmt.Errorf("%s is missing; the checkpoint continues its first %d bytes", path, n)
	case err != nil && n > 0:
		return err
	case n == 0:
		return nil
	case fi.Size() < n:
		return fmt.Errorf("%s is shorter (%d bytes) than the checkpoint recorded (%d)", path, fi.Size(), n)
	}
	if sum == "" {
		return nil
	}
	got, err := prefixSHA256(path, n)
	if err != nil {
		return err
	}
	if got != sum {
		return fmt.Errorf("%s differs from what the checkpoint recorded of its first %d bytes", path, n)
	}
	return nil
}

// openTruncated opens path for appending after cutting it to size bytes (creating it if needed).
func openTruncated(path string, size int64) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if fi, err := f.Stat(); err == nil && fi.Size() < size {
		f.Close()
		return nil, fmt.Errorf("%s is shorter (%d bytes) than its checkpoint recorded (%d): the run directory was altered", path, fi.Size(), size)
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return nil, fmt.Errorf("truncate %s: %w", path, err)
	}
	if _, err := f.Seek(size, 0); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
