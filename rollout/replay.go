package rollout

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/graftrl/graftrl/internal/limits"
)

// ReplayFormat identifies graftrl batch files.
const ReplayFormat = "graftrl-batch/1"

// Replay is a saved rollout batch: the frozen input on which estimators can be compared.
type Replay struct {
	Format string `json:"format"`
	// Iter is the training iteration that collected the batch.
	Iter int `json:"iter"`
	// Env is the environment name; Vocab the token words in id order.
	Env   string   `json:"env"`
	Vocab []string `json:"vocab"`
	Batch *Batch   `json:"batch"`
}

// WriteReplay writes the replay as gzip-compressed JSON, atomically (temp file, fsync, rename).
// gzip's CRC-32 lets a reader detect corruption.
func WriteReplay(path string, r *Replay) error {
	r.Format = ReplayFormat
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-batch-*")
	if err != nil {
		return fmt.Errorf("write batch %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	zw := gzip.NewWriter(tmp)
	if err := json.NewEncoder(zw).Encode(r); err != nil {
		tmp.Close()
		return fmt.Errorf("write batch %s: %w", path, err)
	}
	if err := zw.Close(); err != nil {
		tmp.Close()
		return fmt.Errorf("write batch %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write batch %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write batch %s: %w", path, err)
	}
	return os.Rename(tmp.Name(), path)
}

// ReadReplay reads a batch file written by WriteReplay. A truncated, corrupt or inconsistent
// file is refused with an error naming the file and the problem; nothing is half-loaded. A file
// whose decompressed size is over the batch limit (limits.Batch, GRAFTRL_MAX_BATCH_BYTES) is
// refused after inflating at most that much, in constant memory.
func ReadReplay(path string) (*Replay, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("batch file: %w", err)
	}
	defer f.Close()
	r, err := decodeReplay(f, path)
	if err != nil {
		return nil, fmt.Errorf("batch file %s: %w", path, err)
	}
	return r, nil
}

// decodeReplay reads the gzip stream twice: once to count its decompressed bytes against the
// limit (nothing kept), then to decode it.
func decodeReplay(rs io.ReadSeeker, name string) (*Replay, error) {
	limit, err := limits.Batch.Bytes()
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(rs)
	if err != nil {
		return nil, fmt.Errorf("not a graftrl batch file (gzip: %v)", err)
	}
	n, err := io.CopyN(io.Discard, zr, limit+1)
	if n > limit {
		return nil, limits.Batch.TooLarge(name, limit, true)
	}
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("corrupt or truncated: %v", err)
	}
	if _, err := rs.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	if err := zr.Reset(rs); err != nil {
		return nil, fmt.Errorf("not a graftrl batch file (gzip: %v)", err)
	}
	data, err := io.ReadAll(io.LimitReader(zr, limit+1))
	if err != nil {
		return nil, fmt.Errorf("corrupt or truncated: %v", err)
	}
	if int64(len(data)) > limit { // changed between the two reads
		return nil, limits.Batch.TooLarge(name, limit, true)
	}
	var r Replay
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("corrupt: %v", err)
	}
	if r.Format != ReplayFormat {
		return nil, fmt.Errorf("format %q is not %q", r.Format, ReplayFormat)
	}
	if err := r.Batch.Validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

// Validate checks the batch's internal consistency (task indices, row layouts, finite rewards).
func (b *Batch) Validate() error {
	if b == nil {
		return errors.New("no batch")
	}
	if b.Tasks < 0 || b.Tasks > 1<<20 {
		return fmt.Errorf("tasks = %d is out of range", b.Tasks)
	}
	for i := range b.Trajs {
		t := &b.Trajs[i]
		if t.Task < 0 || t.Task >= b.Tasks {
			return fmt.Errorf("trajectory %d: task %d outside 0..%d", i, t.Task, b.Tasks-1)
		}
		if !finite(t.Outcome) {
			return fmt.Errorf("trajectory %d: outcome is not finite", i)
		}
		for s, st := range t.Steps {
			if !finite(st.Reward) {
				return fmt.Errorf("trajectory %d step %d: reward is not finite", i, s)
			}
		}
		for r, row := range t.Rows {
			if len(row.LogProb) != len(row.Tokens) || len(row.StepOf) != len(row.Tokens) {
				return fmt.Errorf("trajectory %d row %d: tokens, logprob and step_of differ in length", i, r)
			}
			for _, k := range row.StepOf {
				if k < -1 || int(k) >= len(t.Steps) {
					return fmt.Errorf("trajectory %d row %d: step index %d outside the trajectory's %d steps", i, r, k, len(t.Steps))
				}
			}
		}
	}
	return nil
}

func finite(x float64) bool { return x == x && x-x == 0 }
