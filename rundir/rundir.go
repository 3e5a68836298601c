// Package rundir names the files of a training run directory, <out_dir>/<name>: what the trainer
// writes there, the layout of its checkpoints and what an advantage audit adds. It is the one
// place these names are spelt; the trainer, the comparison, the audit, sweeps, benchmarks and the
// CLI all take them from here. It depends on the standard library only, and on disk it does two
// things besides naming: ListCheckpoints reads the checkpoints folder, and Lock, TryLock and
// LockHolder hold the run's lock and read its holder's PID (lock.go). It reads and writes no other
// file: writing the run is its callers' job.
//
// A run directory holds:
//
//	config.yaml                  the resolved config the run trains with
//	metrics.jsonl                one JSON line per iteration and per evaluation
//	timing.jsonl                 one JSON line of timings per iteration
//	summary.json                 the outcome, written when the run ends
//	.lock                        held by the process that trains the run (its PID inside)
//	checkpoints/iter-NNNNNN/     a checkpoint: policy/, vocab.txt, trainer.json, MANIFEST.json
//	batches/iter-NNNNNN.json.gz  a saved rollout batch (save_batches)
//	audit/                       the newest advantage audit (graftrl audit)
//
// A warm start (graftrl sft, or the sft section of a training config) is a folder of its own,
// <out_dir>/sft/<env>-seed<seed>-<key>/, holding policy/, vocab.txt and sft.json, and beside it
// <folder>.lock, held while the folder is computed (and removed when computing it fails). Any
// folder with policy/ and vocab.txt — a warm start or a checkpoint — can start a run
// (policy.init).
package rundir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Files and folders at the top of a run directory.
const (
	// ConfigFile is the resolved config the run trains with (a resumed run checks against it).
	ConfigFile = "config.yaml"
	// MetricsFile has one JSON line per iteration ("type": "train") and per evaluation ("eval").
	MetricsFile = "metrics.jsonl"
	// TimingFile has one JSON line of wall-clock timings per iteration.
	TimingFile = "timing.jsonl"
	// SummaryFile is the run's outcome, written once it finished or was stopped cleanly.
	SummaryFile = "summary.json"
	// CheckpointsDir holds the checkpoints, one folder each (CheckpointName).
	CheckpointsDir = "checkpoints"
	// BatchesDir holds the saved rollout batches (BatchName).
	BatchesDir = "batches"
	// AuditDir is the default output folder of an advantage audit (the Audit* files).
	AuditDir = "audit"
	// WriteProbe is the scratch file a run writes and removes to check that its directory
	// takes writes before training starts.
	WriteProbe = ".write-probe"
	// LockFile is the run directory's lock: the process that trains the run holds an exclusive
	// advisory lock (flock) on it and writes its PID into it, so that a second process is refused
	// at once, naming the first. The file stays; only the lock matters. Resuming a run that is
	// already finished takes no lock: it reads the directory and writes nothing, this file
	// included.
	LockFile = ".lock"
)

// Files inside a checkpoint folder.
const (
	// PolicyDir holds every variable of the policy (weights, Adam moments and step, the
	// reference policy), as written by the policy package's Save.
	PolicyDir = "policy"
	// TrainerStateFile is the training loop's state: iteration, counters, random streams,
	// task order, metrics offsets.
	TrainerStateFile = "trainer.json"
	// ManifestFile records the SHA-256 of every other file of the checkpoint.
	ManifestFile = "MANIFEST.json"
	// VocabFile lists the vocabulary the policy was trained with, one word per line in id order
	// (in checkpoints and warm starts: what policy.init checks against the env's vocabulary).
	VocabFile = "vocab.txt"
)

// Warm starts.
const (
	// WarmStartsDir, under out_dir, holds the warm starts that training configs compute.
	WarmStartsDir = "sft"
	// SFTReportFile describes a warm start: its config, demonstrations and loss curve.
	SFTReportFile = "sft.json"
)

// Files an advantage audit writes into its output folder (AuditDir unless told otherwise); with
// every checkpoint audited, each one's files go to a subfolder named like the checkpoint.
const (
	// AuditJSON holds the whole result: every audited step with its truth and estimates.
	AuditJSON = "audit.json"
	// AuditMarkdown is the audit's report.
	AuditMarkdown = "audit.md"
	// AuditTable is the metrics table as CSV: a header row, then one row per estimator.
	AuditTable = "table.csv"
	// AuditSummary is one paragraph saying what was audited and how.
	AuditSummary = "summary.txt"
	// AuditScatter names the scatter plot of estimates against the truth (.png and .svg).
	AuditScatter = "scatter"
	// AuditCheckpointsCSV is the metrics over training checkpoints, one row per checkpoint and
	// estimator.
	AuditCheckpointsCSV = "checkpoints.csv"
	// AuditCheckpointsMarkdown is the same table as Markdown, with the plot.
	AuditCheckpointsMarkdown = "checkpoints.md"
	// AuditCheckpointsPlot names the plot of the metrics over checkpoints (.png and .svg).
	AuditCheckpointsPlot = "checkpoints"
)

const (
	iterPrefix = "iter-"
	iterDigits = 6
	tempPrefix = ".tmp-"
	batchExt   = ".json.gz"
)

// CheckpointName is the folder name of the checkpoint written after iteration iter ≥ 0:
// iter-NNNNNN, six digits or more.
func CheckpointName(iter int) string { return iterName(iter) }

// iterName is iter-NNNNNN, the stem of checkpoint and batch names.
func iterName(iter int) string { return fmt.Sprintf("%s%0*d", iterPrefix, iterDigits, iter) }

// ParseCheckpointName returns the iteration of a checkpoint folder name written by
// CheckpointName. Anything else (another prefix, a sign, too few digits, a suffix, a temporary
// name) is an error.
func ParseCheckpointName(name string) (int, error) {
	digits, ok := strings.CutPrefix(name, iterPrefix)
	if ok && len(digits) >= iterDigits && strings.Trim(digits, "0123456789") == "" {
		if n, err := strconv.Atoi(digits); err == nil && CheckpointName(n) == name {
			return n, nil
		}
	}
	return 0, fmt.Errorf("%q is not a checkpoint name (want %s and %d or more digits without extra leading zeros, e.g. %s)",
		name, iterPrefix, iterDigits, CheckpointName(80))
}

// CheckpointPath is the checkpoint folder of iteration iter in run directory run.
func CheckpointPath(run string, iter int) string {
	return filepath.Join(run, CheckpointsDir, CheckpointName(iter))
}

// TempCheckpointPath is where the checkpoint of iteration iter is written before it is renamed
// into place (ListCheckpoints leaves it out).
func TempCheckpointPath(run string, iter int) string {
	return filepath.Join(run, CheckpointsDir, tempPrefix+CheckpointName(iter))
}

// PolicyPath is the policy folder inside checkpoint folder ckpt.
func PolicyPath(ckpt string) string { return filepath.Join(ckpt, PolicyDir) }

// ListCheckpoints returns the checkpoint folders of run directory run, oldest iteration first.
// Only folders named by CheckpointName count (temporary ones and strays are left out); a run
// without a checkpoints folder has none.
func ListCheckpoints(run string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(run, CheckpointsDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	type ckpt struct {
		iter int
		path string
	}
	var found []ckpt
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if n, err := ParseCheckpointName(e.Name()); err == nil {
			found = append(found, ckpt{n, filepath.Join(run, CheckpointsDir, e.Name())})
		}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].iter < found[j].iter })
	out := make([]string, len(found))
	for i, c := range found {
		out[i] = c.path
	}
	return out, nil
}

// BatchName is the file name of the rollout batch saved at iteration iter: iter-NNNNNN.json.gz.
func BatchName(iter int) string { return iterName(iter) + batchExt }

// BatchPath is the saved rollout batch of iteration iter in run directory run.
func BatchPath(run string, iter int) string { return filepath.Join(run, BatchesDir, BatchName(iter)) }

// AuditPath is the default audit output folder of run directory run.
func AuditPath(run string) string { return filepath.Join(run, AuditDir) }
