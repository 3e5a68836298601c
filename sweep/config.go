package sweep

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/graftrl/graftrl/internal/limits"
	"github.com/graftrl/graftrl/trainer"
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
	// Config is the file as written (relative to the sweep file); Path is the path to read it
	// from.
	Config, Path string
	// Set holds key.path=value overrides applied to this base before the grid's values (a
	// shorter budget for one env of a study, say).
	Set []string
}

// Variant is a named set of overrides, compared as the method Label.
type Variant struct {
	Label string
	Set   []string
}

// SlurmConfig holds the resources of the Slurm job array.
type SlurmConfig struct {
	// Partition is the partition (--partition; empty: the cluster's default).
	Partition string `json:"partition,omitempty"`
	// Time is the time limit of each task (--time, e.g. "00:30:00"; empty: the partition's).
	Time string `json:"time,omitempty"`
	// CPUsPerTask is --cpus-per-task (default 1); GOMAXPROCS follows it.
	CPUsPerTask int `json:"cpus_per_task"`
	// GPUs is the number of GPUs per task (--gres=gpu:N; 0: none).
	GPUs int `json:"gpus,omitempty"`
	// MaxParallel caps the tasks running at once (the %N of --array; 0: no cap).
	MaxParallel int `json:"max_parallel,omitempty"`
	// Extra lines are written verbatim after the generated #SBATCH lines (#SBATCH --mem=2G,
	// #SBATCH --account=…, or shell commands such as module loads).
	Extra []string `json:"extra,omitempty"`
	// JobName is --job-name (default graftrl-<sweep name>).
	JobName string `json:"job_name,omitempty"`
	// Binary is the graftrl executable the tasks run (default: the running one).
	Binary string `json:"binary,omitempty"`
}

// CompareConfig holds the defaults of `graftrl compare` on the sweep directory.
type CompareConfig struct {
	// Metric is the eval metric compared (default eval/success).
	Metric string `json:"metric,omitempty"`
	// Baseline is the method the others are tested against (default grpo when present).
	Baseline string `json:"baseline,omitempty"`
	// Final is FinalCommonBudget (default for sweeps) or FinalLast.
	Final string `json:"final"`
	// BudgetTol is the relative budget spread allowed under FinalLast.
	BudgetTol float64 `json:"budget_tol,omitempty"`
	// Force compares runs whose budgets differ beyond BudgetTol.
	Force bool `json:"force,omitempty"`
	// Title heads the report.
	Title string `json:"title,omitempty"`
}

// Load reads and validates a sweep config file. Problems are *trainer.ConfigErrors naming the
// file, the key, the value and what is allowed.
func Load(path string) (*Config, error) {
	data, err := limits.Config.ReadFile(path)
	if err != nil {
		return nil, &trainer.ConfigError{File: path, Msg: err.Error()}
	}
	return Parse(path, data)
}

var (
	keyPath  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)
	safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+=-]*$`)
	// slurmTime is sbatch's --time: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS.
	slurmTime = regexp.MustCompile(`^(\d+|\d+:\d{1,2}|\d+:\d{1,2}:\d{1,2}|\d+-\d{1,2}|\d+-\d{1,2}:\d{1,2}|\d+-\d{1,2}:\d{1,2}:\d{1,2}|UNLIMITED|INFINITE)$`)
)

var (
	topKeys     = []string{"name", "base", "bases", "out_dir", "grid", "variants", "set", "executor", "workers", "slurm", "compare"}
	slurmKeys   = []string{"partition", "time", "cpus_per_task", "gpus", "max_parallel", "extra", "job_name", "binary"}
	compareKeys = []string{"metric", "baseline", "final", "budget_tol", "force", "title"}
	variantKeys = []string{"label", "set"}
	baseKeys    = []string{"config", "set"}
)

// Parse is Load on bytes; path names the file in errors and anchors the base config's path.
func Parse(path string, data []byte) (*Config, error) {
	c := &Config{File: path, OutDir: DefaultOutDir, Executor: ExecLocal,
		Slurm: SlurmConfig{CPUsPerTask: 1}, Compare: CompareConfig{Final: FinalCommonBudget}}
	fail := func(format string, args ...any) (*Config, error) {
		return nil, &trainer.ConfigError{File: path, Msg: fmt.Sprintf(format, args...)}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fail("%s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return fail("the top level must be a mapping of keys (%s; see configs/README.md, Sweeps)", strings.Join(topKeys, ", "))
	}
	root := doc.Content[0]
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, val := root.Content[i].Value, root.Content[i+1]
		if seen[key] {
			return fail("key %q appears twice", key)
		}
		seen[key] = true
		var err error
		switch key {
		case "name":
			c.Name, err = scalarString(val, key)
		case "base":
			var b Base
			b.Config, err = scalarString(val, key)
			c.Bases = append([]Base{b}, c.Bases...)
		case "bases":
			var bs []Base
			bs, err = parseBases(val)
			c.Bases = append(c.Bases, bs...)
		case "out_dir":
			c.OutDir, err = scalarString(val, key)
		case "grid":
			c.Grid, err = parseGrid(val)
		case "variants":
			c.Variants, err = parseVariants(val)
		case "set":
			c.Set, err = stringList(val, key)
		case "executor":
			c.Executor, err = scalarString(val, key)
		case "workers":
			c.Workers, err = scalarInt(val, key)
		case "slurm":
			err = c.Slurm.parse(val)
		case "compare":
			err = c.Compare.parse(val)
		default:
			err = fmt.Errorf("unknown key %q (allowed at the top level: %s)", key, strings.Join(topKeys, ", "))
		}
		if err != nil {
			return fail("%v", err)
		}
	}
	if err := c.validate(seen["base"], seen["bases"]); err != nil {
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

func (c *Config) validate(seenBase, seenBases bool) error {
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
		for _, s := range b.Set {
			if err := checkOverride(s); err != nil {
				return fmt.Errorf("bases[%d].set: %q: %v", i, s, err)
			}
		}
	}
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
	for _, s := range c.Set {
		if err := checkOverride(s); err != nil {
			return fmt.Errorf("set: %q: %v", s, err)
		}
	}
	gridKeys := map[string]bool{}
	for _, a := range c.Grid {
		gridKeys[a.Key] = true
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
	labels := map[string]bool{}
	for i, v := range c.Variants {
		if labels[v.Label] {
			return fmt.Errorf("variants[%d].label: %q is used twice", i, v.Label)
		}
		labels[v.Label] = true
	}
	if len(c.Variants) > 0 && gridKeys["label"] {
		return fmt.Errorf("grid.label: variants set the label; drop the label axis or the variants")
	}
	for _, reserved := range []string{"name", "out_dir"} {
		if gridKeys[reserved] {
			return fmt.Errorf("grid.%s: the sweep sets each run's %s itself (not allowed in the grid)", reserved, reserved)
		}
	}
	if err := c.Slurm.validate(); err != nil {
		return err
	}
	return c.Compare.validate()
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

// parseBases reads the key bases: a list whose items are a config path or a mapping
// {config: PATH, set: [key=value, …]}.
func parseBases(n *yaml.Node) ([]Base, error) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, fmt.Errorf("bases: must be a non-empty list of base configs (paths, or {config: PATH, set: [key=value]})")
	}
	var out []Base
	for i, it := range n.Content {
		at := fmt.Sprintf("bases[%d]", i)
		if it.Kind == yaml.ScalarNode {
			out = append(out, Base{Config: it.Value})
			continue
		}
		if it.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s: must be a path or a mapping {config: PATH, set: [key=value]}", at)
		}
		var b Base
		for j := 0; j+1 < len(it.Content); j += 2 {
			key, val := it.Content[j].Value, it.Content[j+1]
			var err error
			switch key {
			case "config":
				b.Config, err = scalarString(val, at+".config")
			case "set":
				b.Set, err = stringList(val, at+".set")
			default:
				err = fmt.Errorf("%s: unknown key %q (allowed: %s)", at, key, strings.Join(baseKeys, ", "))
			}
			if err != nil {
				return nil, err
			}
		}
		if b.Config == "" {
			return nil, fmt.Errorf("%s.config: the base config path is required", at)
		}
		out = append(out, b)
	}
	return out, nil
}

func parseVariants(n *yaml.Node) ([]Variant, error) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, fmt.Errorf("variants: must be a non-empty list of {label: NAME, set: [key=value, ...]}")
	}
	var out []Variant
	for i, it := range n.Content {
		where := fmt.Sprintf("variants[%d]", i)
		if it.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s: must be a mapping {label: NAME, set: [key=value, ...]}", where)
		}
		var v Variant
		for j := 0; j+1 < len(it.Content); j += 2 {
			key, val := it.Content[j].Value, it.Content[j+1]
			var err error
			switch key {
			case "label":
				v.Label, err = scalarString(val, where+".label")
			case "set":
				v.Set, err = stringList(val, where+".set")
			default:
				err = fmt.Errorf("unknown key %q (allowed under variants: %s)", where+"."+key, strings.Join(variantKeys, ", "))
			}
			if err != nil {
				return nil, err
			}
		}
		if !safeName.MatchString(v.Label) {
			return nil, fmt.Errorf("%s.label: %q is not allowed (a non-empty name of letters, digits and . _ + = -)", where, v.Label)
		}
		for _, s := range v.Set {
			if err := checkOverride(s); err != nil {
				return nil, fmt.Errorf("%s.set: %q: %v", where, s, err)
			}
			if k, _, _ := strings.Cut(s, "="); k == "label" {
				return nil, fmt.Errorf("%s.set: %q: a variant's label is its label key", where, s)
			}
		}
		out = append(out, v)
	}
	return out, nil
}

func (s *SlurmConfig) parse(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("slurm: must be a mapping (%s)", strings.Join(slurmKeys, ", "))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i].Value, n.Content[i+1]
		full := "slurm." + key
		var err error
		switch key {
		case "partition":
			s.Partition, err = scalarString(val, full)
		case "time":
			s.Time, err = scalarString(val, full)
		case "cpus_per_task":
			s.CPUsPerTask, err = scalarInt(val, full)
		case "gpus":
			s.GPUs, err = scalarInt(val, full)
		case "max_parallel":
			s.MaxParallel, err = scalarInt(val, full)
		case "extra":
			s.Extra, err = stringList(val, full)
		case "job_name":
			s.JobName, err = scalarString(val, full)
		case "binary":
			s.Binary, err = scalarString(val, full)
		default:
			err = fmt.Errorf("unknown key %q (allowed under slurm: %s)", full, strings.Join(slurmKeys, ", "))
		}
		if err != nil {
			return err
		}
	}
	return nil
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

func (c *CompareConfig) parse(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("compare: must be a mapping (%s)", strings.Join(compareKeys, ", "))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i].Value, n.Content[i+1]
		full := "compare." + key
		var err error
		switch key {
		case "metric":
			c.Metric, err = scalarString(val, full)
		case "baseline":
			c.Baseline, err = scalarString(val, full)
		case "final":
			c.Final, err = scalarString(val, full)
		case "budget_tol":
			c.BudgetTol, err = scalarFloat(val, full)
		case "force":
			c.Force, err = scalarBool(val, full)
		case "title":
			c.Title, err = scalarString(val, full)
		default:
			err = fmt.Errorf("unknown key %q (allowed under compare: %s)", full, strings.Join(compareKeys, ", "))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *CompareConfig) validate() error {
	if c.Final != FinalLast && c.Final != FinalCommonBudget {
		return fmt.Errorf("compare.final: %q is not allowed (allowed: %s, %s)", c.Final, FinalCommonBudget, FinalLast)
	}
	if c.BudgetTol < 0 || c.BudgetTol > 1 {
		return fmt.Errorf("compare.budget_tol: %v is out of range (allowed 0..1, a fraction: 0.05 allows a 5 %% spread)", c.BudgetTol)
	}
	return nil
}

func scalarString(n *yaml.Node, key string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("%s: must be a string, got a %s", key, kindName(n))
	}
	return n.Value, nil
}

func scalarInt(n *yaml.Node, key string) (int, error) {
	if n.Kind != yaml.ScalarNode {
		return 0, fmt.Errorf("%s: must be an integer, got a %s", key, kindName(n))
	}
	v, err := strconv.Atoi(n.Value)
	if err != nil {
		return 0, fmt.Errorf("%s: value %q is not a valid integer", key, n.Value)
	}
	return v, nil
}

func scalarFloat(n *yaml.Node, key string) (float64, error) {
	if n.Kind != yaml.ScalarNode {
		return 0, fmt.Errorf("%s: must be a number, got a %s", key, kindName(n))
	}
	v, err := strconv.ParseFloat(n.Value, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: value %q is not a valid number", key, n.Value)
	}
	return v, nil
}

func scalarBool(n *yaml.Node, key string) (bool, error) {
	var b bool
	if n.Kind != yaml.ScalarNode || n.Decode(&b) != nil {
		return false, fmt.Errorf("%s: value %q is not a valid boolean (true/false)", key, n.Value)
	}
	return b, nil
}

func stringList(n *yaml.Node, key string) ([]string, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s: must be a list of strings, e.g. [\"env_steps=50000\"]", key)
	}
	var out []string
	for _, it := range n.Content {
		if it.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%s: item at line %d must be a string", key, it.Line)
		}
		out = append(out, it.Value)
	}
	return out, nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	}
	return "scalar"
}

// Dir is the sweep directory <out_dir>/<name>.
func (c *Config) Dir() string { return filepath.Join(c.OutDir, c.Name) }
