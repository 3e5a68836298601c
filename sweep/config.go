package sweep

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/graftrl/graftrl/compare"
	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/internal/strict"
)

// Executors.
const (
	// ExecLocal runs the sweep on this machine, one process per worker.
	ExecLocal = "local"
	// ExecSlurm submits the sweep as one Slurm job array.
	ExecSlurm = "slurm"
)

// Final-score rules of the compare section (the values of compare.Options.Final).
const (
	FinalLast         = "last"
	FinalCommonBudget = "common-budget"
)

// DefaultOutDir is the folder of sweep directories when a sweep config names none.
const DefaultOutDir = "runs/sweeps"

// Config is a sweep, as written in YAML (configs/sweeps/*.yaml; every key is documented in
// configs/README.md, section Sweeps).
type Config struct {
	// File is the path the config was read from ("" when parsed from bytes without one).
	File string
	// Name names the sweep directory <out_dir>/<name>.
	Name string
	// Bases are the base training configs, in file order: one from the key base, or several
	// from the key bases (one per env of a study, say), which then form the outermost axis of
	// the grid.
	Bases []Base
	// OutDir holds sweep directories (default DefaultOutDir), relative to the working directory.
	OutDir string
	// Grid is the axes of the grid, in file order: the runs are their cartesian product, the
	// last axis varying fastest.
	Grid []Axis
	// Variants, when given, are one more axis (after the grid's): named sets of overrides,
	// each compared as its own method (its label).
	Variants []Variant
	// Set holds key.path=value overrides applied to every run after the grid's values.
	Set []string
	// Executor is ExecLocal (default) or ExecSlurm.
	Executor string
	// Workers is the local executor's number of parallel runs (0: one per core).
	Workers int
	// Slurm configures the Slurm executor.
	Slurm SlurmConfig
	// Compare configures `graftrl compare` on the sweep directory.
	Compare CompareConfig
	// Tune is a selection of one hyper-parameter per method on tuning seeds, made before the
	// runs (graftrl study; empty: none).
	Tune Tune
	// Audit chooses the runs a study audits (empty: the baseline's, per base).
	Audit AuditConfig
}

// Axis is one key of the grid with its values.
type Axis struct {
	// Key is a config key path (seed, estimator, env, update.entropy_coef …).
	Key string
	// Values are the values it takes, in file order.
	Values []Value
}

// Value is one value of an axis.
type Value struct {
	// Text is the override's value: the scalar as written, or a mapping in YAML flow style
	// ({name: maze, size: 7}).
	Text string
	// Slug is the value's part of run names: the scalar, or for a mapping its name followed by
	// +key=value for its other keys (maze+size=7); characters unsafe in file names become _.
	Slug string
}

// Base is one base training config of a sweep.
type Base struct {
	// Config is the file as written (relative to the sweep file).
	Config string `yaml:"config"`
	// Path is the path to read it from.
	Path string `yaml:"-"`
	// Set holds key.path=value overrides applied to this base before the grid's values (a
	// shorter budget for one env of a study, say).
	Set []string `yaml:"set"`
	// Label, when given, stands for the env in the names of the base's runs and in
	// comparisons (maze9-cap3), so that several bases of one env (a difficulty axis) stay
	// apart; empty: the env's name.
	Label string `yaml:"label"`
	// Levels place the base on difficulty axes, as axis=value in axis order ([horizon=9,
	// slack=3]): every base of the sweep names the same axes, or none does. The comparison
	// then shows each method's paired difference along them.
	Levels []string `yaml:"levels"`
	// WasteTarget, when given, is the share of wasted steps (in [0, 1]) the base's warm start
	// is meant to have in its successful episodes; the comparison's levels section sets it
	// beside the share measured on the runs' first iteration and flags a miss of more than 5
	// points. It needs levels.
	WasteTarget *float64 `yaml:"waste_target"`
}

// Variant is a named set of overrides, compared as the method Label.
type Variant struct {
	// Label names the variant's runs and its method in comparisons.
	Label string `yaml:"label"`
	// Set holds its key.path=value overrides.
	Set []string `yaml:"set"`
}

// SlurmConfig holds the resources of the Slurm job array.
type SlurmConfig struct {
	// Partition is the partition (--partition; empty: the cluster's default).
	Partition string `yaml:"partition" json:"partition,omitempty"`
	// Time is the time limit of each task (--time, e.g. "00:30:00"; empty: the partition's).
	Time string `yaml:"time" json:"time,omitempty"`
	// CPUsPerTask is --cpus-per-task (default 1); GOMAXPROCS follows it.
	CPUsPerTask int `yaml:"cpus_per_task" json:"cpus_per_task"`
	// GPUs is the number of GPUs per task (--gres=gpu:N; 0: none).
	GPUs int `yaml:"gpus" json:"gpus,omitempty"`
	// MaxParallel caps the tasks running at once (the %N of --array; 0: no cap).
	MaxParallel int `yaml:"max_parallel" json:"max_parallel,omitempty"`
	// Extra lines are written verbatim after the generated #SBATCH lines (#SBATCH --mem=2G,
	// #SBATCH --account=…, or shell commands such as module loads).
	Extra []string `yaml:"extra" json:"extra,omitempty"`
	// JobName is --job-name (default graftrl-<sweep name>).
	JobName string `yaml:"job_name" json:"job_name,omitempty"`
	// Binary is the graftrl executable the tasks run (default: the running one).
	Binary string `yaml:"binary" json:"binary,omitempty"`
}

// CompareConfig holds the defaults of `graftrl compare` on the sweep directory.
type CompareConfig struct {
	// Metric is the eval metric compared (default eval/success).
	Metric string `yaml:"metric" json:"metric,omitempty"`
	// Baseline is the method the others are tested against (default grpo when present).
	Baseline string `yaml:"baseline" json:"baseline,omitempty"`
	// Final is FinalCommonBudget (default for sweeps) or FinalLast.
	Final string `yaml:"final" json:"final"`
	// BudgetTol is the relative budget spread allowed under FinalLast.
	BudgetTol float64 `yaml:"budget_tol" json:"budget_tol,omitempty"`
	// Force compares runs whose budgets differ beyond BudgetTol.
	Force bool `yaml:"force" json:"force,omitempty"`
	// Title heads the report.
	Title string `yaml:"title" json:"title,omitempty"`
	// Holm is the family of Holm's correction of the paired tests: compare.HolmEnv (default:
	// within each environment) or compare.HolmFamily (once over every environment's and
	// method's comparison with the baseline).
	Holm string `yaml:"holm" json:"holm,omitempty"`
}

// Load reads and validates a sweep config file. Problems are *config.Errors naming the
// file, the key, the value and what is allowed.
func Load(path string) (*Config, error) {
	data, err := config.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

var (
	keyPath  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)
	safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+=-]*$`)
	// slurmTime is sbatch's --time: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS.
	slurmTime = regexp.MustCompile(`^(\d+|\d+:\d{1,2}|\d+:\d{1,2}:\d{1,2}|\d+-\d{1,2}|\d+-\d{1,2}:\d{1,2}|\d+-\d{1,2}:\d{1,2}:\d{1,2}|UNLIMITED|INFINITE)$`)
)

// file is a sweep config as written: the keys of Config, the base config in either form, and
// the grid as a mapping whose order is kept.
type file struct {
	Name     string        `yaml:"name"`
	Base     string        `yaml:"base"`
	Bases    []yaml.Node   `yaml:"bases"`
	OutDir   string        `yaml:"out_dir"`
	Grid     yaml.Node     `yaml:"grid"`
	Variants []Variant     `yaml:"variants"`
	Set      []string      `yaml:"set"`
	Executor string        `yaml:"executor"`
	Workers  int           `yaml:"workers"`
	Slurm    SlurmConfig   `yaml:"slurm"`
	Compare  CompareConfig `yaml:"compare"`
	Tune     Tune          `yaml:"tune"`
	Audit    AuditConfig   `yaml:"audit"`
}

// Parse is Load on bytes; path names the file in errors and anchors the base config's path.
func Parse(path string, data []byte) (*Config, error) {
	fail := func(format string, args ...any) (*Config, error) {
		return nil, &config.Error{File: path, Msg: fmt.Sprintf(format, args...)}
	}
	// strict.Parse bounds the document's shape before anything decodes it and refuses a second
	// document, which yaml.Unmarshal would silently drop.
	doc, err := strict.Parse(data)
	var shape *strict.ShapeError
	if errors.As(err, &shape) {
		return fail("%v", err)
	} else if err != nil {
		return fail("invalid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return fail("the top level must be a mapping of keys (see configs/README.md, Sweeps)")
	}
	f := file{OutDir: DefaultOutDir, Executor: ExecLocal,
		Slurm: SlurmConfig{CPUsPerTask: 1}, Compare: CompareConfig{Final: FinalCommonBudget, Holm: compare.HolmEnv}}
	if err := strict.Decode(doc.Content[0], &f); err != nil {
		return fail("%v", err)
	}
	c := &Config{File: path, Name: f.Name, OutDir: f.OutDir, Variants: f.Variants, Set: f.Set,
		Executor: f.Executor, Workers: f.Workers, Slurm: f.Slurm, Compare: f.Compare, Tune: f.Tune, Audit: f.Audit}
	if f.Base != "" {
		c.Bases = []Base{{Config: f.Base}}
	}
	if f.Bases != nil && len(f.Bases) == 0 {
		return fail("bases: must be a non-empty list of base configs (paths, or {config: PATH, set: [key=value]})")
	}
	bases, err := parseBases(f.Bases)
	if err != nil {
		return fail("%v", err)
	}
	c.Bases = append(c.Bases, bases...)
	if f.Grid.Kind != 0 {
		if c.Grid, err = parseGrid(&f.Grid); err != nil {
			return fail("%v", err)
		}
	}
	if err := c.validate(f.Base != "", f.Bases != nil); err != nil {
		return fail("%v", err)
	}
	for i := range c.Bases {
		b := &c.Bases[i]
		b.Path = b.Config
		if !filepath.IsAbs(b.Config) {
			b.Path = filepath.Join(filepath.Dir(path), b.Config)
		}
	}
	return c, nil
}

// validate checks the sweep config's values and how its parts fit together; seenBase and
// seenBases say which of base and bases the file gave.
func (c *Config) validate(seenBase, seenBases bool) error {
	if err := c.validateBases(); err != nil {
		return err
	}
	if err := c.validateTop(seenBase, seenBases); err != nil {
		return err
	}
	gridKeys := map[string]bool{}
	for _, a := range c.Grid {
		gridKeys[a.Key] = true
	}
	if err := c.validateSets(gridKeys); err != nil {
		return err
	}
	if err := c.validateVariants(gridKeys); err != nil {
		return err
	}
	for _, reserved := range []string{"name", "out_dir"} {
		if gridKeys[reserved] {
			return fmt.Errorf("grid.%s: the sweep sets each run's %s itself (not allowed in the grid)", reserved, reserved)
		}
	}
	if err := c.Slurm.validate(); err != nil {
		return err
	}
	if err := c.Tune.validate(c); err != nil {
		return err
	}
	if err := c.Audit.validate(c); err != nil {
		return err
	}
	return c.Compare.validate()
}

// validateBases checks each base: a path given once per set of overrides, its own label, the
// same level axes as the first base, and overrides of the form key.path=value.
func (c *Config) validateBases() error {
	configs := map[string]bool{}
	for i, b := range c.Bases {
		if b.Config == "" {
			return fmt.Errorf("bases[%d]: the config path must not be empty", i)
		}
		key := b.Config + "\x00" + strings.Join(b.Set, "\x00")
		if configs[key] {
			return fmt.Errorf("bases[%d]: %q is listed twice with the same set", i, b.Config)
		}
		configs[key] = true
		if b.Label != "" && !safeName.MatchString(b.Label) {
			return fmt.Errorf("bases[%d].label: %q is not allowed (letters, digits and . _ + = -, starting with a letter or digit)", i, b.Label)
		}
		if err := checkLevels(i, b, c.Bases[0]); err != nil {
			return err
		}
		if err := checkWasteTarget(i, b); err != nil {
			return err
		}
		if j := slices.IndexFunc(c.Bases[:i], func(o Base) bool { return o.Label == b.Label }); b.Label != "" && j >= 0 {
			return fmt.Errorf("bases[%d].label: %q is also the label of bases[%d] (each base's label must be its own)", i, b.Label, j)
		}
		for _, s := range b.Set {
			if err := checkOverride(s); err != nil {
				return fmt.Errorf("bases[%d].set: %q: %v", i, s, err)
			}
		}
	}
	return nil
}

// validateTop checks the top-level keys: name, a base, out_dir, executor and workers.
func (c *Config) validateTop(seenBase, seenBases bool) error {
	switch {
	case c.Name == "":
		return fmt.Errorf("name: a sweep name is required (it names the directory <out_dir>/<name>)")
	case !safeName.MatchString(c.Name):
		return fmt.Errorf("name: %q is not allowed (letters, digits and . _ + = -, starting with a letter or digit)", c.Name)
	case len(c.Bases) == 0:
		return fmt.Errorf("base: the base training config is required (a path relative to this file, e.g. ../quickstart.yaml; or bases: a list of them)")
	case seenBase && seenBases:
		return fmt.Errorf("base and bases exclude each other (give one base config, or a list under bases)")
	case c.OutDir == "":
		return fmt.Errorf("out_dir: must not be empty")
	case c.Executor != ExecLocal && c.Executor != ExecSlurm:
		return fmt.Errorf("executor: %q is not allowed (allowed: %s, %s)", c.Executor, ExecLocal, ExecSlurm)
	case c.Workers < 0 || c.Workers > 4096:
		return fmt.Errorf("workers: %d is out of range (allowed 0 = one per core, or 1..4096)", c.Workers)
	}
	return nil
}

// validateSets checks the overrides of set, and that neither set nor a base's set sets a key
// of the grid.
func (c *Config) validateSets(gridKeys map[string]bool) error {
	for _, s := range c.Set {
		if err := checkOverride(s); err != nil {
			return fmt.Errorf("set: %q: %v", s, err)
		}
	}
	for _, s := range c.Set {
		k, _, _ := strings.Cut(s, "=")
		if gridKeys[k] {
			return fmt.Errorf("set: %q sets the grid key %q (a key is either in the grid or in set)", s, k)
		}
	}
	for i, b := range c.Bases {
		for _, s := range b.Set {
			if k, _, _ := strings.Cut(s, "="); gridKeys[k] {
				return fmt.Errorf("bases[%d].set: %q sets the grid key %q (a key is either in the grid or in set)", i, s, k)
			}
		}
	}
	return nil
}

// validateVariants checks each variant's label, unique, and its overrides, which must not set
// the label; variants exclude a label axis in the grid.
func (c *Config) validateVariants(gridKeys map[string]bool) error {
	labels := map[string]bool{}
	for i, v := range c.Variants {
		where := fmt.Sprintf("variants[%d]", i)
		if !safeName.MatchString(v.Label) {
			return fmt.Errorf("%s.label: %q is not allowed (a non-empty name of letters, digits and . _ + = -)", where, v.Label)
		}
		for _, s := range v.Set {
			if err := checkOverride(s); err != nil {
				return fmt.Errorf("%s.set: %q: %v", where, s, err)
			}
			if k, _, _ := strings.Cut(s, "="); k == "label" {
				return fmt.Errorf("%s.set: %q: a variant's label is its label key", where, s)
			}
		}
		if labels[v.Label] {
			return fmt.Errorf("variants[%d].label: %q is used twice", i, v.Label)
		}
		labels[v.Label] = true
	}
	if len(c.Variants) > 0 && gridKeys["label"] {
		return fmt.Errorf("grid.label: variants set the label; drop the label axis or the variants")
	}
	return nil
}

// checkLevels checks base i's levels against the first base's: key=value items naming the
// same axes in the same order.
func checkLevels(i int, b, first Base) error {
	keys := func(ls []string) []string {
		out := make([]string, len(ls))
		for k, l := range ls {
			out[k], _, _ = strings.Cut(l, "=")
		}
		return out
	}
	for k, l := range b.Levels {
		key, val, ok := strings.Cut(l, "=")
		if !ok || !safeName.MatchString(key) || strings.TrimSpace(val) == "" {
			return fmt.Errorf("bases[%d].levels[%d]: %q is not axis=value (e.g. horizon=9)", i, k, l)
		}
		if slices.Contains(keys(b.Levels[:k]), key) {
			return fmt.Errorf("bases[%d].levels[%d]: the axis %q appears twice", i, k, key)
		}
	}
	if want, got := keys(first.Levels), keys(b.Levels); !slices.Equal(want, got) {
		return fmt.Errorf("bases[%d].levels: axes [%s], but bases[0] has [%s] (every base names the same axes in the same order, or none does)",
			i, strings.Join(got, ", "), strings.Join(want, ", "))
	}
	return nil
}

// wasteTargetAllowed says what a base's waste_target may be.
const wasteTargetAllowed = "allowed: a number in 0..1, the share of wasted steps in the warm start's successful episodes, e.g. 0.35"

// checkWasteTarget checks base i's waste_target: a share in [0, 1], on a base with levels
// (the comparison's levels section is where it is checked).
func checkWasteTarget(i int, b Base) error {
	if b.WasteTarget == nil {
		return nil
	}
	if t := *b.WasteTarget; !(t >= 0 && t <= 1) {
		return fmt.Errorf("bases[%d].waste_target: %v is out of range (%s)", i, t, wasteTargetAllowed)
	}
	if len(b.Levels) == 0 {
		return fmt.Errorf("bases[%d].waste_target: %v is given, but the base has no levels (the comparison checks the target in its levels section: place the base with levels: [axis=value])", i, *b.WasteTarget)
	}
	return nil
}

func checkOverride(s string) error {
	k, _, ok := strings.Cut(s, "=")
	if !ok || !keyPath.MatchString(k) {
		return fmt.Errorf("expected key.path=value, e.g. env_steps=50000")
	}
	if k == "name" || k == "out_dir" {
		return fmt.Errorf("the sweep sets each run's %s itself", k)
	}
	return nil
}

func parseGrid(n *yaml.Node) ([]Axis, error) {
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("grid: must be a mapping of config keys to lists of values, e.g. {estimator: [grpo, graft], seed: [1, 2, 3]}")
	}
	var axes []Axis
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i].Value, n.Content[i+1]
		full := "grid." + key
		if !keyPath.MatchString(key) {
			return nil, fmt.Errorf("%s: %q is not a config key path (e.g. seed, estimator, update.entropy_coef)", full, key)
		}
		if seen[key] {
			return nil, fmt.Errorf("%s: the key appears twice", full)
		}
		seen[key] = true
		items := []*yaml.Node{val}
		if val.Kind == yaml.SequenceNode {
			items = val.Content
		}
		if len(items) == 0 {
			return nil, fmt.Errorf("%s: the list of values is empty (give at least one value)", full)
		}
		a := Axis{Key: key}
		slugs := map[string]bool{}
		for _, it := range items {
			v, err := parseValue(it, full)
			if err != nil {
				return nil, err
			}
			if slugs[v.Slug] {
				return nil, fmt.Errorf("%s: the value %q appears twice", full, v.Slug)
			}
			slugs[v.Slug] = true
			a.Values = append(a.Values, v)
		}
		axes = append(axes, a)
	}
	return axes, nil
}

// parseValue reads one grid value: a scalar, or a mapping (a section such as env with options).
func parseValue(n *yaml.Node, key string) (Value, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Value == "" {
			return Value{}, fmt.Errorf("%s: an empty value is not allowed", key)
		}
		return Value{Text: n.Value, Slug: slug(n.Value)}, nil
	case yaml.MappingNode:
		var m map[string]any
		if err := n.Decode(&m); err != nil {
			return Value{}, fmt.Errorf("%s: value at line %d: %v", key, n.Line, err)
		}
		setFlow(n)
		text, err := yaml.Marshal(n)
		if err != nil {
			return Value{}, fmt.Errorf("%s: value at line %d: %v", key, n.Line, err)
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			if k != "name" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		s := fmt.Sprint(m["name"])
		if _, ok := m["name"]; !ok {
			s = ""
		}
		for _, k := range keys {
			if s != "" {
				s += "+"
			}
			s += k + "=" + fmt.Sprint(m[k])
		}
		return Value{Text: strings.TrimSpace(string(text)), Slug: slug(s)}, nil
	}
	return Value{}, fmt.Errorf("%s: value at line %d must be a scalar or a mapping (lists are not allowed)", key, n.Line)
}

func setFlow(n *yaml.Node) {
	n.Style = yaml.FlowStyle
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	for _, c := range n.Content {
		setFlow(c)
	}
}

// slug keeps a value safe inside a file name: letters, digits and . _ + = - stay, others become _.
func slug(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._+=-", r) {
			return r
		}
		return '_'
	}, s)
}

// parseBases reads the items of the key bases: a config path, or a mapping {config: PATH,
// set: [key=value, …]}.
func parseBases(items []yaml.Node) ([]Base, error) {
	var out []Base
	for i := range items {
		it, at := &items[i], fmt.Sprintf("bases[%d]", i)
		if it.Kind == yaml.ScalarNode {
			out = append(out, Base{Config: it.Value})
			continue
		}
		if it.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s: must be a path or a mapping {config: PATH, set: [key=value], label: NAME, levels: [axis=value], waste_target: SHARE}", at)
		}
		var b Base
		if err := strict.DecodeAt(it, at, &b); err != nil {
			var se *strict.Error
			if errors.As(err, &se) && se.Key == at+".waste_target" && se.Type != nil {
				return nil, wasteTargetError(it, at)
			}
			return nil, err
		}
		if b.Config == "" {
			return nil, fmt.Errorf("%s.config: the base config path is required", at)
		}
		out = append(out, b)
	}
	return out, nil
}

// wasteTargetError refuses the waste_target of the base mapping it (at bases[i]) whose value
// is not a number.
func wasteTargetError(it *yaml.Node, at string) error {
	val := "a list or a mapping"
	for k := 0; k+1 < len(it.Content); k += 2 {
		if v := it.Content[k+1]; it.Content[k].Value == "waste_target" && v.Kind == yaml.ScalarNode {
			val = strconv.Quote(v.Value)
		}
	}
	return fmt.Errorf("%s.waste_target: %s is not a number (%s)", at, val, wasteTargetAllowed)
}

func (s *SlurmConfig) validate() error {
	switch {
	case s.CPUsPerTask < 1 || s.CPUsPerTask > 1024:
		return fmt.Errorf("slurm.cpus_per_task: %d is out of range (allowed 1..1024)", s.CPUsPerTask)
	case s.GPUs < 0 || s.GPUs > 64:
		return fmt.Errorf("slurm.gpus: %d is out of range (allowed 0..64)", s.GPUs)
	case s.MaxParallel < 0:
		return fmt.Errorf("slurm.max_parallel: %d is out of range (allowed 0 = no cap, or ≥ 1)", s.MaxParallel)
	case s.Time != "" && !slurmTime.MatchString(s.Time):
		return fmt.Errorf("slurm.time: %q is not a Slurm time (allowed: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS)", s.Time)
	case strings.ContainsAny(s.Partition, " \t\n#"):
		return fmt.Errorf("slurm.partition: %q is not a partition name", s.Partition)
	case strings.ContainsAny(s.JobName, "\n"):
		return fmt.Errorf("slurm.job_name: %q must be one line", s.JobName)
	}
	for i, l := range s.Extra {
		if strings.Contains(l, "\n") {
			return fmt.Errorf("slurm.extra[%d]: %q must be one line", i, l)
		}
	}
	return nil
}

func (c *CompareConfig) validate() error {
	if c.Final != FinalLast && c.Final != FinalCommonBudget {
		return fmt.Errorf("compare.final: %q is not allowed (allowed: %s, %s)", c.Final, FinalCommonBudget, FinalLast)
	}
	if c.Holm != compare.HolmEnv && c.Holm != compare.HolmFamily {
		return fmt.Errorf("compare.holm: %q is not allowed (allowed: %s, %s)", c.Holm, compare.HolmEnv, compare.HolmFamily)
	}
	if c.BudgetTol < 0 || c.BudgetTol > 1 {
		return fmt.Errorf("compare.budget_tol: %v is out of range (allowed 0..1, a fraction: 0.05 allows a 5 %% spread)", c.BudgetTol)
	}
	// The metric is read only when the runs are compared, after all of them trained: a
	// misspelt name is refused here, before the first one starts.
	if c.Metric != "" {
		if err := compare.CheckMetric(c.Metric, compare.Metrics()); err != nil {
			return fmt.Errorf("compare.metric: %v", err)
		}
	}
	return nil
}

// Dir is the sweep directory <out_dir>/<name>.
func (c *Config) Dir() string { return filepath.Join(c.OutDir, c.Name) }
