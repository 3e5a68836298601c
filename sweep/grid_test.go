package sweep

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/config"
)

func names(runs []Run) string {
	s := make([]string, len(runs))
	for i, r := range runs {
		s[i] = r.Name
	}
	return strings.Join(s, " ")
}

// The grid's cartesian product in file order, last axis fastest, with stable names.
func TestExpand(t *testing.T) {
	dir := t.TempDir()
	c := writeSweep(t, dir, "name: h2h\nbase: tiny.yaml\ngrid:\n  estimator: [grpo, graft]\n  seed: [1, 2, 3]\nset: [env_steps=40]\n")
	runs, err := c.Expand()
	if err != nil {
		t.Fatal(err)
	}
	want := "maze-grpo-s1 maze-grpo-s2 maze-grpo-s3 maze-graft-s1 maze-graft-s2 maze-graft-s3"
	if got := names(runs); got != want {
		t.Fatalf("names %q, want %q", got, want)
	}
	r := runs[4]
	if r.Index != 4 || r.Env != "maze" || r.Method != "graft" || r.Seed != 2 || r.EnvSteps != 40 || r.Iterations != 4 {
		t.Errorf("run 4: %+v", r)
	}
	if r.Config != filepath.Join("configs", "maze-graft-s2.yaml") || r.RunPath() != filepath.Join("runs", "maze-graft-s2") {
		t.Errorf("paths %s %s", r.Config, r.RunPath())
	}
	runsDir := filepath.Join(dir, "out", "h2h", "runs")
	wantOv := []string{"estimator=graft", "seed=2", "env_steps=40", "name=maze-graft-s2", "out_dir=" + runsDir}
	if strings.Join(r.Overrides, " ") != strings.Join(wantOv, " ") {
		t.Errorf("overrides %q, want %q", r.Overrides, wantOv)
	}
	cfg := r.Resolved()
	if cfg.Name != "maze-graft-s2" || cfg.Estimator.Name != "graft" || cfg.Seed != 2 || cfg.EnvSteps != 40 || cfg.Label != "" || cfg.OutDir != runsDir {
		t.Errorf("resolved config %+v", cfg)
	}
	// The overrides alone reproduce the resolved config from the base.
	again, err := config.Load(c.Bases[0].Path, r.Overrides)
	if err != nil || string(again.YAML()) != string(cfg.YAML()) {
		t.Errorf("the overrides do not reproduce the config: %v", err)
	}
}

// A run's name depends on its own values only: adding values to an axis, or another seed,
// leaves the names of existing runs unchanged.
func TestExpandNamesAreStable(t *testing.T) {
	dir := t.TempDir()
	small := writeSweep(t, dir, "name: s\nbase: tiny.yaml\ngrid:\n  estimator: [grpo]\n  seed: [1]\n  update.entropy_coef: [0.01]\n")
	a, err := small.Expand()
	if err != nil {
		t.Fatal(err)
	}
	big := writeSweep(t, dir, "name: s\nbase: tiny.yaml\ngrid:\n  estimator: [grpo, graft]\n  seed: [1, 2]\n  update.entropy_coef: [0.01, 0.05]\n")
	b, err := big.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if a[0].Name != "maze-grpo-s1-update.entropy_coef=0.01" || b[0].Name != a[0].Name {
		t.Errorf("names %s / %s", a[0].Name, b[0].Name)
	}
	// An axis beyond env, estimator and seed becomes part of the method, so that a comparison
	// keeps the ablation's values apart.
	if b[1].Method != "grpo-update.entropy_coef=0.05" || b[1].Resolved().Label != b[1].Method {
		t.Errorf("method %q, label %q", b[1].Method, b[1].Resolved().Label)
	}
	if len(b) != 8 || b[7].Name != "maze-graft-s2-update.entropy_coef=0.05" {
		t.Errorf("names: %s", names(b))
	}
}

// Env values with options, variants and a label axis name the env and the method.
func TestExpandEnvsAndVariants(t *testing.T) {
	dir := t.TempDir()
	c := writeSweep(t, dir, `name: v
base: tiny.yaml
grid:
  env: [maze, {name: maze, size: 7}, keydoor]
  seed: [1]
variants:
  - {label: graft-path, set: [estimator=graft]}
  - {label: graft-td, set: [estimator=graft, estimator.mode=td]}
`)
	runs, err := c.Expand()
	if err != nil {
		t.Fatal(err)
	}
	want := "maze-graft-path-s1 maze-graft-td-s1 maze+size=7-graft-path-s1 maze+size=7-graft-td-s1 keydoor-graft-path-s1 keydoor-graft-td-s1"
	if got := names(runs); got != want {
		t.Fatalf("names %q, want %q", got, want)
	}
	r := runs[3]
	cfg := r.Resolved()
	if r.Env != "maze+size=7" || r.Method != "graft-td" || cfg.Label != "graft-td" || cfg.Env.Options["size"] != 7 || cfg.Estimator.Options["mode"] != "td" {
		t.Errorf("run 3: %+v; config env %+v estimator %+v", r, cfg.Env, cfg.Estimator)
	}
	if runs[4].Resolved().Env.Name != "keydoor" {
		t.Errorf("env axis: %+v", runs[4].Resolved().Env)
	}
}

// A bad value is refused before anything runs, naming the run's values, the key and what is allowed.
func TestExpandErrors(t *testing.T) {
	for _, tc := range []struct{ sweep, want string }{
		{"name: e\nbase: tiny.yaml\ngrid: {estimator: [grpo, ppo]}\n", `run estimator=ppo: estimator.name: unknown estimator "ppo" (allowed: drgrpo, gigpo, graft, graphgpo, grpo)`},
		{"name: e\nbase: tiny.yaml\ngrid: {update.epochz: [1, 2]}\n", `run update.epochz=1: unknown key "update.epochz" (allowed under update: aggregation`},
		{"name: e\nbase: tiny.yaml\ngrid: {optim.lr: [0.1, -1]}\n", "optim.lr: -1 is out of range"},
		{"name: e\nbase: tiny.yaml\nset: [tasks.per_iter=9]\n", "tasks.per_iter: 9 is out of range (allowed 1..tasks.train = 2)"},
		{"name: e\nbase: missing.yaml\n", "base: open"},
		{"name: e\nbase: tiny.yaml\nset: [backend=xla:cuda, policy.devices=2]\nexecutor: slurm\nslurm: {gpus: 1}\n",
			"policy.devices: 2 with backend xla:cuda, but slurm.gpus: 1"},
		{"name: e\nbase: tiny.yaml\ngrid: {seed: [1, 2]}\ncompare: {baseline: drgrpo}\n", `compare.baseline: "drgrpo" is not a method of the sweep (methods: grpo)`},
		{"name: e\nbase: tiny.yaml\ngrid: {seed: [1, 2, 001]}\n", "grid: runs 0 (seed=1) and 2 (seed=001) get the same name maze-grpo-s1"},
	} {
		c := writeSweep(t, t.TempDir(), tc.sweep)
		_, err := c.Expand()
		var ce *config.Error
		if !errors.As(err, &ce) || !strings.HasSuffix(ce.File, "sweep.yaml") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v; want a ConfigError of the sweep file containing %q", tc.sweep, err, tc.want)
		}
	}
}

// Several bases form the outermost axis: per base, the grid in file order; each base's set
// applies before the grid's values and the sweep's set after them.
func TestExpandBases(t *testing.T) {
	dir := t.TempDir()
	lake := strings.Replace(tinyBase, "env: {name: maze}", "env: {name: frozenlake}", 1)
	if err := os.WriteFile(filepath.Join(dir, "lake.yaml"), []byte(lake), 0o644); err != nil {
		t.Fatal(err)
	}
	c := writeSweep(t, dir, "name: st\nbases:\n  - tiny.yaml\n  - {config: lake.yaml, set: [iterations=2, eval.every=2]}\ngrid:\n  estimator: [grpo, graft]\n  seed: [1, 2]\nset: [tasks.per_iter=1]\n")
	runs, err := c.Expand()
	if err != nil {
		t.Fatal(err)
	}
	want := "maze-grpo-s1 maze-grpo-s2 maze-graft-s1 maze-graft-s2 frozenlake-grpo-s1 frozenlake-grpo-s2 frozenlake-graft-s1 frozenlake-graft-s2"
	if got := names(runs); got != want {
		t.Fatalf("names %q, want %q", got, want)
	}
	m, l := runs[3], runs[6]
	if m.Iterations != 4 || m.Base != "tiny.yaml" || m.Resolved().Eval.Every != 1 || m.Resolved().Tasks.PerIter != 1 {
		t.Errorf("maze run: %+v", m)
	}
	if l.Env != "frozenlake" || l.Method != "graft" || l.Seed != 1 || l.Iterations != 2 || l.Base != "lake.yaml" ||
		l.Resolved().Eval.Every != 2 || l.Resolved().Tasks.PerIter != 1 {
		t.Errorf("frozenlake run: %+v", l)
	}
	if l.Params[0] != (Param{Key: "base", Value: "lake.yaml"}) {
		t.Errorf("params %+v", l.Params)
	}
	again, err := config.Load(filepath.Join(dir, "lake.yaml"), l.Overrides)
	if err != nil || string(again.YAML()) != string(l.Resolved().YAML()) {
		t.Errorf("the overrides do not reproduce the config: %v", err)
	}
	mf, err := c.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	if len(mf.Bases) != 2 || mf.Bases[1] != filepath.Join(dir, "lake.yaml") {
		t.Errorf("manifest bases %q", mf.Bases)
	}
	if data, err := os.ReadFile(filepath.Join(c.Dir(), BasesDir, "02-lake.yaml")); err != nil || string(data) != lake {
		t.Errorf("bases/02-lake.yaml: %v", err)
	}
}

// The bases key: each item a path or {config, set}; base and bases exclude each other.
func TestBasesRefused(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"bases: []", "non-empty list"},
		{"bases: [a.yaml, a.yaml]", `"a.yaml" is listed twice with the same set`},
		{"bases: [{set: [seed=1]}]", "bases[0].config: the base config path is required"},
		{"bases: [{config: a.yaml, sets: [x]}]", `unknown key "bases[0].sets" (allowed under bases: config, label, levels, set, waste_target)`},
		{"bases: [[a.yaml]]", "bases[0]: must be a path or a mapping"},
		{"bases: [{config: a.yaml, set: [seed]}]", "bases[0].set"},
		{"bases: [{config: a.yaml, set: [seed=3]}]\ngrid: {seed: [1, 2]}", `sets the grid key "seed"`},
		{"base: b.yaml\nbases: [a.yaml]", "base and bases exclude each other"},
		{"bases: [{config: a.yaml, label: a/b}]", `bases[0].label: "a/b" is not allowed`},
		{"bases: [{config: a.yaml, levels: [horizon]}]", `bases[0].levels[0]: "horizon" is not axis=value`},
		{"bases: [{config: a.yaml, levels: [h=1, h=2]}]", `bases[0].levels[1]: the axis "h" appears twice`},
		{"bases: [{config: a.yaml, levels: [h=1, s=2]}, {config: b.yaml, levels: [s=1, h=2]}]", "bases[1].levels: axes [s, h], but bases[0] has [h, s]"},
		{"bases: [{config: a.yaml, levels: [h=1]}, b.yaml]", "bases[1].levels: axes [], but bases[0] has [h]"},
		{"bases: [{config: a.yaml, label: x}, {config: a.yaml, label: x, set: [seed=2]}]", `bases[1].label: "x" is also the label of bases[0]`},
		{"bases: [{config: a.yaml, levels: [h=1], waste_target: 1.5}]", "bases[0].waste_target: 1.5 is out of range (allowed: a number in 0..1"},
		{"bases: [{config: a.yaml, levels: [h=1]}, {config: b.yaml, levels: [h=2], waste_target: -0.05}]", "bases[1].waste_target: -0.05 is out of range (allowed: a number in 0..1"},
		{"bases: [{config: a.yaml, levels: [h=1], waste_target: .nan}]", "bases[0].waste_target: NaN is out of range (allowed: a number in 0..1"},
		{"bases: [{config: a.yaml, levels: [h=1], waste_target: 35%}]", `bases[0].waste_target: "35%" is not a number (allowed: a number in 0..1`},
		{"bases: [{config: a.yaml, levels: [h=1], waste_target: null}]", `bases[0].waste_target: "null" is not a number (allowed: a number in 0..1`},
		{"bases: [{config: a.yaml, levels: [h=1], waste_target: [0.35]}]", "bases[0].waste_target: a list or a mapping is not a number (allowed: a number in 0..1"},
		{"bases: [{config: a.yaml, waste_target: 0.35}]", "bases[0].waste_target: 0.35 is given, but the base has no levels"},
	} {
		_, err := Parse("s.yaml", []byte("name: s\n"+tc.yaml+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to mention %q", tc.yaml, err, tc.want)
		}
	}
}

// bigGrid is a sweep config whose grid has an axis of the given length per key (values 1..n).
func bigGrid(lens ...int) string {
	keys := []string{"seed", "optim.lr", "update.entropy_coef", "update.clip", "tasks.train", "tasks.group_size", "rollout.temperature", "policy.d_model"}
	var b strings.Builder
	b.WriteString("name: big\nbase: tiny.yaml\ngrid:\n")
	for k, n := range lens {
		vals := make([]string, n)
		for i := range vals {
			vals[i] = strconv.Itoa(i + 1)
		}
		fmt.Fprintf(&b, "  %s: [%s]\n", keys[k], strings.Join(vals, ", "))
	}
	return b.String()
}

// A grid's size is the exact product of its axes: 2^64 runs (eight keys of 256 values) no longer
// wraps to 0 runs and 2^63 no longer to a negative count that panics. Every grid over MaxRuns is
// refused naming its size, before any run is resolved and without writing the sweep directory.
func TestGridSizeCap(t *testing.T) {
	for _, tc := range []struct {
		lens []int
		want string
	}{
		{[]int{256, 256, 256, 256, 256, 256, 256, 256}, "grid: 18446744073709551616 runs (seed 256 × optim.lr 256 × update.entropy_coef 256 × update.clip 256 × tasks.train 256 × tasks.group_size 256 × rollout.temperature 256 × policy.d_model 256) is more than the 100000 allowed"},
		{[]int{256, 256, 256, 256, 256, 256, 256, 128}, "grid: 9223372036854775808 runs ("},
		{[]int{11, 9091}, "grid: 100001 runs (seed 11 × optim.lr 9091) is more than the 100000 allowed"},
	} {
		c := writeSweep(t, t.TempDir(), bigGrid(tc.lens...))
		_, err := c.Size()
		var ce *config.Error
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: Size error %v; want a ConfigError containing %q", tc.lens, err, tc.want)
		}
		if _, err := c.Prepare(); !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: Prepare error %v; want a ConfigError containing %q", tc.lens, err, tc.want)
		}
		if _, err := os.Stat(c.Dir()); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%v: a refused grid wrote %s (%v)", tc.lens, c.Dir(), err)
		}
	}
	// At the cap the size is counted, not refused (the runs themselves are not resolved here).
	c := writeSweep(t, t.TempDir(), bigGrid(10, 10_000))
	if n, err := c.Size(); n != MaxRuns || err != nil {
		t.Errorf("a grid of exactly %d runs: Size %d, %v", MaxRuns, n, err)
	}
}

// Each hands the runs over one at a time, in Expand's order, and stops at fn's first error.
func TestEachStops(t *testing.T) {
	c := writeSweep(t, t.TempDir(), "name: e\nbase: tiny.yaml\ngrid: {estimator: [grpo, graft], seed: [1, 2, 3]}\n")
	all, err := c.Expand()
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	var seen []string
	err = c.Each(func(r Run) error {
		seen = append(seen, r.Name)
		if r.Resolved() == nil || r.Index != len(seen)-1 {
			t.Errorf("run %d: index %d, resolved %v", len(seen)-1, r.Index, r.Resolved())
		}
		if len(seen) == 4 {
			return stop
		}
		return nil
	})
	if err != stop || strings.Join(seen, " ") != names(all[:4]) {
		t.Errorf("Each: %v after %q; want the stop error after %q", err, seen, names(all[:4]))
	}
}
