package compare

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/rundir"
)

// hugeRuns writes three seeds of grpo and graft on one env whose second graft seed ends at
// value (its metric after the last iteration), and loads them.
func hugeRuns(t *testing.T, value float64) []*Run {
	t.Helper()
	root := t.TempDir()
	var dirs []string
	for _, m := range []string{"grpo", "graft"} {
		for s := uint64(1); s <= 3; s++ {
			f := fakeRun{name: m + "-s" + string(rune('0'+s)), env: "maze", estimator: m, seed: s, iterations: 4, evalEvery: 2,
				stepsPerIter: constSteps(10), success: func(i int) float64 {
					if m == "graft" && s == 2 && i == 4 {
						return value
					}
					return 0.1 * float64(i)
				}}
			dirs = append(dirs, f.write(t, root))
		}
	}
	runs, err := LoadRuns(dirs)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// A metric value whose statistics would overflow float64 (8e307: its square, even its sum with
// another, is infinite) is refused by Compare, naming the run's metrics.jsonl, the metric, the
// value and its iteration; the largest magnitude allowed gives a report with finite numbers.
func TestCompareRefusesHugeValues(t *testing.T) {
	for _, v := range []float64{8e307, -8e307, 1e151} {
		runs := hugeRuns(t, v)
		_, err := Compare(runs, Options{Bootstrap: Bootstrap{Resamples: 200}})
		file := filepath.Join(runs[4].Dir, rundir.MetricsFile) // graft-s2: the runs load as written, grpo's three first
		var le *LoadError
		if !errors.As(err, &le) || le.File != file || !strings.Contains(err.Error(), "eval/success is") ||
			!strings.Contains(err.Error(), "at iter 4, beyond ±1e+150") {
			t.Errorf("value %g: %v; want a LoadError of %s naming eval/success, the value and the limit", v, err, file)
		}
	}
	for _, v := range []float64{MaxMagnitude, -MaxMagnitude} {
		c, err := Compare(hugeRuns(t, v), Options{Bootstrap: Bootstrap{Resamples: 200}})
		if err != nil {
			t.Fatalf("value %g: %v", v, err)
		}
		for _, cell := range c.Cells {
			if math.IsNaN(cell.Mean) || math.IsInf(cell.Mean, 0) || math.IsNaN(cell.IQM.Value) || math.IsInf(cell.Std, 0) {
				t.Errorf("value %g: cell %s/%s: mean %v std %v IQM %v", v, cell.Env, cell.Method, cell.Mean, cell.Std, cell.IQM)
			}
		}
		dir := filepath.Join(t.TempDir(), "report")
		if err := WriteReport(dir, c); err != nil {
			t.Errorf("value %g: report: %v", v, err)
		}
	}
}

// list names every file and folder under dir, relative to it.
func list(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out = append(out, rel)
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

// A report that fails part way leaves nothing: no report folder when there was none, the
// earlier report untouched when there was one, and no staging folder beside it.
func TestWriteReportWholeOrNothing(t *testing.T) {
	runs := hugeRuns(t, 0.5)
	c, err := Compare(runs, Options{Bootstrap: Bootstrap{Resamples: 200}})
	if err != nil {
		t.Fatal(err)
	}
	// The profile figure comes after the curves, final-score, improvement and paired ones:
	// an infinite point in it fails the report once those are written.
	bad := *c
	bad.Profiles = slices.Clone(c.Profiles)
	bad.Profiles[0].Frac = slices.Clone(bad.Profiles[0].Frac)
	bad.Profiles[0].Frac[3].Value = math.Inf(1)
	parent := t.TempDir()
	dir := filepath.Join(parent, "report")
	if err := WriteReport(dir, &bad); err == nil {
		t.Fatal("a figure with an infinite point was drawn")
	}
	if got := list(t, parent); !slices.Equal(got, []string{"."}) {
		t.Errorf("a failed report left %q", got)
	}
	if err := WriteReport(dir, c); err != nil {
		t.Fatal(err)
	}
	before := list(t, dir)
	md, err := os.ReadFile(filepath.Join(dir, ReportMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	bad.Options.Title = "a title that must not reach report.md"
	if err := WriteReport(dir, &bad); err == nil {
		t.Fatal("a figure with an infinite point was drawn")
	}
	if got := list(t, dir); !slices.Equal(got, before) {
		t.Errorf("a failed report changed the files of the earlier one:\nbefore %q\nafter  %q", before, got)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, ReportMarkdown)); string(got) != string(md) {
		t.Error("a failed report changed report.md")
	}
	if got := list(t, parent); len(got) != len(before)+1 {
		t.Errorf("a failed report left files beside the report folder: %q", got)
	}
}
