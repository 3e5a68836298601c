package compare

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/rundir"
)

func simpleRun(name string) fakeRun {
	return fakeRun{name: name, env: "maze", estimator: "graft", seed: 3, iterations: 20, evalEvery: 10,
		stepsPerIter: func(i int) int64 { return int64(100 + i) },
		success:      func(i int) float64 { return float64(i) / 20 }}
}

func TestLoadRun(t *testing.T) {
	dir := simpleRun("r1").write(t, t.TempDir())
	r, err := LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Env steps: Σ_{i=1}^{20} (100 + i) = 2000 + 210 = 2210; tokens three times that.
	if r.Name != "r1" || r.Method != "graft" || r.Estimator != "graft" || r.Env != "maze" || r.Seed != 3 {
		t.Errorf("identity: %+v", r)
	}
	if r.EnvSteps != 2210 || r.Tokens != 6630 || r.Iterations != 20 || !r.Complete {
		t.Errorf("budget: env steps %d tokens %d iterations %d complete %v", r.EnvSteps, r.Tokens, r.Iterations, r.Complete)
	}
	if r.Config.TrainTasks != 16 || r.Config.EvalTasks != 32 || r.Config.EvalEvery != 10 || r.Config.GroupSize != 8 || !r.Config.EvalAtStart {
		t.Errorf("config: %+v", r.Config)
	}
	// Evaluations at iterations 0, 10, 20: env steps 0, Σ_{1..10}(100+i) = 1055, 2210.
	pts := r.Curve(DefaultMetric)
	want := []Point{{0, 0}, {1055, 0.5}, {2210, 1}}
	if len(pts) != len(want) {
		t.Fatalf("curve %v, want %v", pts, want)
	}
	for i := range want {
		if pts[i] != want[i] {
			t.Errorf("curve point %d: %v, want %v", i, pts[i], want[i])
		}
	}
	if v, err := r.Final("eval/heldout/success"); err != nil || v != 0.8 {
		t.Errorf("final held-out success %v, %v; want 0.8", v, err)
	}
	if _, err := r.Final("eval/nope"); err == nil || !strings.Contains(err.Error(), `"eval/nope"`) {
		t.Errorf("missing metric: %v", err)
	}
}

func TestLoadRunIncomplete(t *testing.T) {
	f := simpleRun("r")
	f.noSummary = true
	r, err := LoadRun(f.write(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	if r.Complete || r.EnvSteps != 2210 || r.Tokens != 6630 || r.Iterations != 20 {
		t.Errorf("incomplete run: complete %v env steps %d tokens %d iterations %d", r.Complete, r.EnvSteps, r.Tokens, r.Iterations)
	}
}

func TestLoadRunErrors(t *testing.T) {
	eval0 := `{"type":"eval","iter":0,"env_steps":0,"eval/success":0}`
	train1 := `{"type":"train","iter":1,"env_steps":100,"tokens":300,"success":0.5}`
	eval1 := `{"type":"eval","iter":1,"env_steps":100,"eval/success":0.5}`
	tests := []struct {
		name    string
		metrics string
		line    int
		msg     string
	}{
		{"invalid JSON", eval0 + "\n" + train1 + "\n{\"type\": \"eval\", \"iter\": 1,\n", 3, "invalid JSON"},
		{"truncated last line", eval0 + "\n" + train1 + "\n" + `{"type":"eval","iter":1,"env_st`, 3, "invalid JSON"},
		{"two values", eval0 + " {}\n", 1, "more than one value"},
		{"not an object", "[1, 2]\n", 1, "invalid JSON"},
		{"null", "null\n", 1, "expected a JSON object"},
		{"no type", eval0 + "\n" + `{"iter":1,"env_steps":100}` + "\n", 2, `"type"`},
		{"no env_steps", eval0 + "\n" + `{"type":"train","iter":1}` + "\n", 2, `"env_steps"`},
		{"string env_steps", eval0 + "\n" + `{"type":"train","iter":1,"env_steps":"100"}` + "\n", 2, `"env_steps"`},
		{"fractional iter", `{"type":"eval","iter":0.5,"env_steps":0}` + "\n", 1, `"iter"`},
		{"env steps decrease", eval0 + "\n" + train1 + "\n" + `{"type":"train","iter":2,"env_steps":50}` + "\n", 3, "decreases"},
		{"eval repeats", eval0 + "\n" + train1 + "\n" + eval1 + "\n" + eval1 + "\n", 4, "repeats"},
		{"huge number", `{"type":"eval","iter":0,"env_steps":0,"eval/success":1e999}` + "\n", 1, "eval/success"},
		{"no eval", train1 + "\n", 0, `no "eval" line`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := simpleRun("r").write(t, t.TempDir())
			path := filepath.Join(dir, rundir.MetricsFile)
			if err := os.WriteFile(path, []byte(tc.metrics), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadRun(dir)
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("error %v is not a *LoadError", err)
			}
			if le.File != path || le.Line != tc.line {
				t.Errorf("error at %s:%d, want %s:%d", le.File, le.Line, path, tc.line)
			}
			if !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), rundir.MetricsFile) {
				t.Errorf("error %q does not name the file and say %q", err, tc.msg)
			}
		})
	}
}

func TestLoadRunBadFiles(t *testing.T) {
	tests := []struct {
		name, file, content, msg string
	}{
		{"config YAML", rundir.ConfigFile, "name: [unclosed\n", "invalid YAML"},
		{"config without env", rundir.ConfigFile, "name: x\nestimator: grpo\n", "no env section"},
		{"config env without name", rundir.ConfigFile, "name: x\nenv:\n  size: 5\nestimator: grpo\n", "env: must be a name"},
		{"config without estimator", rundir.ConfigFile, "name: x\nenv: maze\n", "no estimator section"},
		{"config unknown key", rundir.ConfigFile, "name: x\nenv: maze\nestimator: grpo\nbogus: 1\n", `unknown key "bogus"`},
		{"config env not a section", rundir.ConfigFile, "name: x\nenv: [maze]\nestimator: grpo\n", `key "env": must be a name or a mapping with a name key`},
		{"config wrong type", rundir.ConfigFile, "name: x\nseed: -1\n", `key "seed": value "-1" is not a valid non-negative integer`},
		{"summary JSON", rundir.SummaryFile, "{\"iterations\": 20, \"env_steps\": \n", "invalid JSON"},
		{"summary fields", rundir.SummaryFile, "{\"seconds\": 3}\n", "missing"},
		{"summary budget below metrics", rundir.SummaryFile, "{\"iterations\": 20, \"env_steps\": 5}\n", "less than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := simpleRun("r").write(t, t.TempDir())
			path := filepath.Join(dir, tc.file)
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadRun(dir)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %v, want one naming %s and saying %q", err, path, tc.msg)
			}
		})
	}
	// Shorthand sections load.
	dir := simpleRun("r").write(t, t.TempDir())
	if err := os.WriteFile(filepath.Join(dir, rundir.ConfigFile), []byte("name: x\nseed: 9\nenv: keydoor\nestimator: gigpo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := LoadRun(dir)
	if err != nil || r.Env != "keydoor" || r.Method != "gigpo" || r.Seed != 9 {
		t.Errorf("shorthand config: %+v, %v", r, err)
	}
	if _, err := LoadRun(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing directory: no error")
	}
}

func TestFindAndLoadRuns(t *testing.T) {
	root := t.TempDir()
	a := simpleRun("a").write(t, root)
	b := simpleRun("b").write(t, filepath.Join(root, "sweep"))
	// A metrics file inside a run's own subfolder is not another run.
	if err := os.WriteFile(filepath.Join(a, rundir.CheckpointsDir, rundir.MetricsFile), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	dirs, err := FindRuns(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) != 2 || dirs[0] != a || dirs[1] != b {
		t.Errorf("FindRuns = %v, want [%s %s]", dirs, a, b)
	}
	runs, err := LoadRuns(dirs)
	if err != nil || len(runs) != 2 {
		t.Fatalf("LoadRuns: %d runs, %v", len(runs), err)
	}
	if _, err := FindRuns(filepath.Join(root, "empty")); err == nil {
		t.Error("FindRuns on a folder without runs: no error")
	}
	// Every broken run is reported, not just the first.
	for _, d := range dirs {
		if err := os.WriteFile(filepath.Join(d, rundir.MetricsFile), []byte("oops\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err = LoadRuns(dirs)
	if err == nil || !strings.Contains(err.Error(), a) || !strings.Contains(err.Error(), b) {
		t.Errorf("LoadRuns error %v should name both runs", err)
	}
}

// The credit diagnostics a run writes with credit_diagnostics: true are est/ keys like the
// estimator's: LoadRun averages each over the train lines that have it (est/wasted_success is
// missing from the first line, an iteration without a success).
func TestLoadRunCreditMeans(t *testing.T) {
	dir := simpleRun("r").write(t, t.TempDir())
	metrics := `{"type":"eval","iter":0,"env_steps":0,"eval/success":0}
{"type":"train","iter":1,"env_steps":100,"tokens":300,"est/decision_share":0.5,"est/decision_steps":100,"est/wasted_fail":0.75,"est/fail_steps":100}
{"type":"train","iter":2,"env_steps":200,"tokens":600,"est/decision_share":0.25,"est/decision_steps":98,"est/wasted_success":0.4,"est/success_steps":10,"est/wasted_fail":0.25,"est/fail_steps":88}
{"type":"eval","iter":2,"env_steps":200,"eval/success":0.5}
`
	if err := os.WriteFile(filepath.Join(dir, rundir.MetricsFile), []byte(metrics), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"est/decision_share": 0.375, "est/decision_steps": 99,
		"est/wasted_success": 0.4, "est/success_steps": 10,
		"est/wasted_fail": 0.5, "est/fail_steps": 94,
	}
	for k, w := range want {
		if v, ok := r.EstimatorMeans[k]; !ok || v != w {
			t.Errorf("EstimatorMeans[%s] = %v (present %v), want %v", k, v, ok, w)
		}
	}
}

// An eval point carries the train lines since the previous evaluation as train/ metrics (their
// mean); the evaluation before training carries none.
func TestLoadRunTrainMetrics(t *testing.T) {
	dir := simpleRun("r").write(t, t.TempDir())
	metrics := `{"type":"eval","iter":0,"env_steps":0,"eval/success":0}
{"type":"train","iter":1,"env_steps":100,"tokens":300,"success":0.25,"turns":10,"return":0}
{"type":"train","iter":2,"env_steps":200,"tokens":600,"success":0.5,"turns":6,"return":1}
{"type":"eval","iter":2,"env_steps":200,"eval/success":0.5}
{"type":"train","iter":3,"env_steps":300,"tokens":900,"success":1,"turns":4,"return":1}
{"type":"eval","iter":3,"env_steps":300,"eval/success":0.5}
`
	if err := os.WriteFile(filepath.Join(dir, rundir.MetricsFile), []byte(metrics), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Start(TrainPrefix + "success"); ok {
		t.Error("the evaluation before training has a train/success")
	}
	if v := r.Evals[1].Values; v["train/success"] != 0.375 || v["train/turns"] != 8 || v["train/return"] != 0.5 {
		t.Errorf("eval at 2: %v", v)
	}
	if v, err := r.Final("train/success"); err != nil || v != 1 {
		t.Errorf("final train/success %v, %v; want 1 (the lines since the previous evaluation only)", v, err)
	}
}
