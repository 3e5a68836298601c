package sweep

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const tuneSweep = `name: credit
bases:
  - {config: tiny.yaml, label: small, levels: [horizon=5], set: [env.size=5]}
  - {config: tiny.yaml, label: large, levels: [horizon=7], set: [env.size=7]}
grid:
  seed: [201, 202]
variants:
  - {label: grpo, set: [estimator=grpo]}
  - {label: graft-td, set: [estimator=graft, estimator.mode=td]}
set: [iterations=2]
`

// Base labels name the runs of several bases of one env apart; the tuning sweep runs every
// variant at every value on the tuning seeds and bases only, and the choice lands in each
// variant's runs.
func TestTuneSweep(t *testing.T) {
	dir := t.TempDir()
	c := writeSweep(t, dir, tuneSweep+"tune: {key: optim.lr, values: [0.001, 0.0005], seeds: [101, 102], bases: [large], set: [iterations=1]}\n")
	runs, err := c.Expand()
	if err != nil {
		t.Fatal(err)
	}
	want := "small-grpo-s201 small-graft-td-s201 small-grpo-s202 small-graft-td-s202 large-grpo-s201 large-graft-td-s201 large-grpo-s202 large-graft-td-s202"
	if got := names(runs); got != want {
		t.Fatalf("names %q, want %q", got, want)
	}
	if runs[4].Env != "large" || runs[4].Resolved().Env.Options["size"] != 7 {
		t.Errorf("run %s: env %q, options %v", runs[4].Name, runs[4].Env, runs[4].Resolved().Env.Options)
	}

	m, err := c.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if lv := m.Levels(); lv == nil || strings.Join(lv.Axes, ",") != "horizon" || lv.Of["small"][0] != "5" || lv.Of["large"][0] != "7" || len(lv.Of) != 2 {
		t.Errorf("levels %+v", lv)
	}

	tc := c.TuneSweep()
	if tc.Dir() != TunePath(c.Dir()) {
		t.Errorf("tuning sweep in %s, want %s", tc.Dir(), TunePath(c.Dir()))
	}
	truns, err := tc.Expand()
	if err != nil {
		t.Fatal(err)
	}
	want = "large-grpo-s101-optim.lr=0.001 large-graft-td-s101-optim.lr=0.001 large-grpo-s101-optim.lr=0.0005 large-graft-td-s101-optim.lr=0.0005 " +
		"large-grpo-s102-optim.lr=0.001 large-graft-td-s102-optim.lr=0.001 large-grpo-s102-optim.lr=0.0005 large-graft-td-s102-optim.lr=0.0005"
	if got := names(truns); got != want {
		t.Fatalf("tuning names %q, want %q", got, want)
	}
	r := truns[3].Resolved()
	if r.Optim.LR != 0.0005 || r.Iterations != 1 || r.Seed != 101 || r.Estimator.Name != "graft" {
		t.Errorf("tuning run %s: lr %g iterations %d seed %d estimator %s", truns[3].Name, r.Optim.LR, r.Iterations, r.Seed, r.Estimator.Name)
	}

	res, err := c.Tune.Choose([]string{"grpo", "graft-td"}, map[string]map[string][]float64{
		"grpo":     {"0.001": {0.5, 0.7}, "0.0005": {0.6, 0.6}}, // a tie: the first listed value
		"graft-td": {"0.001": {0.2, 0.4}, "0.0005": {0.5, 0.3}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Chosen["grpo"] != "0.001" || res.Chosen["graft-td"] != "0.0005" || res.Scores["graft-td"]["0.0005"] != 0.4 || res.Runs["grpo"]["0.001"] != 2 {
		t.Errorf("choice %+v", res)
	}
	cc, err := c.WithChoice(res.Chosen)
	if err != nil {
		t.Fatal(err)
	}
	runs, err = cc.Expand()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if lr := r.Resolved().Optim.LR; r.Method == "grpo" && lr != 0.001 || r.Method == "graft-td" && lr != 0.0005 {
			t.Errorf("run %s: lr %g", r.Name, lr)
		}
	}
	if slices.Contains(c.Variants[0].Set, "optim.lr=0.001") {
		t.Error("WithChoice changed the original config's variants")
	}
	if _, err := c.Tune.Choose([]string{"grpo"}, map[string]map[string][]float64{"grpo": {"0.001": {1}}}); err == nil || !strings.Contains(err.Error(), "no finished tuning run at optim.lr=0.0005") {
		t.Errorf("missing value: %v", err)
	}
}

// Bad tune and audit sections are refused before any work, naming the key and what is allowed.
func TestTuneRefused(t *testing.T) {
	for _, tc := range []struct{ tune, want string }{
		{"tune: {key: optim.lr, values: [0.001, 0.002]}", "tune.seeds: a tuning grid needs tuning seeds that the evaluation never uses"},
		{"tune: {key: optim.lr, values: [0.001, 0.002], seeds: [101, 202]}", "tune.seeds: 202 is also an evaluation seed (grid.seed: [201, 202])"},
		{"tune: {values: [0.001, 0.002], seeds: [101]}", "tune.key: the key to select is required"},
		{"tune: {key: optim.lr, values: [0.001], seeds: [101]}", "tune.values: 1 value(s); a selection needs at least 2"},
		{"tune: {key: optim.lr, values: [0.001, 0.001], seeds: [101]}", `tune.values[1]: "0.001" is empty or listed twice`},
		{"tune: {key: seed, values: [1, 2], seeds: [101]}", `tune.key: "seed" cannot be tuned`},
		{"tune: {key: iterations, values: [1, 2], seeds: [101]}", `tune.key: iterations is also set by set ("iterations=2")`},
		{"tune: {key: optim.lr, values: [0.001, 0.002], seeds: [101], rule: best}", `tune.rule: "best" is not allowed (allowed: max-mean-final)`},
		{"tune: {key: optim.lr, values: [0.001, 0.002], seeds: [101], bases: [huge]}", `tune.bases[0]: "huge" is not a base of the sweep (allowed: small, large)`},
		{"tune: {key: optim.lr, values: [0.001, 0.002], seeds: [101], set: [seed=3]}", `tune.set: "seed=3": the tuning seeds are tune.seeds`},
		{"tune: {key: optim.lr, values: [0.001, 0.002], seeds: [101], lr: 1}", `unknown key "tune.lr"`},
		{"audit: {bases: [medium]}", `audit.bases[0]: "medium" is not a base of the sweep (allowed: small, large)`},
		{"audit: {mc: 1}", "audit.mc: 1 is out of range (allowed 2..100000"},
		{"audit: {methods: [grpo, grpo]}", `audit.methods[1]: "grpo" is listed twice`},
	} {
		_, err := Parse("s.yaml", []byte(tuneSweep+tc.tune+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to mention %q", tc.tune, err, tc.want)
		}
	}
	noVariants := strings.Replace(tuneSweep, "variants:\n  - {label: grpo, set: [estimator=grpo]}\n  - {label: graft-td, set: [estimator=graft, estimator.mode=td]}\n", "", 1)
	if _, err := Parse("s.yaml", []byte(noVariants+"tune: {key: optim.lr, values: [0.001, 0.002], seeds: [101]}\n")); err == nil || !strings.Contains(err.Error(), "tune: needs variants") {
		t.Errorf("tune without variants: %v", err)
	}
	variantSets := strings.Replace(tuneSweep, "[estimator=grpo]", "[estimator=grpo, optim.lr=0.1]", 1)
	if _, err := Parse("s.yaml", []byte(variantSets+"tune: {key: optim.lr, values: [0.001, 0.002], seeds: [101]}\n")); err == nil || !strings.Contains(err.Error(), "tune.key: optim.lr is also set by variants[0].set") {
		t.Errorf("a variant setting the tuned key: %v", err)
	}
}

// A base's waste_target reaches the manifest and the comparison's levels, keyed by the base's
// env (its label); 0 is a target like any other, and a base without one has none. A manifest
// written before the key existed has no targets.
func TestWasteTarget(t *testing.T) {
	dir := t.TempDir()
	c := writeSweep(t, dir, `name: waste
bases:
  - {config: tiny.yaml, label: small, levels: [horizon=5], waste_target: 0.35, set: [env.size=5]}
  - {config: tiny.yaml, label: large, levels: [horizon=7], set: [env.size=7]}
  - {config: tiny.yaml, label: clean, levels: [horizon=9], waste_target: 0, set: [env.size=9]}
grid:
  seed: [1]
set: [iterations=1]
`)
	if b := c.Bases[0]; b.WasteTarget == nil || *b.WasteTarget != 0.35 || c.Bases[1].WasteTarget != nil {
		t.Fatalf("bases %+v", c.Bases)
	}
	m, err := c.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	stored, err := LoadManifest(c.Dir())
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range []*Manifest{m, stored} {
		lv := mf.Levels()
		if lv == nil || len(lv.WasteTarget) != 2 || lv.WasteTarget["small"] != 0.35 {
			t.Fatalf("levels %+v", lv)
		}
		if v, ok := lv.WasteTarget["clean"]; !ok || v != 0 {
			t.Errorf("clean's target %v (present %v), want 0", v, ok)
		}
		if _, ok := lv.WasteTarget["large"]; ok {
			t.Errorf("large has a target: %v", lv.WasteTarget)
		}
	}
	data, err := os.ReadFile(filepath.Join(c.Dir(), ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), `"waste_target"`); n != 2 {
		t.Errorf("manifest.json holds waste_target %d times, want 2 (small, clean):\n%s", n, data)
	}

	var old Manifest
	if err := json.Unmarshal([]byte(`{"version": 1, "runs": [{"index": 0, "name": "small-grpo-s1", "env": "small", "levels": ["horizon=5"]}]}`), &old); err != nil {
		t.Fatal(err)
	}
	if lv := old.Levels(); lv == nil || lv.Of["small"][0] != "5" || lv.WasteTarget != nil {
		t.Errorf("an old manifest's levels %+v, want horizon 5 and no targets", lv)
	}
}
