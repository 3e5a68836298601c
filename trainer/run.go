package trainer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/graftrl/graftrl/rollout"
)

// File names inside a run directory.
const (
	ConfigFile  = "config.yaml"
	MetricsFile = "metrics.jsonl"
	TimingFile  = "timing.jsonl"
	SummaryFile = "summary.json"
	CkptDir     = "checkpoints"
	stateFile   = "trainer.json"
	policyDir   = "policy"
)

// openRun creates the run directory (refusing to overwrite an existing run), writes the resolved
// config and opens the metrics files.
func (t *Trainer) openRun() error {
	if _, err := os.Stat(filepath.Join(t.dir, MetricsFile)); err == nil {
		return fmt.Errorf("run directory %s already holds a run; choose another name (--set name=...) or remove it", t.dir)
	}
	if err := os.MkdirAll(filepath.Join(t.dir, CkptDir), 0o755); err != nil {
		return fmt.Errorf("create run directory: %w", err)
	}
	if err := os.WriteFile(filepath.Join(t.dir, ConfigFile), t.cfg.YAML(), 0o644); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	var err error
	if t.metrics, err = os.Create(filepath.Join(t.dir, MetricsFile)); err != nil {
		return fmt.Errorf("create metrics: %w", err)
	}
	if t.timing, err = os.Create(filepath.Join(t.dir, TimingFile)); err != nil {
		return fmt.Errorf("create timing: %w", err)
	}
	return nil
}

func (t *Trainer) closeRun() {
	if t.metrics != nil {
		t.metrics.Close()
	}
	if t.timing != nil {
		t.timing.Close()
	}
}

// trainerState is what a checkpoint records beside the policy's variables.
type trainerState struct {
	Iter     int   `json:"iter"`
	EnvSteps int64 `json:"env_steps"`
	Tokens   int64 `json:"tokens"`
}

// saveCheckpoint writes checkpoints/iter-NNNNNN: written under a temporary name and renamed when
// complete, so a crash never leaves a half-written checkpoint in place. Only the newest
// checkpoint.keep_last are kept.
func (t *Trainer) saveCheckpoint() error {
	root := filepath.Join(t.dir, CkptDir)
	name := fmt.Sprintf("iter-%06d", t.iter)
	tmp := filepath.Join(root, ".tmp-"+name)
	_ = os.RemoveAll(tmp)
	if err := t.pol.Save(filepath.Join(tmp, policyDir)); err != nil {
		return err
	}
	st, _ := json.Marshal(trainerState{Iter: t.iter, EnvSteps: t.envSteps, Tokens: t.tokens})
	if err := os.WriteFile(filepath.Join(tmp, stateFile), st, 0o644); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	final := filepath.Join(root, name)
	_ = os.RemoveAll(final)
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	list, err := ListCheckpoints(t.dir)
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

// ListCheckpoints returns a run's checkpoint directories, oldest first.
func ListCheckpoints(runDir string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(runDir, CkptDir))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "iter-") {
			out = append(out, filepath.Join(runDir, CkptDir, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// BatchDir is the folder of saved rollout batches inside a run directory.
const BatchDir = "batches"

// saveBatch writes the iteration's rollout batch (errored episodes included, marked) to
// batches/iter-NNNNNN.json.gz.
func (t *Trainer) saveBatch(b *rollout.Batch) error {
	dir := filepath.Join(t.dir, BatchDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save batch: %w", err)
	}
	path := filepath.Join(dir, fmt.Sprintf("iter-%06d.json.gz", t.iter+1))
	return rollout.WriteReplay(path, &rollout.Replay{Iter: t.iter + 1, Env: t.cfg.Env.Name, Vocab: t.vocab.Words(), Batch: b})
}
