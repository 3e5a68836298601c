package compare

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

// Four envs on two axes (horizon 5, 9 × slack 1.5, 3), grpo and graft on three paired seeds:
// the level rows hold the paired differences, warm starts and diagnostics computed here by
// hand, in axis order, and the figure and levels.csv are written.
func TestLevels(t *testing.T) {
	type cell struct{ horizon, slack string }
	envs := map[string]cell{"h9-s3": {"9", "3"}, "h5-s1.5": {"5", "1.5"}, "h9-s1.5": {"9", "1.5"}, "h5-s3": {"5", "3"}}
	lv := &Levels{Axes: []string{"horizon", "slack"}, Of: map[string][]string{}}
	var runs []*Run
	// final(env, method, seed): graft gains 0.1 × seed on h9-s3 and nothing elsewhere.
	final := func(env, method string, seed uint64) float64 {
		v := 0.3 + 0.01*float64(seed)
		if method == "graft" && env == "h9-s3" {
			v += 0.1 * float64(seed)
		}
		return v
	}
	for env, c := range envs {
		lv.Of[env] = []string{c.horizon, c.slack}
		for _, method := range []string{"grpo", "graft"} {
			for seed := uint64(1); seed <= 3; seed++ {
				start := 0.2 + 0.05*float64(seed)
				runs = append(runs, &Run{Dir: fmt.Sprintf("%s-%s-s%d", env, method, seed), Name: fmt.Sprintf("%s-%s-s%d", env, method, seed),
					Method: method, Estimator: method, Env: env, Seed: seed, Iterations: 10, EnvSteps: 1000, Complete: true,
					Init: "sft", InitSHA256: fmt.Sprintf("%s-%d", env, seed),
					Config: RunConfig{Iterations: 10, EvalTasks: 8, OpenTasks: true, PerIter: 2, GroupSize: 2, EvalEvery: 10, EvalAtStart: true, WarmStart: true},
					Evals: []Eval{
						{Iter: 0, EnvSteps: 0, Values: map[string]float64{"eval/success": start}},
						{Iter: 10, EnvSteps: 1000, Values: map[string]float64{"eval/success": final(env, method, seed)}},
					},
					EstimatorMeans: map[string]float64{diagDecision: 0.5 + 0.1*float64(seed), diagWastedSuccess: 0.2, diagWastedFail: 0.4}})
			}
		}
	}
	c, err := Compare(runs, Options{Baseline: "grpo", Final: FinalLast, Levels: lv})
	if err != nil {
		t.Fatal(err)
	}
	rows := c.Levels
	var order []string
	for _, r := range rows {
		order = append(order, r.Env)
	}
	if got := strings.Join(order, " "); got != "h5-s1.5 h9-s1.5 h5-s3 h9-s3" {
		t.Fatalf("rows in order %q, want the x axis innermost", got)
	}
	top := rows[3]
	if len(top.Paired) != 1 || top.Paired[0].Method != "graft" {
		t.Fatalf("h9-s3 paired rows %+v", top.Paired)
	}
	// differences 0.1, 0.2, 0.3: mean 0.2, SD 0.1, t(0.975, 2) = 4.302653 → ± 0.24842
	p := top.Paired[0]
	if math.Abs(p.Mean.Value-0.2) > 1e-12 || math.Abs(p.TInterval.Hi-0.2-4.302653*0.1/math.Sqrt(3)) > 1e-5 || p.Won != 3 {
		t.Errorf("h9-s3 graft: mean %g, t interval %+v, won %d", p.Mean.Value, p.TInterval, p.Won)
	}
	if d := rows[0].Paired[0]; d.Mean.Value != 0 || d.Tied != 3 {
		t.Errorf("h5-s1.5 graft: %+v", d)
	}
	if math.Abs(top.Start-0.3) > 1e-12 || top.StartMin != 0.25 || math.Abs(top.StartMax-0.35) > 1e-12 || top.StartN != 6 {
		t.Errorf("warm start %g [%g, %g] n=%d, want 0.3 [0.25, 0.35] n=6", top.Start, top.StartMin, top.StartMax, top.StartN)
	}
	if math.Abs(top.Decision-0.7) > 1e-12 || math.Abs(top.WastedSuccess-0.2) > 1e-12 || math.Abs(top.WastedFail-0.4) > 1e-12 {
		t.Errorf("diagnostics %g %g %g", top.Decision, top.WastedSuccess, top.WastedFail)
	}
	csv := c.LevelsTable()
	if len(csv) != 5 || strings.Join(csv[0][:4], ",") != "horizon,slack,env,method" || strings.Join(csv[4][:4], ",") != "9,3,h9-s3,graft" {
		t.Errorf("levels.csv %q", csv)
	}
	// Slopes along horizon, one per slack panel. Slack 3's differences are 0, 0, 0 at horizon 5
	// and 0.1, 0.2, 0.3 at 9: x̄ 7, ȳ 0.1, Sxx = 6·2² = 24, Sxy = 3·(−2)(−0.1) + 2·(0 + 0.1 + 0.2)
	// = 1.2, slope 0.05; residuals 0, 0, 0, −0.1, 0, 0.1, so s² = 0.02/4 and SE = √(0.005/24) =
	// 0.0144338; t = 3.4641 on 4 df, two-sided p = 0.0257214 (for 4 df F(t) = ½ + ½x(1 + (1 −
	// x²)/2), x = t/√(4 + t²)); half-width t(0.975, 4)·SE = 2.776445 × 0.0144338 = 0.040075.
	// Slack 1.5's differences are all 0: slope 0 with no test (SE 0), which Holm does not count,
	// so slack 3's Holm p is its own.
	if len(c.Slopes) != 2 {
		t.Fatalf("slopes %+v, want one per slack panel", c.Slopes)
	}
	flat, s3 := c.Slopes[0], c.Slopes[1]
	if flat.Panel != "slack=1.5" || flat.Slope != 0 || !math.IsNaN(flat.P) || flat.N != 6 || flat.Envs != 2 {
		t.Errorf("slack 1.5 slope %+v", flat)
	}
	if s3.Panel != "slack=3" || s3.Method != "graft" || s3.X != "horizon" || math.Abs(s3.Slope-0.05) > 1e-12 || math.Abs(s3.SE-0.0144338) > 1e-7 ||
		math.Abs(s3.P-0.0257214) > 1e-6 || s3.PHolm != s3.P || math.Abs(s3.Hi-s3.Slope-0.040075) > 1e-6 || s3.DF != 4 {
		t.Errorf("slack 3 slope %+v", s3)
	}
	f, err := c.LevelsFigure()
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Panels) != 1 || len(f.Panels[0]) != 2 || f.Panels[0][0].Title.Text != "slack 1.5" {
		t.Errorf("figure panels %d", len(f.Panels))
	}
	var png bytes.Buffer
	if err := f.Encode(&png, "png"); err != nil || png.Len() < 1000 {
		t.Errorf("png: %v (%d bytes)", err, png.Len())
	}
	dir := t.TempDir()
	if d := os.Getenv("LEVELS_DIR"); d != "" {
		dir = d
	}
	if err := WriteReport(dir, c); err != nil {
		t.Fatal(err)
	}
	md := string(must(t, dir+"/"+ReportMarkdown))
	if !strings.Contains(md, "## Along the difficulty axes (paired)") || !strings.Contains(md, "| 9 | 3 | h9-s3 | 0.300 [0.250, 0.350] (n=6) | +0.200 [-0.048, +0.448]; 3/0/0 | 0.700 | 0.200 | 0.400 |") {
		t.Errorf("report without the levels table:\n%s", md)
	}
	if !strings.Contains(md, "| slack=3 | graft − grpo | +0.050 [+0.010, +0.090] | 6 (2) |") || !strings.Contains(md, "Holm's correction runs over the 1 slope(s) with a test") {
		t.Errorf("report without the slopes:\n%s", md)
	}

	// Without levels, nothing of it: no table, no figure, no levels.csv.
	c.Options.Levels = nil
	if rows := c.levelRows(); rows != nil {
		t.Errorf("rows without levels: %v", rows)
	}
}

func must(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestLevelDodge pins the levels figure's spacing: round one's axes (horizon 5, 7, 9; slack 1.5,
// 3) keep 0.08 between methods and a margin of 0.5; a share axis 0.15 … 0.65 with five methods
// spreads a level's points over 0.4 × 0.15 = 0.06 (0.015 apart) within a margin of 0.15, so
// that the outer method at 0.5 stays nearer 0.5 than 0.35 or 0.65.
func TestLevelDodge(t *testing.T) {
	for _, tc := range []struct {
		xs        []float64
		n         int
		step, pad float64
	}{
		{[]float64{5, 7, 9}, 3, 0.08, 0.5},
		{[]float64{1.5, 3}, 3, 0.08, 0.5},
		{[]float64{5}, 3, 0.08, 0.5},
		{[]float64{0.15, 0.35, 0.5, 0.65}, 5, 0.015, 0.15},
		{[]float64{0.15, 0.35, 0.5, 0.65}, 1, 0.08, 0.15},
	} {
		step, pad := levelDodge(tc.xs, tc.n)
		if math.Abs(step-tc.step) > 1e-12 || math.Abs(pad-tc.pad) > 1e-12 {
			t.Errorf("levelDodge(%v, %d) = %g, %g; want %g, %g", tc.xs, tc.n, step, pad, tc.step, tc.pad)
		}
	}
}
