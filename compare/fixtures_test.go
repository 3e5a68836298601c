package compare

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/rundir"
)

// fakeRun describes a synthetic run directory in the trainer's file formats.
type fakeRun struct {
	name, env, estimator string
	seed                 uint64
	iterations           int
	evalEvery            int
	// stepsPerIter gives the env steps of iteration i (1-based).
	stepsPerIter func(i int) int64
	// success gives eval/success after iteration i (0: untrained).
	success func(i int) float64
	// extraConfig is appended to config.yaml (e.g. estimator options).
	extraConfig string
	noSummary   bool
	// initSHA, when set, is the warm start's SHA-256 that summary.json records.
	initSHA string
	// train, when set, gives more keys of the train line of iteration i (step-size
	// diagnostics, say).
	train func(i int) map[string]any
}

// write lays the run out in root/<name> and returns the directory.
func (f fakeRun) write(t testing.TB, root string) string {
	t.Helper()
	dir := filepath.Join(root, f.name)
	if err := os.MkdirAll(filepath.Join(dir, rundir.CheckpointsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	estimator := "estimator:\n  name: " + f.estimator + "\n"
	if f.extraConfig != "" {
		estimator += f.extraConfig
	}
	// The layout of config.Config.YAML: every section, resolved.
	cfg := fmt.Sprintf(`name: %s
out_dir: %s
seed: %d
iterations: %d
backend: ""
env:
  name: %s
  size: 5
tasks:
  train: 16
  eval: 32
  panel_seed: 0
  per_iter: 16
  group_size: 8
rollout:
  layout: episode
  window_turns: 2
  action_max_tokens: 1
  sampler: host
  constrain_actions: true
policy:
  d_model: 64
  layers: 2
%seval:
  every: %d
  sampled: true
  at_start: true
checkpoint:
  every: 10
  keep_last: 2
save_batches: 0
`, f.name, root, f.seed, f.iterations, f.env, estimator, f.evalEvery)
	if err := os.WriteFile(filepath.Join(dir, rundir.ConfigFile), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	var lines []string
	add := func(m map[string]any) {
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(data))
	}
	var steps, tokens int64
	eval := func(i int) map[string]any {
		s := f.success(i)
		return map[string]any{"type": "eval", "iter": i, "env_steps": steps,
			"eval/success": s, "eval/train/greedy/success": s, "eval/heldout/success": 0.8 * s,
			"eval/heldout/greedy/success": 0.8 * s, "eval/train/sampled/success": 0.9 * s,
			"eval/train/greedy/return": 2*s - 1, "eval/train/greedy/errors": 0}
	}
	add(eval(0))
	for i := 1; i <= f.iterations; i++ {
		steps += f.stepsPerIter(i)
		tokens += 3 * f.stepsPerIter(i)
		line := map[string]any{"type": "train", "iter": i, "env_steps": steps, "tokens": tokens,
			"success": f.success(i), "loss": 0.1, "entropy": 1.2, "est/groups": 16}
		if f.train != nil {
			for k, v := range f.train(i) {
				line[k] = v
			}
		}
		add(line)
		if i == f.iterations || (f.evalEvery > 0 && i%f.evalEvery == 0) {
			add(eval(i))
		}
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.MetricsFile), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !f.noSummary {
		sum := map[string]any{"iterations": f.iterations, "env_steps": steps, "tokens": tokens,
			"final_eval": eval(f.iterations), "seconds": 12.5}
		if f.initSHA != "" {
			sum["init"], sum["init_sha256"] = "sft/"+f.env+"-"+f.initSHA[:4], f.initSHA
		}
		data, _ := json.MarshalIndent(sum, "", "  ")
		if err := os.WriteFile(filepath.Join(dir, rundir.SummaryFile), append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// constSteps is a fixed number of env steps per iteration.
func constSteps(n int64) func(int) int64 { return func(int) int64 { return n } }

// learningCurve is a noisy saturating success curve on a 16-task panel: quality q reached with
// time constant tau iterations, per-run noise from rng, rounded to multiples of 1/16.
func learningCurve(q, tau float64, rng *rand.Rand) func(int) float64 {
	offset := 0.08 * rng.NormFloat64()
	noise := map[int]float64{}
	return func(i int) float64 {
		n, ok := noise[i]
		if !ok {
			n = 0.04 * rng.NormFloat64()
			noise[i] = n
		}
		if i == 0 {
			return 0
		}
		s := (q+offset)*(1-math.Exp(-float64(i)/tau)) + n
		return math.Round(math.Min(1, math.Max(0, s))*16) / 16
	}
}

// suite writes a synthetic comparison: every env × method × seed, with qualities per method.
// Budgets are equal (a fixed number of env steps per iteration).
func suite(t testing.TB, root string, envs []string, quality map[string]float64, seeds int) []string {
	t.Helper()
	var dirs []string
	for ei, env := range envs {
		for _, m := range sortedKeys(quality) {
			for s := 1; s <= seeds; s++ {
				rng := rand.New(rand.NewPCG(uint64(ei*1000+s), uint64(len(m))*7919+uint64(m[0])))
				q := quality[m] - 0.1*float64(ei)
				f := fakeRun{name: fmt.Sprintf("%s-%s-s%d", env, m, s), env: env, estimator: m, seed: uint64(s),
					iterations: 60, evalEvery: 10, stepsPerIter: constSteps(int64(400 + 100*ei)),
					success: learningCurve(q, 20, rng)}
				dirs = append(dirs, f.write(t, root))
			}
		}
	}
	return dirs
}
