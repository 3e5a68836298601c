package compare

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Step sizes of fixture runs, 4 iterations each, computed by hand (each run's mean over its
// train lines, then the mean and sample SD over the cell's runs):
//
//	run      est/adv_std    grad_norm  approx_kl                clip_frac  param_change
//	grpo s1  i: 2.5         2: 2       0.01·i: 0.025            0.1        —
//	grpo s2  2i: 5          4: 4       0.03                     0.3        —
//	graft s1 3i: 7.5        6: 6       0.05                     0.2        0.002, 0.004 at i = 2, 4: 0.003
//	graft s2 3i: 7.5        8: 8       0.07                     0.2        —
//
// grpo: adv_std 3.75 ± 2.5/√2, grad_norm 3 ± √2, approx_kl 0.0275 ± 0.005/√2, clip_frac
// 0.2 ± 0.2/√2, param_change none (an empty cell, never a zero). graft: adv_std 7.5 ± 0 (×2),
// grad_norm 7 ± √2 (×7/3), approx_kl 0.06 ± 0.02/√2 (×0.06/0.0275 = ×24/11), clip_frac 0.2 ± 0
// (×1), param_change 0.003 from one run (no ratio: the baseline has none).
func TestStepSizes(t *testing.T) {
	root := t.TempDir()
	type diag struct {
		adv, grad, kl, clip func(i int) float64
		param               map[int]float64
	}
	constant := func(v float64) func(int) float64 { return func(int) float64 { return v } }
	runs := map[string]diag{
		"grpo-s1":  {func(i int) float64 { return float64(i) }, constant(2), func(i int) float64 { return 0.01 * float64(i) }, constant(0.1), nil},
		"grpo-s2":  {func(i int) float64 { return 2 * float64(i) }, constant(4), constant(0.03), constant(0.3), nil},
		"graft-s1": {func(i int) float64 { return 3 * float64(i) }, constant(6), constant(0.05), constant(0.2), map[int]float64{2: 0.002, 4: 0.004}},
		"graft-s2": {func(i int) float64 { return 3 * float64(i) }, constant(8), constant(0.07), constant(0.2), nil},
	}
	var dirs []string
	for _, method := range []string{"grpo", "graft"} {
		for seed := uint64(1); seed <= 2; seed++ {
			d := runs[fmt.Sprintf("%s-s%d", method, seed)]
			f := fakeRun{name: fmt.Sprintf("maze-%s-s%d", method, seed), env: "maze", estimator: method, seed: seed,
				iterations: 4, evalEvery: 2, stepsPerIter: constSteps(100),
				success: func(i int) float64 { return float64(i) / 8 },
				train: func(i int) map[string]any {
					m := map[string]any{"est/adv_std": d.adv(i), "grad_norm": d.grad(i), "approx_kl": d.kl(i), "clip_frac": d.clip(i)}
					if v, ok := d.param[i]; ok {
						m["param_change"] = v
					}
					return m
				}}
			dirs = append(dirs, f.write(t, root))
		}
	}
	c, err := Compare(loadDirs(t, dirs), Options{Bootstrap: Bootstrap{Resamples: 50}})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.StepSizes) != 2 || c.StepSizes[0].Method != "grpo" || c.StepSizes[1].Method != "graft" {
		t.Fatalf("step-size rows %+v", c.StepSizes)
	}
	nan := math.NaN()
	want := map[string][5][4]float64{ // mean, SD, runs, ratio per diagnostic
		"grpo": {{3.75, 2.5 / math.Sqrt2, 2, nan}, {3, math.Sqrt2, 2, nan}, {0.0275, 0.005 / math.Sqrt2, 2, nan},
			{0.2, 0.2 / math.Sqrt2, 2, nan}, {nan, nan, 0, nan}},
		"graft": {{7.5, 0, 2, 2}, {7, math.Sqrt2, 2, 7.0 / 3}, {0.06, 0.02 / math.Sqrt2, 2, 24.0 / 11},
			{0.2, 0, 2, 1}, {0.003, nan, 1, nan}},
	}
	for _, r := range c.StepSizes {
		if r.Env != "maze" || r.Runs != 2 || len(r.Stats) != 5 {
			t.Fatalf("row %+v", r)
		}
		for k, s := range r.Stats {
			w := want[r.Method][k]
			what := r.Method + " " + s.Key
			close(t, what+" mean", s.Mean, w[0], 1e-12)
			close(t, what+" SD", s.SD, w[1], 1e-12)
			close(t, what+" ratio", s.Ratio, w[3], 1e-12)
			if s.N != int(w[2]) {
				t.Errorf("%s: %d runs, want %g", what, s.N, w[2])
			}
		}
	}

	dir := t.TempDir()
	if err := WriteReport(dir, c); err != nil {
		t.Fatal(err)
	}
	rows := readCSV(t, filepath.Join(dir, StepSizeCSV))
	if len(rows) != 3 || strings.Join(rows[0][:7], ",") != "env,method,runs,adv_std_mean,adv_std_sd,adv_std_n,adv_std_ratio" ||
		rows[0][19] != "param_change_mean" {
		t.Fatalf("stepsize.csv header %q", rows[0])
	}
	if got := strings.Join(rows[1][19:], ","); got != ",,0," {
		t.Errorf("grpo's param_change in stepsize.csv: %q, want empty cells and 0 runs", got)
	}
	if got := strings.Join(rows[2], ","); got != "maze,graft,2,7.5,0,2,2,7,1.41421,2,2.33333,0.06,0.0141421,2,2.18182,0.2,0,2,1,0.003,,1," {
		t.Errorf("graft in stepsize.csv: %q", got)
	}
	md := string(must(t, filepath.Join(dir, ReportMarkdown)))
	at, paired, unpaired := strings.Index(md, "## Step sizes (diagnostics)"), strings.Index(md, "## Paired comparison"), strings.Index(md, "## Results per environment")
	if at < 0 || !(paired < at && at < unpaired) {
		t.Errorf("the step-size section is at %d, want between the paired results (%d) and the unpaired ones (%d)", at, paired, unpaired)
	}
	for _, s := range []string{
		"Secondary: diagnostics of the updates, not a test of the methods. This table is there to tell a bigger update (larger advantages' scale, larger gradient, KL, clip fraction or weight change) from better credit.",
		"| env | method | runs | est/adv_std | grad_norm | approx_kl | clip_frac | param_change |",
		"| maze | grpo | 2 | 3.75 ± 1.77 | 3 ± 1.41 | 0.0275 ± 0.00354 | 0.2 ± 0.141 | — |",
		"| maze | graft | 2 | 7.5 ± 0; ×2.00 | 7 ± 1.41; ×2.33 | 0.06 ± 0.0141; ×2.18 | 0.2 ± 0; ×1.00 | 0.003 (n=1) |",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("report.md lacks %q", s)
		}
	}

	// Runs without step-size diagnostics: no section, no stepsize.csv.
	c, err = Compare(loadSuite(t, []string{"maze"}, map[string]float64{"grpo": 0.5, "graft": 0.8}, 2), Options{Bootstrap: Bootstrap{Resamples: 50}})
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	if err := WriteReport(dir, c); err != nil {
		t.Fatal(err)
	}
	if c.StepSizes != nil || strings.Contains(string(must(t, filepath.Join(dir, ReportMarkdown))), "Step sizes") {
		t.Errorf("step sizes without diagnostics: %+v", c.StepSizes)
	}
	if _, err := os.Stat(filepath.Join(dir, StepSizeCSV)); err == nil {
		t.Error("stepsize.csv without diagnostics")
	}
}
