package sweep

import (
	"cmp"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/graftrl/graftrl/config"
)

// Folders and files inside a sweep directory.
const (
	ManifestFile = "manifest.json"
	SweepFile    = "sweep.yaml"
	BaseFile     = "base.yaml"
	BasesDir     = "bases"
	ConfigDir    = "configs"
	RunDir       = "runs"
	LogDir       = "logs"
	StateDir     = "state"
	SlurmDir     = "slurm"
	ReportDir    = "report"
)

// Run is one run of a sweep.
type Run struct {
	// Index is the run's place in the manifest (the Slurm array task id).
	Index int `json:"index"`
	// Name is the stable run name <env>-<method>-s<seed>[-key=value…].
	Name string `json:"name"`
	// Env, Method and Seed are what a comparison groups the run by: the env (with its grid
	// options, e.g. maze+size=7), the method (the estimator, or the label when the grid varies
	// more than estimator, env and seed) and the seed.
	Env    string `json:"env"`
	Method string `json:"method"`
	Seed   uint64 `json:"seed"`
	// Params are the run's grid values in axis order (variants under the key "variant").
	Params []Param `json:"params"`
	// Base is the run's base config as the sweep config wrote it (several bases only).
	Base string `json:"base,omitempty"`
	// Levels are its base's place on the study's difficulty axes (key=value, in axis order).
	Levels []string `json:"levels,omitempty"`
	// WasteTarget is its base's waste_target: the share of wasted steps its warm start is
	// meant to have in its successful episodes (nil: none, as in manifests older than the key).
	WasteTarget *float64 `json:"waste_target,omitempty"`
	// Overrides are the --set overrides that turn the base config into the run's config.
	Overrides []string `json:"overrides"`
	// Iterations and EnvSteps are the run's budget (iterations cap; env steps, 0 = none).
	Iterations int   `json:"iterations"`
	EnvSteps   int64 `json:"env_steps"`
	// Config is the resolved config file, relative to the sweep directory.
	Config string `json:"config"`

	resolved *config.Config
}

// Param is one grid value of a run.
type Param struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Resolved returns the run's resolved training config (nil for runs read from a manifest).
func (r *Run) Resolved() *config.Config { return r.resolved }

// RunPath is the run's directory relative to the sweep directory.
func (r *Run) RunPath() string { return filepath.Join(RunDir, r.Name) }

// axis is a grid axis or the variants, as the expansion walks them.
type axis struct {
	key    string
	values []Value
	sets   [][]string // per value: its overrides
}

func (c *Config) axes() []axis {
	var out []axis
	for _, a := range c.Grid {
		ax := axis{key: a.Key, values: a.Values}
		for _, v := range a.Values {
			ax.sets = append(ax.sets, []string{a.Key + "=" + v.Text})
		}
		out = append(out, ax)
	}
	if len(c.Variants) > 0 {
		ax := axis{key: "variant"}
		for _, v := range c.Variants {
			ax.values = append(ax.values, Value{Text: v.Label, Slug: v.Label})
			ax.sets = append(ax.sets, v.Set)
		}
		out = append(out, ax)
	}
	return out
}

// MaxRuns is the most runs a sweep may have.
const MaxRuns = 100_000

// Size returns how many runs the grid expands to: the number of bases times the product of the
// axes' lengths (variants count as one axis). A grid of more than MaxRuns runs is a
// *config.Error naming its size; the product is counted exactly, whatever its size, so
// that no grid overflows into a small or negative count.
func (c *Config) Size() (int, error) {
	total := big.NewInt(int64(len(c.Bases)))
	var factors []string
	if len(c.Bases) > 1 {
		factors = append(factors, fmt.Sprintf("%d bases", len(c.Bases)))
	}
	for _, ax := range c.axes() {
		total.Mul(total, big.NewInt(int64(len(ax.values))))
		factors = append(factors, fmt.Sprintf("%s %d", ax.key, len(ax.values)))
	}
	if total.Cmp(big.NewInt(MaxRuns)) > 0 {
		return 0, &config.Error{File: c.File, Msg: fmt.Sprintf("grid: %s runs (%s) is more than the %d allowed; shorten an axis or split the sweep",
			total, strings.Join(factors, " × "), MaxRuns)}
	}
	return int(total.Int64()), nil
}

// Expand reads the base configs and expands the grid into runs in index order: per base (in
// file order), the cartesian product of the axes in file order (variants last), the last axis
// varying fastest. Every run's config is resolved with config.Parse (base + the base's set +
// grid values + variant + set), so a bad key or value is a *config.Error before anything
// runs. With several bases, each run's params start with {base, its config as written}.
func (c *Config) Expand() ([]Run, error) {
	var runs []Run
	err := c.Each(func(r Run) error {
		runs = append(runs, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return runs, nil
}

// Each expands the grid as Expand does but hands each run to fn in index order instead of
// keeping it, so that memory does not grow with the grid (only the run names are kept, to
// refuse two runs of one name). A grid over MaxRuns is refused before the first run; an error
// of fn stops the expansion and is returned as it is.
func (c *Config) Each(fn func(Run) error) error {
	total, err := c.Size()
	if err != nil {
		return err
	}
	bases, err := c.readBases()
	if err != nil {
		return err
	}
	walk := gridWalk{c: c, axes: c.axes(), per: total / max(len(bases), 1)}
	names := map[string]int{}
	var methods []string // in order of appearance, for compare.baseline's check
	isMethod := map[string]bool{}
	for idx := range total {
		r, err := c.expandRun(walk, bases, idx)
		if err != nil {
			return err
		}
		if j, dup := names[r.Name]; dup {
			_, _, first := walk.at(j)
			return c.errorf("grid: runs %d (%s) and %d (%s) get the same name %s; make the values differ in letters and digits",
				j, paramText(first), idx, paramText(r.Params), r.Name)
		}
		names[r.Name] = idx
		if !isMethod[r.Method] {
			isMethod[r.Method] = true
			methods = append(methods, r.Method)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	if b := c.Compare.Baseline; b != "" && !isMethod[b] {
		return c.errorf("compare.baseline: %q is not a method of the sweep (methods: %s)", b, strings.Join(methods, ", "))
	}
	return nil
}

// errorf is a *config.Error of the sweep file.
func (c *Config) errorf(format string, args ...any) error {
	return &config.Error{File: c.File, Msg: fmt.Sprintf(format, args...)}
}

// readBases reads every base config, in the order of c.Bases.
func (c *Config) readBases() ([][]byte, error) {
	bases := make([][]byte, len(c.Bases))
	for i, b := range c.Bases {
		data, err := os.ReadFile(b.Path)
		if err != nil {
			return nil, c.errorf("base: %v", err)
		}
		bases[i] = data
	}
	return bases, nil
}

// gridWalk maps a run's index to its base and its value on every axis: per bases (runs per
// base), the last axis varying fastest.
type gridWalk struct {
	c    *Config
	axes []axis
	per  int
}

// at returns run idx's base, the index of its value on every axis and its params.
func (g gridWalk) at(idx int) (base int, pick []int, params []Param) {
	pick = make([]int, len(g.axes))
	rem := idx % g.per
	for k := len(g.axes) - 1; k >= 0; k-- {
		pick[k] = rem % len(g.axes[k].values)
		rem /= len(g.axes[k].values)
	}
	if b := g.c.Bases[idx/g.per]; len(g.c.Bases) > 1 || b.Label != "" {
		params = append(params, Param{Key: "base", Value: cmp.Or(b.Label, b.Config)})
	}
	for k, ax := range g.axes {
		params = append(params, Param{Key: ax.key, Value: ax.values[pick[k]].Text})
	}
	return idx / g.per, pick, params
}

// expandRun resolves run idx: its config (the base, the base's set, its grid values and the
// sweep's set, then its name, label and out_dir), validated, and the run's name and overrides.
func (c *Config) expandRun(walk gridWalk, bases [][]byte, idx int) (Run, error) {
	bi, pick, params := walk.at(idx)
	b := c.Bases[bi]
	ov := append([]string(nil), b.Set...)
	for k, ax := range walk.axes {
		ov = append(ov, ax.sets[pick[k]]...)
	}
	ov = append(ov, c.Set...)
	placeholder := "name=" + c.Name // the base may lack a name; the run name comes last
	cfg, err := config.Parse(b.Path, bases[bi], append([]string{placeholder}, ov...))
	if err != nil {
		return Run{}, c.errorf("run %s: %s", paramText(params), configMsg(err))
	}
	r := Run{Index: idx, Seed: cfg.Seed, Params: params}
	if len(bases) > 1 {
		r.Base = b.Config
	}
	r.Levels, r.WasteTarget = b.Levels, b.WasteTarget
	c.nameRun(&r, b.Label, walk.axes, pick, &cfg)
	if !safeName.MatchString(r.Name) {
		// The grid's values are slugs, so this takes an env whose own name is not one; a
		// manifest holding such a name is refused too (Manifest.checkNames).
		return Run{}, c.errorf("run %s: its name %q is not allowed (letters, digits and . _ + = -, starting with a letter or digit)", paramText(params), r.Name)
	}
	if r.Method != inferredMethod(&cfg) {
		ov = append(ov, "label="+r.Method)
		cfg.Label = r.Method
	}
	runsDir := filepath.Join(c.Dir(), RunDir)
	ov = append(ov, "name="+r.Name, "out_dir="+runsDir)
	cfg.Name, cfg.OutDir = r.Name, runsDir
	if err := cfg.Validate(); err != nil {
		return Run{}, c.errorf("run %s: %v", r.Name, err)
	}
	if d := cfg.Policy.Devices; c.Executor == ExecSlurm && cfg.Backend == "xla:cuda" && d > c.Slurm.GPUs {
		return Run{}, c.errorf("run %s: policy.devices: %d with backend xla:cuda, but slurm.gpus: %d (a task sees only the GPUs it asks for; allowed: slurm.gpus ≥ policy.devices)",
			r.Name, d, c.Slurm.GPUs)
	}
	r.Overrides = ov
	r.Iterations, r.EnvSteps = cfg.Iterations, cfg.EnvSteps
	r.Config = runConfigPath(r.Name)
	r.resolved = &cfg
	return r, nil
}

// nameRun sets the run's Env, Method and Name from its grid values:
// <env>-<method>-s<seed>[-key=value…]. The env part is the env axis's value, else the base's
// label, else the base's env; the method part is the variant's label, else the label axis's value, else the
// estimator axis's value, else the base's label or estimator. Every other axis adds key=value,
// in axis order, to both the name and the method, so that a comparison keeps them apart.
func (c *Config) nameRun(r *Run, label string, axes []axis, pick []int, cfg *config.Config) {
	find := func(key string) int {
		for k, ax := range axes {
			if ax.key == key {
				return k
			}
		}
		return -1
	}
	used := map[int]bool{}
	env := slug(cfg.Env.Name)
	if label != "" {
		env = label
	}
	if k := find("env"); k >= 0 {
		env, used[k] = axes[k].values[pick[k]].Slug, true
	}
	method := inferredMethod(cfg)
	for _, key := range []string{"variant", "label", "estimator"} {
		if k := find(key); k >= 0 {
			method, used[k] = axes[k].values[pick[k]].Slug, true
			break
		}
	}
	if k := find("seed"); k >= 0 {
		used[k] = true
	}
	var extra []string
	for k, ax := range axes {
		if !used[k] {
			extra = append(extra, ax.key+"="+ax.values[pick[k]].Slug)
		}
	}
	r.Env = env
	r.Method = strings.Join(append([]string{method}, extra...), "-")
	r.Name = strings.Join(append([]string{env, method, "s" + strconv.FormatUint(cfg.Seed, 10)}, extra...), "-")
}

// inferredMethod is what compare calls a run without help: its label, else its estimator.
func inferredMethod(cfg *config.Config) string {
	if cfg.Label != "" {
		return cfg.Label
	}
	return cfg.Estimator.Name
}

func paramText(ps []Param) string {
	if len(ps) == 0 {
		return "(no grid)"
	}
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.Key + "=" + p.Value
	}
	return strings.Join(s, ", ")
}

// configMsg is a trainer config error without its "config FILE:" prefix (the sweep error names
// the sweep file; the base file is named in the message when it matters).
func configMsg(err error) string {
	var ce *config.Error
	if errors.As(err, &ce) {
		return ce.Msg
	}
	return err.Error()
}
