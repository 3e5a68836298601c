package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/graftrl/graftrl/config"
)

// ManifestVersion is the version of manifest.json this package writes and reads.
const ManifestVersion = 1

// Manifest is manifest.json: the sweep's runs in index order, and what the executors and
// compare need to know about the sweep without its config file.
type Manifest struct {
	Version int `json:"version"`
	// Name is the sweep name.
	Name string `json:"name"`
	// SweepConfig and Base are the config files the sweep was expanded from, as given; Bases
	// lists every base when there are several (Base is then the first).
	SweepConfig string   `json:"sweep_config"`
	Base        string   `json:"base"`
	Bases       []string `json:"bases,omitempty"`
	// Slurm and Compare are the sweep config's sections.
	Slurm   SlurmConfig   `json:"slurm"`
	Compare CompareConfig `json:"compare"`
	// Runs are the runs; Runs[i].Index == i. A run keeps its index for the life of the sweep
	// directory: runs a changed grid adds are appended.
	Runs []Run `json:"runs"`
}

// LoadManifest reads dir/manifest.json.
func LoadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestFile)
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s is not a sweep directory: no %s (create it with graftrl sweep --config FILE)", dir, ManifestFile)
		}
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: invalid JSON: %v", path, err)
	}
	if m.Version != ManifestVersion {
		return nil, fmt.Errorf("%s: version %d is not supported (this graftrl reads version %d)", path, m.Version, ManifestVersion)
	}
	for i, r := range m.Runs {
		if r.Index != i || r.Name == "" || r.Config == "" {
			return nil, fmt.Errorf("%s: run %d is malformed (index %d, name %q)", path, i, r.Index, r.Name)
		}
	}
	if err := m.checkNames(); err != nil {
		return nil, fmt.Errorf("%s: %w (the manifest names files inside the sweep directory; rewrite it with graftrl sweep --config FILE)", path, err)
	}
	return &m, nil
}

// checkNames refuses a manifest whose names would lead outside the sweep directory. The
// executors lock, log and train a run under its name (state/<run>.lock, logs/<run>.log,
// runs/<run>/) and read its config from its config path; a Slurm task (sweep run-one) has
// nothing but the manifest to go by, on storage other users share. So the sweep name and each
// run name must be what the grid gives them, and each config path the one the grid writes:
// the rules graftrl sweep --config follows when it writes the manifest.
func (m *Manifest) checkNames() error {
	if !safeName.MatchString(m.Name) {
		return fmt.Errorf("name: %q is not allowed (letters, digits and . _ + = -, starting with a letter or digit)", m.Name)
	}
	seen := make(map[string]int, len(m.Runs))
	for i, r := range m.Runs {
		if !safeName.MatchString(r.Name) {
			return fmt.Errorf("runs[%d].name: %q is not allowed (a run name: letters, digits and . _ + = -, starting with a letter or digit)", i, r.Name)
		}
		if j, dup := seen[r.Name]; dup {
			return fmt.Errorf("runs[%d].name: %q is also the name of runs[%d] (each run's name must be its own)", i, r.Name, j)
		}
		seen[r.Name] = i
		if want := runConfigPath(r.Name); r.Config != want {
			return fmt.Errorf("runs[%d].config: %q is not allowed (run %s's config is %q, inside the sweep directory)", i, r.Config, r.Name, want)
		}
	}
	return nil
}

// runConfigPath is where the sweep directory holds the resolved config of the run called name.
func runConfigPath(name string) string { return filepath.Join(ConfigDir, name+".yaml") }

// IsSweepDir reports whether dir holds a manifest.json.
func IsSweepDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ManifestFile))
	return err == nil
}

// Plan expands the sweep and merges it with the sweep directory's manifest when there is one,
// without writing anything: runs already in the manifest keep their index, new runs are
// appended. A run whose resolved config differs from the one the directory holds, or a run of
// the manifest the grid no longer has, is a *config.Error: its results would no longer
// match the sweep config.
func (c *Config) Plan() (*Manifest, error) {
	runs, err := c.Expand()
	if err != nil {
		return nil, err
	}
	m := &Manifest{Version: ManifestVersion, Name: c.Name, SweepConfig: c.File, Base: c.Bases[0].Path,
		Slurm: c.Slurm, Compare: c.Compare}
	if len(c.Bases) > 1 {
		for _, b := range c.Bases {
			m.Bases = append(m.Bases, b.Path)
		}
	}
	dir := c.Dir()
	if !IsSweepDir(dir) {
		m.Runs = runs
		return m, nil
	}
	old, err := LoadManifest(dir)
	if err != nil {
		return nil, err
	}
	fail := func(format string, args ...any) (*Manifest, error) {
		return nil, &config.Error{File: c.File, Msg: fmt.Sprintf(format, args...) +
			fmt.Sprintf("; give the sweep a new name, or remove %s to start it over", dir)}
	}
	byName := map[string]*Run{}
	for i := range runs {
		byName[runs[i].Name] = &runs[i]
	}
	for _, o := range old.Runs {
		n, ok := byName[o.Name]
		if !ok {
			return fail("the sweep directory %s holds run %s, which the grid no longer has", dir, o.Name)
		}
		stored, err := os.ReadFile(filepath.Join(dir, o.Config))
		if err != nil {
			return fail("run %s: %v", o.Name, err)
		}
		if diff, err := configDiff(stored, n.resolved.YAML()); err != nil {
			return fail("run %s: %s: %v", o.Name, o.Config, err)
		} else if len(diff) > 0 {
			return fail("run %s: its config changed since the sweep started (%s)", o.Name, strings.Join(diff, "; "))
		}
		n.Index = o.Index
		m.Runs = append(m.Runs, *n)
		delete(byName, o.Name)
	}
	for _, r := range runs {
		if _, isNew := byName[r.Name]; isNew {
			r.Index = len(m.Runs)
			m.Runs = append(m.Runs, r)
		}
	}
	return m, nil
}

// Prepare plans the sweep and writes it into its directory: manifest.json, sweep.yaml,
// base.yaml (with several bases: bases/NN-<file>, NN its place in the list) and
// configs/<run>.yaml (unchanged files are left alone). It returns the manifest.
func (c *Config) Prepare() (*Manifest, error) {
	m, err := c.Plan()
	if err != nil {
		return nil, err
	}
	dir := c.Dir()
	for _, d := range []string{ConfigDir, RunDir, LogDir, StateDir} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, fmt.Errorf("sweep: %w", err)
		}
	}
	for _, r := range m.Runs {
		if r.resolved == nil {
			continue
		}
		if err := writeIfChanged(filepath.Join(dir, r.Config), r.resolved.YAML()); err != nil {
			return nil, err
		}
	}
	if c.File != "" {
		data, err := os.ReadFile(c.File)
		if err != nil {
			return nil, fmt.Errorf("sweep: %w", err)
		}
		if err := writeIfChanged(filepath.Join(dir, SweepFile), data); err != nil {
			return nil, err
		}
	}
	for i, b := range c.Bases {
		base, err := os.ReadFile(b.Path)
		if err != nil {
			return nil, fmt.Errorf("sweep: %w", err)
		}
		to := filepath.Join(dir, BaseFile)
		if len(c.Bases) > 1 {
			if err := os.MkdirAll(filepath.Join(dir, BasesDir), 0o755); err != nil {
				return nil, fmt.Errorf("sweep: %w", err)
			}
			to = filepath.Join(dir, BasesDir, fmt.Sprintf("%02d-%s", i+1, filepath.Base(b.Path)))
		}
		if err := writeIfChanged(to, base); err != nil {
			return nil, err
		}
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeIfChanged(filepath.Join(dir, ManifestFile), append(data, '\n')); err != nil {
		return nil, err
	}
	return m, nil
}

// writeIfChanged writes data to path through a temporary file and a rename, unless the file
// already holds exactly data.
func writeIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	return nil
}

// canonicalConfig parses a training config and renders it back with out_dir left out, so that
// two configs that train the same run compare equal even when written from different working
// directories or by different graftrl versions (a key added with its default changes nothing).
func canonicalConfig(data []byte) ([]byte, error) {
	cfg, err := config.Parse("config", data, nil)
	if err != nil {
		return nil, errors.New(configMsg(err))
	}
	cfg.OutDir = "-"
	return cfg.YAML(), nil
}

// configDiff lists the keys whose values differ between two training configs (out_dir left
// out), as "key: a → b"; nil when they train the same run.
func configDiff(a, b []byte) ([]string, error) {
	ca, err := canonicalConfig(a)
	if err != nil {
		return nil, err
	}
	cb, err := canonicalConfig(b)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(ca, cb) {
		return nil, nil
	}
	fa, fb := flatYAML(ca), flatYAML(cb)
	keys := map[string]bool{}
	for k := range fa {
		keys[k] = true
	}
	for k := range fb {
		keys[k] = true
	}
	var diff []string
	for _, k := range sortedSet(keys) {
		va, oka := fa[k]
		vb, okb := fb[k]
		switch {
		case !oka:
			va = "(absent)"
		case !okb:
			vb = "(absent)"
		}
		if va != vb {
			diff = append(diff, fmt.Sprintf("%s: %s → %s", k, va, vb))
		}
	}
	if len(diff) == 0 {
		diff = []string{"the rendered configs differ"}
	}
	return diff, nil
}

// flatYAML maps the dotted key paths of a YAML document to their scalar values.
func flatYAML(data []byte) map[string]string {
	var v any
	_ = yaml.Unmarshal(data, &v)
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, sub := range x {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				walk(p, sub)
			}
		default:
			out[prefix] = fmt.Sprint(x)
		}
	}
	walk("", v)
	return out
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Run returns the run of the given index, or an error naming the valid range.
func (m *Manifest) Run(index int) (*Run, error) {
	if index < 0 || index >= len(m.Runs) {
		return nil, fmt.Errorf("index %d is out of range (the sweep %s has runs 0..%d)", index, m.Name, len(m.Runs)-1)
	}
	return &m.Runs[index], nil
}
