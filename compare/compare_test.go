package compare

import (
	"bytes"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func loadSuite(t *testing.T, envs []string, quality map[string]float64, seeds int) []*Run {
	t.Helper()
	runs, err := LoadRuns(suite(t, t.TempDir(), envs, quality, seeds))
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

func TestCompare(t *testing.T) {
	runs := loadSuite(t, []string{"maze", "keydoor"}, map[string]float64{"grpo": 0.45, "graft": 0.9, "gigpo": 0.5}, 6)
	c, err := Compare(runs, Options{Bootstrap: Bootstrap{Resamples: 500}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.Envs, ",") != "keydoor,maze" || strings.Join(c.Methods, ",") != "grpo,gigpo,graft" {
		t.Errorf("envs %v methods %v: want sorted envs, baseline grpo first", c.Envs, c.Methods)
	}
	if len(c.Cells) != 6 || len(c.Aggregate) != 3 || len(c.Curves) != 6 || len(c.Profiles) != 3 {
		t.Fatalf("%d cells, %d aggregate rows, %d curves, %d profiles", len(c.Cells), len(c.Aggregate), len(c.Curves), len(c.Profiles))
	}
	for _, cell := range c.Cells {
		if cell.N() != 6 || !(cell.IQM.Lo <= cell.IQM.Value && cell.IQM.Value <= cell.IQM.Hi) {
			t.Errorf("%s/%s: n %d IQM %+v", cell.Env, cell.Method, cell.N(), cell.IQM)
		}
		if cell.Method == "grpo" && (!math.IsNaN(cell.Improvement.Value) || !math.IsNaN(cell.Welch.P)) {
			t.Errorf("the baseline has a P(improvement) or p-value against itself")
		}
		if cell.Method == "graft" {
			// Quality 0.9 against 0.45: every graft run beats every grpo run.
			if cell.Improvement.Value < 0.95 || cell.Welch.P > 0.001 {
				t.Errorf("%s: graft vs grpo P %+v, Welch %+v", cell.Env, cell.Improvement, cell.Welch)
			}
		}
	}
	agg := c.Aggregate[2]
	if agg.Method != "graft" || agg.Envs != 2 || agg.N != 12 || agg.Improvement.Value < 0.95 {
		t.Errorf("aggregate graft row %+v", agg)
	}
	// Success rates are already in [0, 1]: the aggregate IQM lies between the envs' IQMs.
	lo, hi := c.cell("keydoor", "graft").IQM.Value, c.cell("maze", "graft").IQM.Value
	if agg.IQM.Value < math.Min(lo, hi)-1e-9 || agg.IQM.Value > math.Max(lo, hi)+1e-9 {
		t.Errorf("aggregate IQM %v outside the env IQMs %v, %v", agg.IQM.Value, lo, hi)
	}
	// Learning curves start untrained (0) and the grid ends at the env's budget: 60 iterations of
	// 400 (maze, the first env of the suite) or 500 (keydoor) env steps.
	for _, cv := range c.Curves {
		end := map[string]float64{"maze": 24000, "keydoor": 30000}[cv.Env]
		if cv.EnvSteps[0] != 0 || cv.EnvSteps[len(cv.EnvSteps)-1] != end || cv.IQM[0].Value != 0 {
			t.Errorf("%s/%s curve: grid %v … %v, first IQM %v", cv.Env, cv.Method, cv.EnvSteps[0], cv.EnvSteps[len(cv.EnvSteps)-1], cv.IQM[0].Value)
		}
	}
	// Profiles fall from 1 (everything beats τ below 0) to 0 (nothing beats τ = 1).
	for _, p := range c.Profiles {
		if p.Frac[0].Value != 1 || p.Frac[len(p.Frac)-1].Value != 0 {
			t.Errorf("%s profile %v … %v", p.Method, p.Frac[0].Value, p.Frac[len(p.Frac)-1].Value)
		}
	}
	if len(c.Warnings) != 0 {
		t.Errorf("unexpected warnings %v", c.Warnings)
	}
	if c.Protocol.SeedsMin != 6 || c.Protocol.SeedsMax != 6 || joinInts(c.Protocol.EvalEpisodes) != "16" ||
		c.Protocol.Decoding != "greedy, one episode per task" || len(c.Protocol.Budgets) != 2 {
		t.Errorf("protocol %+v", c.Protocol)
	}
	// The same inputs give the same numbers.
	again, err := Compare(runs, Options{Bootstrap: Bootstrap{Resamples: 500}})
	if err != nil {
		t.Fatal(err)
	}
	if again.Cells[3].IQM != c.Cells[3].IQM || again.Aggregate[1].Improvement != c.Aggregate[1].Improvement {
		t.Error("comparison not reproducible")
	}
}

func TestCompareOptions(t *testing.T) {
	runs := loadSuite(t, []string{"maze"}, map[string]float64{"drgrpo": 0.5, "graft": 0.7}, 3)
	c, err := Compare(runs, Options{Bootstrap: Bootstrap{Resamples: 100}, Metric: "eval/heldout/success"})
	if err != nil {
		t.Fatal(err)
	}
	// No grpo: the baseline is the first method alphabetically.
	if c.Options.Baseline != "drgrpo" || c.Protocol.Panel != "held-out panel" || joinInts(c.Protocol.EvalEpisodes) != "32" {
		t.Errorf("baseline %s, panel %s, episodes %v", c.Options.Baseline, c.Protocol.Panel, c.Protocol.EvalEpisodes)
	}
	if _, err := Compare(runs, Options{Baseline: "ppo"}); err == nil || !strings.Contains(err.Error(), "drgrpo, graft") {
		t.Errorf("unknown baseline: %v", err)
	}
	if _, err := Compare(runs, Options{Metric: "eval/missing"}); err == nil || !strings.Contains(err.Error(), "eval/missing") {
		t.Errorf("unknown metric: %v", err)
	}
	if _, err := Compare(runs, Options{Ranges: map[string]Range{"maze": {1, 0}}}); err == nil {
		t.Error("inverted range: no error")
	}
	if _, err := Compare(nil, Options{}); err == nil {
		t.Error("no runs: no error")
	}
	// Returns normalised by a given range: -1 → 0, 1 → 1.
	c, err = Compare(runs, Options{Bootstrap: Bootstrap{Resamples: 100}, Metric: "eval/train/greedy/return",
		Ranges: map[string]Range{"maze": {-1, 1}}})
	if err != nil {
		t.Fatal(err)
	}
	// return = 2s − 1, so the normalised return is the success rate itself.
	succ, _ := Compare(runs, Options{Bootstrap: Bootstrap{Resamples: 100}})
	for i := range c.Aggregate {
		if math.Abs(c.Aggregate[i].IQM.Value-succ.Aggregate[i].IQM.Value) > 1e-12 {
			t.Errorf("normalised return IQM %v, success IQM %v", c.Aggregate[i].IQM.Value, succ.Aggregate[i].IQM.Value)
		}
	}
	// Without a range, returns below 0 are flagged.
	c, _ = Compare(runs, Options{Bootstrap: Bootstrap{Resamples: 100}, Metric: "eval/train/greedy/return"})
	if !strings.Contains(strings.Join(c.Warnings, "\n"), "outside [0, 1]") {
		t.Errorf("no normalisation warning in %v", c.Warnings)
	}
}

func TestBudgetRefusal(t *testing.T) {
	root := t.TempDir()
	var dirs []string
	for i, m := range []string{"grpo", "grpo", "graft", "graft"} {
		steps := int64(100)
		if m == "graft" {
			steps = 110 // 10 % more env steps per iteration
		}
		f := simpleRun(m + string(rune('0'+i)))
		f.estimator, f.seed, f.stepsPerIter = m, uint64(i), constSteps(steps)
		dirs = append(dirs, f.write(t, root))
	}
	runs, err := LoadRuns(dirs)
	if err != nil {
		t.Fatal(err)
	}
	// Budgets: grpo 20·100 = 2000, graft 20·110 = 2200; spread (2200 − 2000)/2200 = 9.09 %.
	_, err = Compare(runs, Options{})
	var be *BudgetError
	if !errors.As(err, &be) {
		t.Fatalf("unequal budgets: error %v, want a *BudgetError", err)
	}
	if be.Env != "maze" || len(be.Runs) != 4 || be.Runs[0].EnvSteps != 2000 || be.Runs[3].EnvSteps != 2200 {
		t.Errorf("budget error %+v", be)
	}
	for _, s := range []string{"9.1 %", "2000 env steps", "2200 env steps", dirs[0], dirs[3]} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("budget error does not list %q:\n%v", s, err)
		}
	}
	if _, err := Compare(runs, Options{BudgetTolerance: 0.08}); !errors.As(err, &be) {
		t.Errorf("tolerance 8 %% < 9.1 %%: %v", err)
	}
	if _, err := Compare(runs, Options{BudgetTolerance: 0.1, Bootstrap: Bootstrap{Resamples: 50}}); err != nil {
		t.Errorf("tolerance 10 %%: %v", err)
	}
	c, err := Compare(runs, Options{Force: true, Bootstrap: Bootstrap{Resamples: 50}})
	if err != nil || !strings.Contains(strings.Join(c.Warnings, "\n"), "forced") {
		t.Errorf("forced: %v, warnings %v", err, c.Warnings)
	}
	// Reading every run at the common budget (2000) equalises budgets by construction. graft's
	// curve: (0, 0), (1100, 0.5), (2200, 1) → at 2000: 0.5 + 0.5·900/1100.
	c, err = Compare(runs, Options{Final: FinalCommonBudget, Bootstrap: Bootstrap{Resamples: 50}})
	if err != nil {
		t.Fatal(err)
	}
	want := 0.5 + 0.5*900.0/1100
	if got := c.cell("maze", "graft").Scores[0]; math.Abs(got-want) > 1e-12 {
		t.Errorf("graft score at the common budget %v, want %v", got, want)
	}
	if got := c.cell("maze", "grpo").Scores[0]; got != 1 {
		t.Errorf("grpo score at its own budget %v, want 1", got)
	}
	if c.Protocol.Budgets[0].Common != 2000 {
		t.Errorf("common budget %d", c.Protocol.Budgets[0].Common)
	}
	if err := CheckBudgets(runs, -1); err == nil {
		t.Error("negative tolerance: no error")
	}
}

func TestCompareRefusesDuplicateSeeds(t *testing.T) {
	root := t.TempDir()
	a := simpleRun("graft-td")
	a.extraConfig = "  mode: td\n"
	b := simpleRun("graft-path")
	b.extraConfig = "  mode: path\n"
	runs, err := LoadRuns([]string{a.write(t, root), b.write(t, root)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Compare(runs, Options{}); err == nil || !strings.Contains(err.Error(), "same seed") {
		t.Errorf("duplicate seed: %v", err)
	}
	// Relabelled, they are two methods; the config diff shows what differs (not name or seed).
	runs[0].Method, runs[1].Method = "graft-td", "graft-path"
	c, err := Compare(runs, Options{Bootstrap: Bootstrap{Resamples: 50}})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Configs) != 2 || len(c.ConfigDiff) != 1 || c.ConfigDiff[0].Key != "estimator.mode" ||
		strings.Join(c.ConfigDiff[0].Values, ",") != "td,path" {
		t.Errorf("configs %d, diff %+v", len(c.Configs), c.ConfigDiff)
	}
	if strings.Contains("\n"+c.Configs[0].YAML, "\nseed:") || strings.Contains("\n"+c.Configs[0].YAML, "\nname:") {
		t.Errorf("per-run keys left in the config:\n%s", c.Configs[0].YAML)
	}
}

func TestInterpolate(t *testing.T) {
	pts := []Point{{0, 0}, {100, 0.5}, {300, 1}}
	grid := []float64{-1, 0, 50, 100, 200, 300, 301}
	// Linear between evaluations: 50 → 0.25; 200 → 0.5 + 0.5·100/200 = 0.75; NaN outside.
	want := []float64{math.NaN(), 0, 0.25, 0.5, 0.75, 1, math.NaN()}
	got := Interpolate(pts, grid)
	for k := range want {
		if !(got[k] == want[k] || math.IsNaN(got[k]) && math.IsNaN(want[k])) {
			t.Errorf("at %v: %v, want %v", grid[k], got[k], want[k])
		}
	}
	g, err := CommonGrid([][]Point{{{0, 0}, {1000, 1}}, {{100, 0}, {800, 1}}}, 3)
	if err != nil || len(g) != 3 || g[0] != 100 || g[1] != 450 || g[2] != 800 {
		t.Errorf("CommonGrid = %v, %v; want [100 450 800]", g, err)
	}
	if _, err := CommonGrid([][]Point{{{0, 0}, {10, 1}}, {{20, 0}, {30, 1}}}, 3); err == nil {
		t.Error("disjoint curves: no error")
	}
}

// The CSV files are golden: any change to a statistic or its formatting shows up here. Rewrite
// with go test ./compare -run TestGoldenCSV -update after checking the change is intended.
func TestGoldenCSV(t *testing.T) {
	runs := loadSuite(t, []string{"maze", "keydoor"}, map[string]float64{"grpo": 0.5, "graft": 0.75, "gigpo": 0.55}, 5)
	c, err := Compare(runs, Options{Bootstrap: Bootstrap{Resamples: 300, Seed: 1}, CurvePoints: 5, ProfilePoints: 5})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := c.WriteCSV(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{PerEnvCSV, AggregateCSV, CurvesCSV, ProfilesCSV} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join("testdata", "golden", name)
		if *update {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s:\n--- got\n%s\n--- want\n%s", name, golden, got, want)
		}
	}
	// runs.csv names temporary directories: check its shape instead.
	data, err := os.ReadFile(filepath.Join(dir, RunsCSV))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(data), "\n"); lines != 1+30 {
		t.Errorf("runs.csv has %d lines, want 31", lines)
	}
}
