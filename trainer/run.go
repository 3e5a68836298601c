package trainer

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/graftrl/graftrl/rollout"
	"github.com/graftrl/graftrl/rundir"
)

func (t *Trainer) closeRun() {
	if t.metrics != nil {
		t.metrics.Close()
	}
	if t.timing != nil {
		t.timing.Close()
	}
}

// saveBatch writes the iteration's rollout batch (errored episodes included, marked) to
// batches/iter-NNNNNN.json.gz.
func (t *Trainer) saveBatch(b *rollout.Batch) error {
	path := rundir.BatchPath(t.dir, t.iter+1)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("save batch: %w", err)
	}
	return rollout.WriteReplay(path, &rollout.Replay{Iter: t.iter + 1, Env: t.cfg.Env.Name, Vocab: t.info.identity(), Batch: b})
}

// checkWritable makes sure the run directory can take the run before any training: it creates
// it, writes and fsyncs a probe file, and, where the system reports free space (diskFree), checks
// that it holds the checkpoints kept plus a margin for metrics.
func checkWritable(dir string, numParams int) error {
	if err := os.MkdirAll(filepath.Join(dir, rundir.CheckpointsDir), 0o755); err != nil {
		return fmt.Errorf("output directory %s is not writable: %w", dir, err)
	}
	probe := filepath.Join(dir, rundir.WriteProbe)
	f, err := os.Create(probe)
	if err == nil {
		_, err = f.Write(make([]byte, 64<<10))
		if err == nil {
			err = f.Sync()
		}
		f.Close()
	}
	os.Remove(probe)
	if err != nil {
		return fmt.Errorf("output directory %s is not writable: %w", dir, err)
	}
	if free, ok := diskFree(dir); ok {
		// Weights, two Adam moments and possibly a reference copy, per kept checkpoint and one in flight.
		need := int64(numParams)*4*4*4 + 64<<20
		if free < need {
			return fmt.Errorf("output directory %s has %d MB free; the run needs at least %d MB (checkpoints and metrics)", dir, free>>20, need>>20)
		}
	}
	return nil
}
