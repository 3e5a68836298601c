package trainer

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/graftrl/graftrl/rundir"
)

// StartEval is a run's evaluation before its first iteration (iteration 0: the untrained policy,
// or its initial weights): the first line of the run directory's metrics.jsonl when
// eval.at_start wrote one, nil otherwise (no such line, no file). It is read back from the file
// rather than kept by Run, so that a resumed run reports the start of the whole run, not of the
// part its last process trained.
func StartEval(runDir string) Metrics {
	f, err := os.Open(filepath.Join(runDir, rundir.MetricsFile))
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20) // an eval line is a few KB; a longer first line is not one
	if !sc.Scan() {
		return nil
	}
	var m Metrics
	if json.Unmarshal(sc.Bytes(), &m) != nil || m["type"] != "eval" || m["iter"] != float64(0) {
		return nil
	}
	return m
}

// GainSummary is the one-line outcome of a run: greedy success on the held-out panel, then on
// the training panel, each as "start → final" where start (StartEval) has it
// and as the final value alone where it did not. Held-out comes first because it is the panel
// that shows whether the policy learnt the task or the training layouts.
func GainSummary(start, final Metrics) string {
	if final == nil {
		return "no evaluation"
	}
	var parts []string
	for _, p := range []struct{ name, key string }{
		{"held-out", "eval/heldout/greedy/success"},
		{"train", "eval/train/greedy/success"},
	} {
		after, ok := final[p.key]
		if !ok {
			continue
		}
		if before, ok := start[p.key]; ok {
			parts = append(parts, fmt.Sprintf("%s %.3f → %.3f", p.name, before, after))
		} else {
			parts = append(parts, fmt.Sprintf("%s %.3f", p.name, after))
		}
	}
	return "greedy success " + strings.Join(parts, ", ")
}
