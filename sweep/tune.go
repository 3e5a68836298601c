package sweep

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/graftrl/graftrl/compare"
)

// TuneRule is the one selection rule of a tune section: per method, the value whose runs have
// the highest mean final metric over the tuning seeds and bases; a tie goes to the value
// listed first.
const TuneRule = "max-mean-final"

// TuneDir is the folder of the tuning sweep inside the study directory.
const TuneDir = "tune"

// Tune is a hyper-parameter selection made before the sweep's runs, on seeds the sweep never
// uses: every method (variant) trains once per value, tuning seed and tuning base; the value
// chosen by Rule is then set in that method's runs. Written in the config, the rule is fixed
// before any evaluation run exists.
type Tune struct {
	// Key is the config key selected (optim.lr, …).
	Key string `yaml:"key" json:"key"`
	// Values are the candidates, as written.
	Values []string `yaml:"values" json:"values"`
	// Seeds are the tuning seeds: none of them may be an evaluation seed (grid.seed).
	Seeds []uint64 `yaml:"seeds" json:"seeds"`
	// Bases are the labels (or config paths) of the bases tuned on; empty: every base.
	Bases []string `yaml:"bases" json:"bases,omitempty"`
	// Metric is the eval metric the rule reads (default: compare.metric, else eval/success).
	Metric string `yaml:"metric" json:"metric,omitempty"`
	// Rule is TuneRule (the default and the only rule).
	Rule string `yaml:"rule" json:"rule"`
	// Set holds key.path=value overrides for the tuning runs only (a shorter budget, say),
	// applied after the sweep's set.
	Set []string `yaml:"set" json:"set,omitempty"`
}

// On reports whether the config has a tune section.
func (t *Tune) On() bool {
	return t.Key != "" || len(t.Values) > 0 || len(t.Seeds) > 0 || len(t.Bases) > 0 || t.Metric != "" || t.Rule != "" || len(t.Set) > 0
}

// validate checks the tune section against the rest of the sweep config.
func (t *Tune) validate(c *Config) error {
	if !t.On() {
		return nil
	}
	if t.Rule == "" {
		t.Rule = TuneRule
	}
	var seedAxis *Axis
	for i := range c.Grid {
		if c.Grid[i].Key == "seed" {
			seedAxis = &c.Grid[i]
		}
	}
	switch {
	case t.Key == "":
		return fmt.Errorf("tune.key: the key to select is required (e.g. optim.lr)")
	case !keyPath.MatchString(t.Key):
		return fmt.Errorf("tune.key: %q is not a config key path (e.g. optim.lr)", t.Key)
	case slices.Contains([]string{"seed", "name", "out_dir", "label", "estimator", "env"}, t.Key):
		return fmt.Errorf("tune.key: %q cannot be tuned (allowed: a hyper-parameter key such as optim.lr or update.entropy_coef)", t.Key)
	case len(t.Values) < 2:
		return fmt.Errorf("tune.values: %d value(s); a selection needs at least 2 candidates (e.g. [0.0001, 0.0002, 0.0004])", len(t.Values))
	case len(t.Seeds) == 0:
		return fmt.Errorf("tune.seeds: a tuning grid needs tuning seeds that the evaluation never uses (e.g. [101, 102, 103]); none given")
	case t.Rule != TuneRule:
		return fmt.Errorf("tune.rule: %q is not allowed (allowed: %s)", t.Rule, TuneRule)
	case len(c.Variants) == 0:
		return fmt.Errorf("tune: needs variants (each method a variant), so that the value chosen for a method is set in its runs")
	case seedAxis == nil:
		return fmt.Errorf("tune: needs a grid.seed axis (the evaluation seeds), so that tune.seeds can be checked against them")
	}
	if t.Metric != "" {
		// The rule reads the metric only after every tuning run trained: a misspelt name is
		// refused here, before the first one starts. The rule reads evaluations, so the train/
		// means a comparison also offers are not among the allowed names.
		if err := compare.CheckMetric(t.Metric, compare.EvalMetrics()); err != nil {
			return fmt.Errorf("tune.metric: %v", err)
		}
	}
	for i, v := range t.Values {
		if strings.TrimSpace(v) == "" || slices.Contains(t.Values[:i], v) {
			return fmt.Errorf("tune.values[%d]: %q is empty or listed twice", i, v)
		}
	}
	for i, s := range t.Seeds {
		if slices.Contains(t.Seeds[:i], s) {
			return fmt.Errorf("tune.seeds[%d]: %d is listed twice", i, s)
		}
		for _, v := range seedAxis.Values {
			if e, err := strconv.ParseUint(v.Text, 10, 64); err == nil && e == s {
				return fmt.Errorf("tune.seeds: %d is also an evaluation seed (grid.seed: %s); tuning seeds must be seeds the evaluation never uses", s, axisText(seedAxis))
			}
		}
	}
	type setter struct {
		where string
		set   []string
	}
	setters := []setter{{"set", c.Set}, {"tune.set", t.Set}}
	for i, b := range c.Bases {
		setters = append(setters, setter{fmt.Sprintf("bases[%d].set", i), b.Set})
	}
	for i, v := range c.Variants {
		setters = append(setters, setter{fmt.Sprintf("variants[%d].set", i), v.Set})
	}
	for _, s := range setters {
		for _, o := range s.set {
			if k, _, _ := strings.Cut(o, "="); k == t.Key {
				return fmt.Errorf("tune.key: %s is also set by %s (%q); the selected key is left to the selection", t.Key, s.where, o)
			}
		}
	}
	for _, a := range c.Grid {
		if a.Key == t.Key {
			return fmt.Errorf("tune.key: %s is also a grid axis; the selected key is left to the selection", t.Key)
		}
	}
	for _, o := range t.Set {
		if err := checkOverride(o); err != nil {
			return fmt.Errorf("tune.set: %q: %v", o, err)
		}
		if k, _, _ := strings.Cut(o, "="); k == "seed" {
			return fmt.Errorf("tune.set: %q: the tuning seeds are tune.seeds", o)
		}
	}
	for i, name := range t.Bases {
		if c.baseIndex(name) < 0 {
			return fmt.Errorf("tune.bases[%d]: %q is not a base of the sweep (allowed: %s)", i, name, strings.Join(c.baseNames(), ", "))
		}
	}
	return nil
}

func axisText(a *Axis) string {
	s := make([]string, len(a.Values))
	for i, v := range a.Values {
		s[i] = v.Text
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// baseNames are the names a tune or audit section may call the bases by: each base's label,
// else its config path.
func (c *Config) baseNames() []string {
	out := make([]string, len(c.Bases))
	for i, b := range c.Bases {
		out[i] = cmp.Or(b.Label, b.Config)
	}
	return out
}

// baseIndex is the index of the base called name (its label or its config path), or -1.
func (c *Config) baseIndex(name string) int {
	return slices.IndexFunc(c.Bases, func(b Base) bool { return b.Label == name || b.Label == "" && b.Config == name })
}

// TuneSweep is the tuning sweep of c: c's variants on the tuning bases, its seed axis replaced
// by tune.seeds and tune.key as the last axis of the grid, its set followed by tune.set, in the
// directory <c.Dir()>/tune. It is nil when c has no tune section.
func (c *Config) TuneSweep() *Config {
	if !c.Tune.On() {
		return nil
	}
	t := *c
	t.Name, t.OutDir = TuneDir, c.Dir()
	t.Tune, t.Audit = Tune{}, AuditConfig{}
	t.Bases = nil
	for i, b := range c.Bases {
		if len(c.Tune.Bases) == 0 || slices.Contains(c.Tune.Bases, c.baseNames()[i]) {
			t.Bases = append(t.Bases, b)
		}
	}
	t.Grid = nil
	for _, a := range c.Grid {
		if a.Key == "seed" {
			a = Axis{Key: "seed"}
			for _, s := range c.Tune.Seeds {
				v := strconv.FormatUint(s, 10)
				a.Values = append(a.Values, Value{Text: v, Slug: v})
			}
		}
		t.Grid = append(t.Grid, a)
	}
	key := Axis{Key: c.Tune.Key}
	for _, v := range c.Tune.Values {
		key.Values = append(key.Values, Value{Text: v, Slug: slug(v)})
	}
	t.Grid = append(t.Grid, key)
	t.Set = append(slices.Clone(c.Set), c.Tune.Set...)
	t.Compare.Title, t.Compare.Baseline = "", ""
	return &t
}

// WithChoice is c with the selected value of tune.key set in each variant's runs (chosen maps
// a variant's label to its value). Every variant must have a value.
func (c *Config) WithChoice(chosen map[string]string) (*Config, error) {
	out := *c
	out.Variants = slices.Clone(c.Variants)
	for i, v := range out.Variants {
		val, ok := chosen[v.Label]
		if !ok {
			return nil, fmt.Errorf("tune: no value chosen for the method %s", v.Label)
		}
		out.Variants[i].Set = append(slices.Clone(v.Set), c.Tune.Key+"="+val)
	}
	return &out, nil
}

// TuneFile, in the study directory, records the selection (TuneResult).
const TuneFile = "tune.json"

// TuneResult is what a selection chose and why.
type TuneResult struct {
	Tune
	// Scores maps method → value → the mean final metric over the tuning runs, and Runs the
	// number of runs in each mean.
	Scores map[string]map[string]float64 `json:"scores"`
	Runs   map[string]map[string]int     `json:"runs"`
	// Chosen maps method → the selected value.
	Chosen map[string]string `json:"chosen"`
}

// LoadTuneResult reads the selection recorded in a study directory (TuneFile); nil, without
// an error, when the study made none.
func LoadTuneResult(studyDir string) (*TuneResult, error) {
	path := filepath.Join(studyDir, TuneFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var res TuneResult
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, fmt.Errorf("%s: invalid JSON: %v", path, err)
	}
	return &res, nil
}

// Choose applies the rule: per method the value of the highest mean score, the first listed on
// a tie. scores maps method → value → the final metric of each tuning run.
func (t *Tune) Choose(methods []string, scores map[string]map[string][]float64) (*TuneResult, error) {
	res := &TuneResult{Tune: *t, Scores: map[string]map[string]float64{}, Runs: map[string]map[string]int{}, Chosen: map[string]string{}}
	for _, m := range methods {
		res.Scores[m], res.Runs[m] = map[string]float64{}, map[string]int{}
		best, bestMean := "", 0.0
		for _, v := range t.Values {
			xs := scores[m][v]
			if len(xs) == 0 {
				return nil, fmt.Errorf("tune: method %s has no finished tuning run at %s=%s", m, t.Key, v)
			}
			mean := 0.0
			for _, x := range xs {
				mean += x
			}
			mean /= float64(len(xs))
			res.Scores[m][v], res.Runs[m][v] = mean, len(xs)
			if best == "" || mean > bestMean {
				best, bestMean = v, mean
			}
		}
		res.Chosen[m] = best
	}
	return res, nil
}

// TunePath is the tuning sweep's directory inside a study directory.
func TunePath(studyDir string) string { return filepath.Join(studyDir, TuneDir) }

// Covers reports whether the audit section covers a run of env (the run's base label or env
// name) trained from the base config path base.
func (a *AuditConfig) Covers(env, base string) bool {
	return len(a.Bases) == 0 || slices.Contains(a.Bases, env) || base != "" && slices.Contains(a.Bases, base)
}

// AuditConfig is the audit section of a study config: which runs the study audits and how
// closely. Empty, the study audits the baseline's run of the lowest seed per base.
type AuditConfig struct {
	// Methods are the methods audited, each on its own run (the lowest seed); empty: the
	// compare baseline only.
	Methods []string `yaml:"methods" json:"methods,omitempty"`
	// Bases are the labels (or config paths) of the bases audited; empty: every base.
	Bases []string `yaml:"bases" json:"bases,omitempty"`
	// Steps is the number of steps audited per run and MC the Monte Carlo continuations per Q
	// and per V (0: the command's --audit-steps and --audit-mc).
	Steps int `yaml:"steps" json:"steps,omitempty"`
	MC    int `yaml:"mc" json:"mc,omitempty"`
}

func (a *AuditConfig) validate(c *Config) error {
	switch {
	case a.Steps < 0 || a.Steps > 100000:
		return fmt.Errorf("audit.steps: %d is out of range (allowed 1..100000, or 0 for --audit-steps)", a.Steps)
	case a.MC == 1 || a.MC < 0 || a.MC > 100000:
		return fmt.Errorf("audit.mc: %d is out of range (allowed 2..100000, or 0 for --audit-mc)", a.MC)
	}
	for i, name := range a.Bases {
		if c.baseIndex(name) < 0 {
			return fmt.Errorf("audit.bases[%d]: %q is not a base of the sweep (allowed: %s)", i, name, strings.Join(c.baseNames(), ", "))
		}
	}
	for i, m := range a.Methods {
		if slices.Contains(a.Methods[:i], m) {
			return fmt.Errorf("audit.methods[%d]: %q is listed twice", i, m)
		}
	}
	return nil
}
