package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/study"
)

// The tiny study's bases: maze and frozenlake, 4 iterations, evaluated every 2 on the held-out
// panel, a checkpoint every iteration.
const (
	studyMaze = `iterations: 4
env: {name: maze}
tasks: {train: 4, eval: 4, per_iter: 2, group_size: 4}
rollout: {action_max_tokens: 1}
policy: {d_model: 16, layers: 1, heads: 2, d_ff: 32}
eval: {every: 2}
checkpoint: {every: 1, keep_last: 8}
`
	studySweep = `name: tiny-study
bases:
  - maze.yaml
  - {config: lake.yaml, set: [iterations=3]}
grid:
  estimator: [grpo, graft]
  seed: [1, 2]
workers: 2
compare: {metric: eval/heldout/success, baseline: grpo, final: common-budget}
`
)

// A tiny study end to end (2 envs × 2 estimators × 2 seeds, real training in separate
// processes): the report's IQMs and probabilities of improvement equal an independent
// computation from the runs' metrics.jsonl, the report has its ranking, why and provenance
// sections, and running the finished study again changes no result file and no report line.
func TestStudyTiny(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	lake := strings.Replace(studyMaze, "env: {name: maze}", "env: {name: frozenlake}", 1)
	for name, body := range map[string]string{"maze.yaml": studyMaze, "lake.yaml": lake, "study.yaml": studySweep} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sd := filepath.Join(dir, "out", "st")
	var log bytes.Buffer
	o := &studyOptions{config: filepath.Join(dir, "study.yaml"), out: sd, workers: -1, auditSteps: 6, auditMC: 2,
		binary: bin, command: "graftrl study (test)", out1: &bytes.Buffer{}, log: &log}
	if err := studyRun(context.Background(), o); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}

	// Independent final scores: each run's held-out success read at its env's common budget
	// (the smallest final env steps of the env's runs), interpolating linearly.
	type point struct{ steps, v float64 }
	curves := map[string][]point{}
	runEnv := map[string]string{}
	common := map[string]float64{}
	for _, env := range []string{"maze", "frozenlake"} {
		common[env] = math.Inf(1)
		for _, m := range []string{"grpo", "graft"} {
			for _, s := range []int{1, 2} {
				name := fmt.Sprintf("%s-%s-s%d", env, m, s)
				f, err := os.Open(filepath.Join(sd, "runs", name, "metrics.jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				sc := bufio.NewScanner(f)
				for sc.Scan() {
					var row map[string]any
					if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
						t.Fatal(err)
					}
					if row["type"] == "eval" {
						curves[name] = append(curves[name], point{row["env_steps"].(float64), row["eval/heldout/success"].(float64)})
					}
				}
				f.Close()
				last := curves[name][len(curves[name])-1]
				common[env] = math.Min(common[env], last.steps)
				runEnv[name] = env
			}
		}
	}
	score := func(name string) float64 {
		c, at := curves[name], common[runEnv[name]]
		for i := 1; i < len(c); i++ {
			if c[i].steps >= at {
				w := (at - c[i-1].steps) / (c[i].steps - c[i-1].steps)
				return c[i-1].v + w*(c[i].v-c[i-1].v)
			}
		}
		return c[len(c)-1].v
	}
	scores := func(env, m string) []float64 {
		return []float64{score(env + "-" + m + "-s1"), score(env + "-" + m + "-s2")}
	}
	wins := func(x, y []float64) float64 {
		u := 0.0
		for _, a := range x {
			for _, b := range y {
				if a > b {
					u++
				} else if a == b {
					u += 0.5
				}
			}
		}
		return u / float64(len(x)*len(y))
	}
	// IQM: with two runs nothing is trimmed (the mean); over the 4 pooled runs of both envs
	// one run is trimmed from each end.
	iqm4 := func(x []float64) float64 {
		s := append([]float64(nil), x...)
		sort.Float64s(s)
		return (s[1] + s[2]) / 2
	}

	report := filepath.Join(sd, "report")
	perEnv := readCSV(t, filepath.Join(report, "per_env.csv"))
	for _, env := range []string{"frozenlake", "maze"} {
		g, b := scores(env, "graft"), scores(env, "grpo")
		near(t, env+" graft IQM", perEnv[env+"/graft"]["iqm"], (g[0]+g[1])/2)
		near(t, env+" grpo IQM", perEnv[env+"/grpo"]["iqm"], (b[0]+b[1])/2)
		near(t, env+" P(graft > grpo)", perEnv[env+"/graft"]["p_improve"], wins(g, b))
	}
	agg := readCSV(t, filepath.Join(report, "aggregate.csv"))
	for _, m := range []string{"grpo", "graft"} {
		near(t, m+" aggregate IQM", agg[m]["iqm"], iqm4(append(scores("maze", m), scores("frozenlake", m)...)))
	}
	near(t, "aggregate P(graft > grpo)", agg["graft"]["p_improve"],
		(wins(scores("maze", "graft"), scores("maze", "grpo"))+wins(scores("frozenlake", "graft"), scores("frozenlake", "grpo")))/2)
	pairs := readCSV(t, filepath.Join(report, "pairs.csv"))
	for key, row := range pairs {
		env, a, b := row["env"], row["a"], row["b"]
		var want float64
		if env == "all" {
			want = (wins(scores("maze", a), scores("maze", b)) + wins(scores("frozenlake", a), scores("frozenlake", b))) / 2
		} else {
			want = wins(scores(env, a), scores(env, b))
		}
		near(t, "pair "+key, row["p_a_over_b"], want)
	}
	if len(pairs) != 3 {
		t.Errorf("pairs.csv has %d rows, want 3 (maze, frozenlake, all)", len(pairs))
	}

	// Paired differences: the runs of a seed share random initial weights (no warm start), so
	// graft's run of seed s is paired with grpo's; the mean difference over the two seeds, and
	// over the four pairs of both envs (success rates: normalised by the identity).
	paired := readCSV(t, filepath.Join(report, "paired.csv"))
	var all []float64
	for _, env := range []string{"maze", "frozenlake"} {
		g, b := scores(env, "graft"), scores(env, "grpo")
		all = append(all, g[0]-b[0], g[1]-b[1])
		near(t, env+" paired mean difference", paired["final/"+env+"/graft"]["mean"], (g[0]-b[0]+g[1]-b[1])/2)
	}
	near(t, "paired mean difference over all", paired["final/all/graft"]["mean"], (all[0]+all[1]+all[2]+all[3])/4)

	md, err := os.ReadFile(filepath.Join(report, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Ranking", "Over all environments (normalised scores) the order by IQM is",
		"## Paired comparison against grpo", "4 pairs in 2 environment(s)", "## Gain over the start",
		"## Why: state sharing and advantage accuracy", "### State sharing", "### Advantage audit, in brief",
		"maze-grpo-s1", "frozenlake-grpo-s1", "Time: the study took", "Machine: ", "Build: graftrl ", "Produced by: graftrl study (test)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	for _, run := range []string{"maze-grpo-s1", "frozenlake-grpo-s1"} {
		var a struct {
			Iter int `json:"iter"`
		}
		data, err := os.ReadFile(filepath.Join(sd, "runs", run, "audit", "audit.json"))
		if err != nil || json.Unmarshal(data, &a) != nil {
			t.Fatalf("%s: no audit: %v", run, err)
		}
		if want := map[string]int{"maze-grpo-s1": 2, "frozenlake-grpo-s1": 1}[run]; a.Iter != want {
			t.Errorf("%s audited at iteration %d, want %d (half way)", run, a.Iter, want)
		}
	}

	// Again: nothing is retrained or re-audited, and every file but the invocation log is unchanged.
	before := treeHashes(t, sd)
	log.Reset()
	if err := studyRun(context.Background(), o); err != nil {
		t.Fatalf("second pass: %v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "all 8 runs are finished") || strings.Contains(log.String(), "auditing") {
		t.Errorf("second pass trained or audited:\n%s", log.String())
	}
	after := treeHashes(t, sd)
	for path, h := range before {
		if path != study.TimesFile && after[path] != h {
			t.Errorf("the second pass changed %s", path)
		}
	}
}

// readCSV reads a report CSV into rows keyed by their first columns ("env/method" for
// per_env.csv, the method for aggregate.csv, "env/a/b" for pairs.csv).
func readCSV(t *testing.T, path string) map[string]map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for _, r := range recs[1:] {
		row := map[string]string{}
		for i, h := range recs[0] {
			row[h] = r[i]
		}
		var key string
		switch filepath.Base(path) {
		case "per_env.csv":
			key = r[0] + "/" + r[1]
		case "pairs.csv", "paired.csv":
			key = r[0] + "/" + r[1] + "/" + r[2]
		default:
			key = r[0]
		}
		out[key] = row
	}
	return out
}

// near checks a CSV number (six significant digits) against the independent value.
func near(t *testing.T, what, got string, want float64) {
	t.Helper()
	v, err := strconv.ParseFloat(got, 64)
	if err != nil || math.Abs(v-want) > 1e-5*math.Max(1, math.Abs(want)) {
		t.Errorf("%s: report %q, independent %.6g", what, got, want)
	}
}

// treeHashes maps every file under root (relative path) to its SHA-256.
func treeHashes(t *testing.T, root string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		out[rel] = sha256.Sum256(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A study with a selection: two bases of one env told apart by their labels, two variants, the
// learning rate chosen per variant on a tuning seed the evaluation never uses, by the rule
// (the highest final metric; the first value on a tie), recomputed here from the tuning runs'
// metrics.jsonl; the choice is in every evaluation run's config and in the report; the audit
// section audits each method on the base it names only.
func TestStudyTune(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	sweepYAML := `name: tuned
bases:
  - {config: maze.yaml, label: short, set: [env.turn_cap_factor=1.5]}
  - {config: maze.yaml, label: long, set: [env.turn_cap_factor=3]}
grid:
  seed: [1]
variants:
  - {label: grpo, set: [estimator=grpo]}
  - {label: graft-td, set: [estimator=graft, estimator.mode=td]}
set: [iterations=2, tasks.per_iter=2]
tune: {key: optim.lr, values: [0.01, 0.0001], seeds: [101], bases: [long], metric: eval/heldout/greedy/return}
audit: {methods: [grpo, graft-td], bases: [short], steps: 4, mc: 2}
compare: {metric: eval/heldout/success, baseline: grpo, final: common-budget}
`
	for name, body := range map[string]string{"maze.yaml": studyMaze, "study.yaml": sweepYAML} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sd := filepath.Join(dir, "out", "tuned")
	var log, out bytes.Buffer
	o := &studyOptions{config: filepath.Join(dir, "study.yaml"), out: sd, workers: 1, auditSteps: 120, auditMC: 16,
		binary: bin, command: "graftrl study (test)", out1: &out, log: &log}
	if err := studyRun(context.Background(), o); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	final := func(run string) float64 {
		data, err := os.ReadFile(filepath.Join(run, "metrics.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		v := math.NaN()
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var row map[string]any
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatal(err)
			}
			if row["type"] == "eval" {
				v = row["eval/heldout/greedy/return"].(float64)
			}
		}
		return v
	}
	var res struct {
		Chosen map[string]string `json:"chosen"`
	}
	data, err := os.ReadFile(filepath.Join(sd, "tune.json"))
	if err != nil || json.Unmarshal(data, &res) != nil {
		t.Fatalf("tune.json: %v\n%s", err, data)
	}
	for _, m := range []string{"grpo", "graft-td"} {
		hi := final(filepath.Join(sd, "tune", "runs", "long-"+m+"-s101-optim.lr=0.01"))
		lo := final(filepath.Join(sd, "tune", "runs", "long-"+m+"-s101-optim.lr=0.0001"))
		want := "0.01"
		if lo > hi {
			want = "0.0001"
		}
		if res.Chosen[m] != want {
			t.Errorf("%s: chose %s with finals 0.01→%g, 0.0001→%g; want %s", m, res.Chosen[m], hi, lo, want)
		}
		for _, base := range []string{"short", "long"} {
			cfg, err := os.ReadFile(filepath.Join(sd, "runs", base+"-"+m+"-s1", "config.yaml"))
			if err != nil || !strings.Contains(string(cfg), "lr: "+want+"\n") {
				t.Errorf("%s-%s-s1: config without lr %s (%v)", base, m, want, err)
			}
			_, err = os.Stat(filepath.Join(sd, "runs", base+"-"+m+"-s1", "audit", "audit.json"))
			if audited := err == nil; audited != (base == "short") {
				t.Errorf("%s-%s-s1: audited %v, want %v", base, m, audited, base == "short")
			}
		}
	}
	if _, err := os.Stat(filepath.Join(sd, "tune", "runs", "short-grpo-s101-optim.lr=0.01")); err == nil {
		t.Error("tuned on a base outside tune.bases")
	}
	report, err := os.ReadFile(filepath.Join(sd, "report", "report.md"))
	if err != nil || !strings.Contains(string(report), "Selection: optim.lr was chosen per method among 0.01, 0.0001 on the tuning seeds 101") {
		t.Errorf("report without the selection note (%v)", err)
	}
	// graftrl sweep refuses to train a config with a selection; its dry run shows the study's
	// runs as trained, with the recorded choice (all finished, no config changed).
	so := &sweepOptions{config: filepath.Join(dir, "study.yaml"), outDir: filepath.Dir(sd), workers: -1, out: &bytes.Buffer{}, log: &bytes.Buffer{}}
	if err := sweepRun(context.Background(), so); err == nil || !strings.Contains(err.Error(), "has a tune section, which graftrl study runs") || exitStatus(err) != 2 {
		t.Errorf("graftrl sweep on a config with a selection: %v", err)
	}
	var dry bytes.Buffer
	so.dryRun, so.out = true, &dry
	if err := sweepRun(context.Background(), so); err != nil || !strings.Contains(dry.String(), "0 to run, 4 finished") {
		t.Errorf("dry run: %v\n%s", err, dry.String())
	}
}

// A study's bad input is refused before any work, naming the key and what is allowed, and
// leaves no study directory: an axis level the env does not support, a selection without
// tuning seeds, tuning seeds that are evaluation seeds.
func TestStudyRefusals(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "maze.yaml"), []byte(studyMaze), 0o644); err != nil {
		t.Fatal(err)
	}
	base := "name: bad\nbases:\n  - {config: maze.yaml, label: big, set: [env.size=%s]}\ngrid:\n  seed: [1, 2]\nvariants:\n  - {label: grpo, set: [estimator=grpo]}\n%s\n"
	for _, tc := range []struct{ size, tune, want string }{
		{"12", "", `run base=big, seed=1, variant=grpo: env maze: option "size": 12 is out of range (allowed 5..11)`},
		{"9", "tune: {key: optim.lr, values: [0.001, 0.002]}", "tune.seeds: a tuning grid needs tuning seeds that the evaluation never uses"},
		{"9", "tune: {key: optim.lr, values: [0.001, 0.002], seeds: [2, 3]}", "tune.seeds: 2 is also an evaluation seed (grid.seed: [1, 2])"},
	} {
		path := filepath.Join(dir, "study.yaml")
		if err := os.WriteFile(path, []byte(fmt.Sprintf(base, tc.size, tc.tune)), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out")
		err := studyRun(context.Background(), &studyOptions{config: path, out: out, workers: -1, auditSteps: 1, auditMC: 2,
			out1: &bytes.Buffer{}, log: &bytes.Buffer{}})
		if err == nil || !strings.Contains(err.Error(), tc.want) || exitStatus(err) != 2 {
			t.Errorf("size %s, %q: error %v (exit %d), want exit 2 naming %q", tc.size, tc.tune, err, exitStatus(err), tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("size %s, %q: the study directory was written", tc.size, tc.tune)
		}
	}
}
