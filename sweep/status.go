package sweep

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Statuses checks every run of the sweep in dir.
func Statuses(dir string, m *Manifest, metric string) []Status {
	out := make([]Status, len(m.Runs))
	for i := range m.Runs {
		out[i] = Check(dir, &m.Runs[i], metric)
	}
	return out
}

// PrintStatus writes a table of the sweep's runs: index, name, state, progress, the metric's
// last evaluation, the Slurm task state (when the sweep was submitted to Slurm and squeue
// knows the task) and, for runs that are not finished, why. slurmErr, when not nil, is shown
// once (e.g. squeue missing).
func PrintStatus(w io.Writer, dir string, m *Manifest, sts []Status, slurm map[int]TaskState, slurmErr error, metric string) {
	if metric == "" {
		metric = "eval/success"
	}
	counts := map[State]int{}
	running := 0
	for _, st := range sts {
		counts[st.State]++
		if t, ok := slurm[st.Run.Index]; ok && t.State == "RUNNING" {
			running++
		}
	}
	fmt.Fprintf(w, "sweep %s (%s): %d runs: %d finished, %d unfinished, %d pending", m.Name, dir, len(sts),
		counts[Finished], counts[Unfinished], counts[Pending])
	if slurm != nil {
		fmt.Fprintf(w, "; Slurm: %d running", running)
	}
	fmt.Fprintln(w)
	if slurmErr != nil {
		fmt.Fprintf(w, "(Slurm task states unavailable: %v)\n", slurmErr)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "index\tname\tstate\titer\tenv steps\t%s\tslurm\tnote\n", metric)
	for _, st := range sts {
		val := "-"
		if !math.IsNaN(st.Metric) {
			val = strconv.FormatFloat(st.Metric, 'f', 3, 64)
		}
		sl := "-"
		if t, ok := slurm[st.Run.Index]; ok {
			sl = t.JobID + "_" + strconv.Itoa(t.Task) + " " + t.State
		}
		note := ""
		switch {
		case st.State == Unfinished:
			note = st.Detail
		case st.State == Pending && st.Attempt != nil && st.Attempt.Error != "":
			note = "last attempt: " + st.Attempt.Error
		}
		if st.State != Finished && st.Attempt != nil && st.Attempt.Exit != nil && *st.Attempt.Exit != 0 {
			note = strings.TrimSpace(fmt.Sprintf("%s; last attempt %d exited %d, log %s", note, st.Attempt.N, *st.Attempt.Exit,
				filepath.Join(dir, LogDir, st.Run.Name+".log")))
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", st.Run.Index, st.Run.Name, st.State, st.Iter, st.EnvSteps, val, sl, note)
	}
	tw.Flush()
}

// PrintDirStatus prints the sweep's status, asking squeue about its Slurm jobs when it has any.
func PrintDirStatus(ctx context.Context, w io.Writer, dir, metric string) error {
	m, err := LoadManifest(dir)
	if err != nil {
		return err
	}
	sts := Statuses(dir, m, metric)
	slurm, slurmErr := SlurmStates(ctx, dir)
	if jobs, _ := Jobs(dir); len(jobs) > 0 && slurm == nil && slurmErr == nil {
		slurm = map[int]TaskState{}
	}
	PrintStatus(w, dir, m, sts, slurm, slurmErr, metric)
	return nil
}
