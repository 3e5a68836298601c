package sweep

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/compare"
	"github.com/graftrl/graftrl/config"
)

func TestParse(t *testing.T) {
	c, err := Parse("configs/sweeps/x.yaml", []byte(`
name: h2h
base: ../quickstart.yaml
grid:
  estimator: [grpo, graft]
  seed: [1, 2, 3]
  env: [maze, {name: maze, size: 7}]
  update.entropy_coef: 0.05
variants:
  - {label: path}
  - {label: td, set: [estimator.mode=td]}
set: ["env_steps=50000"]
executor: slurm
workers: 3
slurm: {partition: debug, time: "00:30:00", cpus_per_task: 2, gpus: 1, max_parallel: 4, extra: ["#SBATCH --mem=2G"]}
compare: {metric: eval/heldout/success, baseline: grpo, final: last, budget_tol: 0.05, force: true, title: T, holm: family}
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Bases) != 1 || c.Bases[0].Path != filepath.Join("configs", "quickstart.yaml") || c.OutDir != DefaultOutDir || c.Dir() != filepath.Join(DefaultOutDir, "h2h") {
		t.Errorf("paths: bases %+v, out %s", c.Bases, c.OutDir)
	}
	keys := []string{}
	for _, a := range c.Grid {
		keys = append(keys, a.Key)
	}
	if strings.Join(keys, ",") != "estimator,seed,env,update.entropy_coef" {
		t.Errorf("grid keys %v: file order expected", keys)
	}
	env := c.Grid[2].Values[1]
	if env.Text != "{name: maze, size: 7}" || env.Slug != "maze+size=7" {
		t.Errorf("mapping value: %+v", env)
	}
	if len(c.Grid[3].Values) != 1 || c.Grid[3].Values[0].Text != "0.05" {
		t.Errorf("a scalar is a one-value axis: %+v", c.Grid[3])
	}
	if len(c.Variants) != 2 || c.Variants[1].Label != "td" || c.Variants[1].Set[0] != "estimator.mode=td" {
		t.Errorf("variants %+v", c.Variants)
	}
	if c.Executor != ExecSlurm || c.Workers != 3 || c.Slurm.CPUsPerTask != 2 || c.Slurm.MaxParallel != 4 || c.Slurm.Extra[0] != "#SBATCH --mem=2G" {
		t.Errorf("sections: %+v", c)
	}
	if c.Compare.Final != FinalLast || c.Compare.BudgetTol != 0.05 || !c.Compare.Force || c.Compare.Metric != "eval/heldout/success" ||
		c.Compare.Holm != compare.HolmFamily {
		t.Errorf("compare %+v", c.Compare)
	}

	d, err := Parse("s.yaml", []byte("name: x\nbase: b.yaml\n"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Executor != ExecLocal || d.Workers != 0 || d.Slurm.CPUsPerTask != 1 || d.Compare.Final != FinalCommonBudget || d.Compare.Holm != compare.HolmEnv {
		t.Errorf("defaults: %+v", d)
	}
}

// Every mistake is a *config.Error (exit status 2) naming the key, the value and what is allowed.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"name: x\nbase: b\nbogus: 1\n", `unknown key "bogus" (allowed at the top level: audit, base, bases, compare, executor, grid, name, out_dir, set, slurm, tune, variants, workers)`},
		{"base: b\n", "name: a sweep name is required"},
		{"name: a/b\nbase: b\n", `name: "a/b" is not allowed`},
		{"name: x\n", "base: the base training config is required"},
		{"name: x\nbase: b\nexecutor: k8s\n", `executor: "k8s" is not allowed (allowed: local, slurm)`},
		{"name: x\nbase: b\nworkers: -1\n", "workers: -1 is out of range"},
		{"name: x\nbase: b\nworkers: many\n", `key "workers": value "many" is not a valid integer`},
		{"name: x\nbase: b\ngrid: [seed]\n", "grid: must be a mapping"},
		{"name: x\nbase: b\ngrid: {seed: []}\n", "grid.seed: the list of values is empty"},
		{"name: x\nbase: b\ngrid: {seed: [1, 1]}\n", `grid.seed: the value "1" appears twice`},
		{"name: x\nbase: b\ngrid: {seed: [[1]]}\n", "grid.seed: value at line 3 must be a scalar or a mapping"},
		{"name: x\nbase: b\ngrid: {\"bad key\": [1]}\n", `grid.bad key: "bad key" is not a config key path`},
		{"name: x\nbase: b\ngrid: {name: [a, b]}\n", "grid.name: the sweep sets each run's name itself"},
		{"name: x\nbase: b\ngrid: {seed: [1]}\nset: [seed=2]\n", `set: "seed=2" sets the grid key "seed"`},
		{"name: x\nbase: b\nset: [epochs]\n", `set: "epochs": expected key.path=value`},
		{"name: x\nbase: b\nset: env_steps=1\n", `key "set": must be a list of strings`},
		{"name: x\nbase: b\nvariants: [{label: a}, {label: a}]\n", `variants[1].label: "a" is used twice`},
		{"name: x\nbase: b\nvariants: [{name: a}]\n", `unknown key "variants[0].name" (allowed under variants: label, set)`},
		{"name: x\nbase: b\nvariants: [{set: [a=1]}]\n", `variants[0].label: "" is not allowed`},
		{"name: x\nbase: b\nslurm: {partition: debug, memory: 2G}\n", `unknown key "slurm.memory" (allowed under slurm: binary, cpus_per_task, extra, gpus, job_name, max_parallel, partition, time)`},
		{"name: x\nbase: b\nslurm: {time: 30min}\n", `slurm.time: "30min" is not a Slurm time`},
		{"name: x\nbase: b\nslurm: {cpus_per_task: 0}\n", "slurm.cpus_per_task: 0 is out of range (allowed 1..1024)"},
		{"name: x\nbase: b\nslurm: {gpus: -1}\n", "slurm.gpus: -1 is out of range"},
		{"name: x\nbase: b\ncompare: {final: best}\n", `compare.final: "best" is not allowed (allowed: common-budget, last)`},
		{"name: x\nbase: b\ncompare: {budget_tol: 5}\n", "compare.budget_tol: 5 is out of range (allowed 0..1"},
		{"name: x\nbase: b\ncompare: {force: maybe}\n", `key "compare.force": value "maybe" is not a valid boolean (true/false)`},
		{"name: x\nbase: b\ncompare: {holm: cells}\n", `compare.holm: "cells" is not allowed (allowed: env, family)`},
		{"name: x\nbase: b\ncompare: {holm: \"\"}\n", `compare.holm: "" is not allowed (allowed: env, family)`},
		{"name: x\nbase: b\ncompare: {holm: [env]}\n", `compare.holm`},
		{"name: x\nbase: b\nname: y\n", `key "name" appears twice`},
		{"- a\n", "the top level must be a mapping"},
		{"name: [x\n", "did not find expected"},
	} {
		_, err := Parse("s.yaml", []byte(tc.yaml))
		var ce *config.Error
		if !errors.As(err, &ce) || ce.File != "s.yaml" || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v; want a ConfigError of s.yaml containing %q", tc.yaml, err, tc.want)
		}
	}
}

// Parse never panics, and what it accepts is valid.
func FuzzParse(f *testing.F) {
	f.Add([]byte("name: h2h\nbase: ../quickstart.yaml\ngrid:\n  estimator: [grpo, graft]\n  seed: [1, 2, 3]\nset: [env_steps=50000]\n"))
	f.Add([]byte("name: x\nbase: b\ngrid: {env: [maze, {name: maze, size: 7}]}\nvariants: [{label: a, set: [x=1]}]\nslurm: {time: '1-00:00', extra: ['#SBATCH --mem=1G']}\ncompare: {final: last, budget_tol: 0.1}\n"))
	f.Add([]byte("name: x\nbase: b\ngrid: {seed: [1, 1]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("fuzz.yaml", data)
		if err != nil {
			var ce *config.Error
			if !errors.As(err, &ce) {
				t.Fatalf("not a ConfigError: %v", err)
			}
			return
		}
		if c.Name == "" || len(c.Bases) == 0 || (c.Executor != ExecLocal && c.Executor != ExecSlurm) || c.Workers < 0 {
			t.Fatalf("accepted an invalid config: %+v", c)
		}
		for _, a := range c.Grid {
			if len(a.Values) == 0 {
				t.Fatalf("accepted an empty axis %q", a.Key)
			}
			for _, v := range a.Values {
				if v.Slug == "" || strings.ContainsAny(v.Slug, `/\`) {
					t.Fatalf("axis %q: unsafe slug %q", a.Key, v.Slug)
				}
			}
		}
	})
}

// compare.holm reaches the comparison through the manifest. A manifest written before the key
// existed has none: the comparison's default, env, then applies.
func TestCompareOptionsHolm(t *testing.T) {
	m := &Manifest{Compare: CompareConfig{Final: FinalLast, Holm: compare.HolmFamily}}
	if o := m.CompareOptions(); o.Holm != compare.HolmFamily || o.Final != compare.FinalLast {
		t.Errorf("options %+v", o)
	}
	var old Manifest
	if err := json.Unmarshal([]byte(`{"version": 1, "compare": {"final": "common-budget"}}`), &old); err != nil {
		t.Fatal(err)
	}
	if o := old.CompareOptions(); o.Holm != "" {
		t.Errorf("an old manifest's holm %q, want none (the comparison's default)", o.Holm)
	}
}
