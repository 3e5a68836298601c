package trainer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/internal/limits"
	"github.com/graftrl/graftrl/rundir"
)

// A checkpoint is a directory checkpoints/iter-NNNNNN holding (names in package rundir):
//
//	policy/        every GoMLX variable: weights, Adam moments and step, the reference policy
//	trainer.json   the loop's state: iteration, counters, every RNG, the task order, metrics offsets
//	MANIFEST.json  the SHA-256 of every other file, verified before anything is loaded
//
// It is written under a temporary name, every file fsynced, then renamed into place (and the
// parent directory fsynced), so the previous checkpoint stays valid until the new one is complete.

// trainerState is what a checkpoint records beside the policy's variables: everything needed for
// a resumed run to continue exactly as the uninterrupted one would have.
type trainerState struct {
	Iter     int   `json:"iter"`
	EnvSteps int64 `json:"env_steps"`
	Tokens   int64 `json:"tokens"`
	// RNG holds each random stream's PCG state (MarshalBinary).
	RNG map[string][]byte `json:"rng"`
	// Order and Cursor are the training-panel permutation and the position in it.
	Order  []int `json:"order"`
	Cursor int   `json:"cursor"`
	// SkipRun counts consecutive skipped updates.
	SkipRun int `json:"skip_run"`
	// MetricsBytes and TimingBytes are the lengths of metrics.jsonl and timing.jsonl at the
	// checkpoint: a resumed run truncates them back so no line appears twice.
	MetricsBytes int64 `json:"metrics_bytes"`
	TimingBytes  int64 `json:"timing_bytes"`
	// MetricsSHA256 is the SHA-256 of those MetricsBytes: resume uses the checkpoint only when
	// metrics.jsonl still begins with them (empty in checkpoints written before it existed).
	MetricsSHA256 string `json:"metrics_sha256,omitempty"`
	// EvalRNG is the evaluation stream's state when the evaluation of the checkpoint's iteration
	// started (absent when none ran at it): graftrl eval starts from it, so that it repeats the
	// run's own evaluation of this checkpoint, sampled episodes included.
	EvalRNG []byte `json:"eval_rng,omitempty"`
	// Config is what the run's config computes (trainedConfig: every key but those a resumed
	// run may change, with its value) and ConfigSHA256 its SHA-256 (configSHA256): resume
	// refuses a config that differs from them, naming the keys (checkTrainedConfig). Both are
	// empty in checkpoints written before they existed.
	Config       map[string]json.RawMessage `json:"config,omitempty"`
	ConfigSHA256 string                     `json:"config_sha256,omitempty"`
}

// saveCheckpoint writes the checkpoint of the current iteration and applies keep_last.
func (t *Trainer) saveCheckpoint() error {
	st := trainerState{Iter: t.iter, EnvSteps: t.envSteps, Tokens: t.tokens, RNG: map[string][]byte{},
		Order: t.order, Cursor: t.cursor, SkipRun: t.skipRun}
	for name, p := range t.pcgs {
		b, err := p.MarshalBinary()
		if err != nil {
			return fmt.Errorf("checkpoint: rng %s: %w", name, err)
		}
		st.RNG[name] = b
	}
	for _, f := range []*os.File{t.metrics, t.timing} {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("checkpoint: sync %s: %w", f.Name(), err)
		}
	}
	var err error
	if st.MetricsBytes, err = fileSize(t.metrics); err != nil {
		return err
	}
	if st.TimingBytes, err = fileSize(t.timing); err != nil {
		return err
	}
	if st.MetricsSHA256, err = prefixSHA256(t.metrics.Name(), st.MetricsBytes); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if t.evalStartIter == t.iter && t.evalStart != nil {
		st.EvalRNG = t.evalStart
	}
	st.Config = trainedConfig(&t.cfg)
	st.ConfigSHA256 = configSHA256(st.Config)
	root := filepath.Join(t.dir, rundir.CheckpointsDir)
	tmp := rundir.TempCheckpointPath(t.dir, t.iter)
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := t.pol.Save(rundir.PolicyPath(tmp)); err != nil {
		return err
	}
	if err := writeVocab(tmp, t.info.identity()); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	data, _ := json.MarshalIndent(st, "", " ")
	if err := os.WriteFile(filepath.Join(tmp, rundir.TrainerStateFile), data, 0o644); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := writeManifest(tmp); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	final := rundir.CheckpointPath(t.dir, t.iter)
	if err := os.RemoveAll(final); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := syncDir(root); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	list, err := rundir.ListCheckpoints(t.dir)
	if err != nil {
		return err
	}
	for len(list) > t.cfg.Checkpoint.KeepLast {
		if err := os.RemoveAll(list[0]); err != nil {
			return fmt.Errorf("checkpoint retention: %w", err)
		}
		list = list[1:]
	}
	return nil
}

// prefixSHA256 is the SHA-256 of the first n bytes of the file at path; a file shorter than n
// is an error.
func prefixSHA256(path string, n int64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyN(h, f, n); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func fileSize(f *os.File) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("checkpoint: %w", err)
	}
	return fi.Size(), nil
}

// writeManifest fsyncs every file under dir and records its SHA-256 in MANIFEST.json.
func writeManifest(dir string) error {
	sums := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if err == nil && path != dir {
				return syncDir(path)
			}
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		sum, err := hashFile(path, true)
		sums[filepath.ToSlash(rel)] = sum
		return err
	})
	if err != nil {
		return err
	}
	data, _ := json.MarshalIndent(sums, "", " ")
	f, err := os.Create(filepath.Join(dir, rundir.ManifestFile))
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return syncDir(dir)
}

func hashFile(path string, sync bool) (string, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if !sync {
		f, err = os.Open(path)
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	if sync {
		if err := f.Sync(); err != nil {
			return "", err
		}
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// VerifyCheckpoint checks a checkpoint directory against its manifest: every listed file present
// with the recorded SHA-256, no file missing from the list, and a readable trainer state.
func VerifyCheckpoint(dir string) error {
	if err := checkDirSize(dir); err != nil {
		return err
	}
	data, err := limits.Checkpoint.ReadFile(filepath.Join(dir, rundir.ManifestFile))
	if err != nil {
		return fmt.Errorf("no manifest: %w", err)
	}
	var sums map[string]string
	if err := json.Unmarshal(data, &sums); err != nil {
		return fmt.Errorf("corrupt manifest: %w", err)
	}
	if _, ok := sums[rundir.TrainerStateFile]; !ok {
		return errors.New("manifest lists no trainer state")
	}
	names := make([]string, 0, len(sums))
	for n := range sums {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		got, err := hashFile(filepath.Join(dir, filepath.FromSlash(n)), false)
		if err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
		if got != sums[n] {
			return fmt.Errorf("%s: checksum mismatch (file corrupt)", n)
		}
	}
	return nil
}

// checkDirSize refuses a checkpoint or warm-start directory whose files together are larger
// than the checkpoint limit (limits.Checkpoint, GRAFTRL_MAX_CHECKPOINT_BYTES), before any of them
// is read.
func checkDirSize(dir string) error {
	limit, err := limits.Checkpoint.Bytes()
	if err != nil {
		return err
	}
	var total int64
	err = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			total += info.Size()
		}
		return err
	})
	if err != nil {
		return err
	}
	if total > limit {
		return limits.Checkpoint.TooLarge(dir, limit, false)
	}
	return nil
}

// readState reads a verified checkpoint's trainer state.
func readState(dir string) (trainerState, error) {
	var st trainerState
	data, err := limits.Checkpoint.ReadFile(filepath.Join(dir, rundir.TrainerStateFile))
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("%s: %w", rundir.TrainerStateFile, err)
	}
	if iter, err := rundir.ParseCheckpointName(filepath.Base(dir)); err == nil && st.Iter != iter {
		return st, fmt.Errorf("%s: iteration %d in the checkpoint of iteration %d", rundir.TrainerStateFile, st.Iter, iter)
	}
	for _, name := range []string{"sample", "tasks", "shuffle", "eval"} {
		if len(st.RNG[name]) == 0 {
			return st, fmt.Errorf("%s: no state for the %s random stream", rundir.TrainerStateFile, name)
		}
	}
	if st.MetricsBytes < 0 || st.TimingBytes < 0 || st.EnvSteps < 0 || st.Cursor < 0 {
		return st, fmt.Errorf("%s: negative counters", rundir.TrainerStateFile)
	}
	return st, nil
}

// latestValidCheckpoint returns the newest checkpoint that passes VerifyCheckpoint and whose
// trainer state reads; each newer one that fails is reported through warn.
func latestValidCheckpoint(runDir string, warn func(format string, args ...any)) (string, error) {
	return latestUsableCheckpoint(runDir, warn, func(string, trainerState) error { return nil })
}

// latestUsableCheckpoint is latestValidCheckpoint with one more test a checkpoint must pass
// (usable); a failing one is reported and the previous one tried.
func latestUsableCheckpoint(runDir string, warn func(format string, args ...any), usable func(string, trainerState) error) (string, error) {
	list, err := rundir.ListCheckpoints(runDir)
	if err != nil {
		return "", err
	}
	for i := len(list) - 1; i >= 0; i-- {
		err := VerifyCheckpoint(list[i])
		var st trainerState
		if err == nil {
			st, err = readState(list[i])
		}
		if err == nil {
			err = usable(list[i], st)
		}
		if err != nil {
			warn("warning: checkpoint %s is not valid (%v); trying the previous one", list[i], err)
			continue
		}
		return list[i], nil
	}
	return "", nil
}

// restore loads a verified checkpoint into the trainer: weights, optimizer, RNGs, counters.
func (t *Trainer) restore(ckpt string) (trainerState, error) {
	st, err := readState(ckpt)
	if err != nil {
		return st, fmt.Errorf("checkpoint %s: %w", ckpt, err)
	}
	if m := t.info.Model; m != nil {
		// A pretrained run's checkpoint (LoRA adapters, or weights trained from the model)
		// names the model it was trained from; another file would load and mean nothing.
		words, err := readInitVocab(ckpt)
		if err != nil || !slices.Equal(words, t.info.identity()) {
			return st, &config.Error{Msg: fmt.Sprintf("policy.pretrained: checkpoint %s was not trained from %s (its %s does not name that model's SHA-256 %s)",
				ckpt, m.Path, rundir.VocabFile, m.SHA256)}
		}
	}
	if err := t.pol.Load(rundir.PolicyPath(ckpt)); err != nil {
		return st, err
	}
	if _, err := t.syncSampler(); err != nil {
		return st, err
	}
	for name, p := range t.pcgs {
		b, ok := st.RNG[name]
		if !ok {
			return st, fmt.Errorf("checkpoint %s: no state for the %s random stream", ckpt, name)
		}
		if err := p.UnmarshalBinary(b); err != nil {
			return st, fmt.Errorf("checkpoint %s: rng %s: %w", ckpt, name, err)
		}
	}
	for _, j := range st.Order {
		if j < 0 || j >= len(t.trainTasks) {
			return st, fmt.Errorf("checkpoint %s: task order does not match tasks.train = %d", ckpt, len(t.trainTasks))
		}
	}
	t.iter, t.envSteps, t.tokens = st.Iter, st.EnvSteps, st.Tokens
	t.order, t.cursor, t.skipRun = st.Order, st.Cursor, st.SkipRun
	return st, nil
}
