package audit

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/graftrl/graftrl/rundir"
)

// RunOptions configure AuditRun.
type RunOptions struct {
	// Run is the training run directory.
	Run string
	// Checkpoint is an iteration number or a checkpoint directory (empty: the newest valid one).
	Checkpoint string
	// AllCheckpoints audits every valid checkpoint of the run instead, oldest first, and adds the
	// metrics-over-checkpoints table and plot.
	AllCheckpoints bool
	// Tasks is the number of training-panel tasks in the fresh batch (0: tasks.per_iter).
	Tasks int
	// Out is the output directory (default <run>/audit).
	Out string
	// Audit are the audit's own options.
	Audit Options
}

// AuditRun audits a training run: one checkpoint (written to Out), or with AllCheckpoints every
// one of them (each written to Out/iter-NNNNNN, the newest also to Out, and the metrics over
// checkpoints to Out/checkpoints.*). It returns the results in iteration order.
func AuditRun(o RunOptions) ([]*Result, error) {
	if o.Out == "" {
		o.Out = rundir.AuditPath(o.Run)
	}
	log := o.Audit.Log
	if log == nil {
		log = io.Discard
	}
	src, err := Open(o.Run)
	if err != nil {
		return nil, err
	}
	var ckpts []string
	if o.AllCheckpoints {
		if ckpts, err = src.Checkpoints(); err != nil {
			return nil, err
		}
		if len(ckpts) == 0 {
			return nil, fmt.Errorf("run %s: %w", o.Run, ErrNoCheckpoint)
		}
	} else {
		c, err := src.ResolveCheckpoint(o.Checkpoint)
		if err != nil {
			return nil, err
		}
		ckpts = []string{c}
	}
	var results []*Result
	for _, c := range ckpts {
		fmt.Fprintf(log, "audit: %s, checkpoint %s\n", o.Run, filepath.Base(c))
		setup, err := src.Setup(c, o.Tasks, o.Audit.Seed)
		if err != nil {
			return nil, err
		}
		r, err := Run(setup, o.Audit)
		if err != nil {
			return nil, err
		}
		r.Run, r.Checkpoint, r.Iter = o.Run, c, CheckpointIter(c)
		dir := o.Out
		if o.AllCheckpoints {
			dir = filepath.Join(o.Out, filepath.Base(c))
		}
		if err := r.Write(dir); err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	if o.AllCheckpoints {
		if err := results[len(results)-1].Write(o.Out); err != nil {
			return nil, err
		}
		if err := WriteCheckpoints(o.Out, results); err != nil {
			return nil, err
		}
	}
	return results, nil
}
