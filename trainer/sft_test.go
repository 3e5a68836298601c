package trainer

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/config"
	_ "github.com/graftrl/graftrl/envs/keydoor"
	"github.com/graftrl/graftrl/policy"
	"github.com/graftrl/graftrl/rundir"
)

// sftSets turn the tiny run into one with a small warm start.
var sftSets = []string{"sft.demos=24", "sft.steps=80", "sft.batch=8", "sft.lr=0.01", "sft.epsilon=0.2"}

func tinyConfig(t *testing.T, dir string, sets ...string) config.Config {
	t.Helper()
	cfg, err := config.Parse("tiny.yaml", []byte(tinyYAML), append([]string{"out_dir=" + dir}, sets...))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func readReport(t *testing.T, dir string) SFTReport {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, rundir.SFTReportFile))
	if err != nil {
		t.Fatal(err)
	}
	var r SFTReport
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// A warm start rolls out the expert, learns its actions (the cross-entropy falls) and writes
// weights, vocabulary and report; the same config and seed give the same weights, another seed
// other weights.
func TestWarmStart(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a policy")
	}
	dir := t.TempDir()
	cfg := tinyConfig(t, dir, sftSets...)
	a, err := RunSFT(cfg, filepath.Join(dir, "a"), Options{Out: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if a.Demos != 24 || a.DemoErrors != 0 || a.DemoSuccess < 0.5 || a.NoiseSteps == 0 || a.Rows != 24 || a.Tokens == 0 {
		t.Fatalf("report %+v", a)
	}
	if first, last := a.Loss[0].Loss, a.Loss[len(a.Loss)-1].Loss; !(last < 0.7*first) {
		t.Errorf("cross-entropy %g → %g: the expert's actions were not learnt", first, last)
	}
	for _, f := range []string{rundir.PolicyDir, rundir.VocabFile, rundir.SFTReportFile} {
		if _, err := os.Stat(filepath.Join(dir, "a", f)); err != nil {
			t.Error(err)
		}
	}
	if got := readReport(t, filepath.Join(dir, "a")); got.SHA256 != a.SHA256 || len(got.SHA256) != 64 {
		t.Errorf("report on disk %q, returned %q", got.SHA256, a.SHA256)
	}
	b, err := RunSFT(cfg, filepath.Join(dir, "b"), Options{Out: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if a.SHA256 != b.SHA256 || !reflect.DeepEqual(a.Loss, b.Loss) {
		t.Errorf("same config and seed, different warm starts: %s vs %s", a.SHA256, b.SHA256)
	}
	other := tinyConfig(t, dir, append(sftSets, "seed=2")...)
	c, err := RunSFT(other, filepath.Join(dir, "c"), Options{Out: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if c.SHA256 == a.SHA256 {
		t.Error("another seed gave the same warm start")
	}
	if _, err := RunSFT(cfg, filepath.Join(dir, "a"), Options{Out: io.Discard}); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("writing over a warm start: %v", err)
	}
}

// A training config with an sft section starts RL from its warm start: computed once, reused by
// a run of another estimator with the same seed, recorded in the summary; the policy's initial
// weights are the warm start's.
func TestTrainStartsFromWarmStart(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a policy")
	}
	dir := t.TempDir()
	grpo := newTiny(t, dir, append(sftSets, "name=grpo")...)
	defer grpo.Close()
	ws := WarmStartDir(tinyConfig(t, dir, sftSets...))
	want, err := policy.ReadCheckpointWeights(filepath.Join(ws, rundir.PolicyDir), grpo.Policy().Config())
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := grpo.Policy().Weights(); !reflect.DeepEqual(got, want) {
		t.Fatal("the run does not start from the warm start's weights")
	}
	s, err := grpo.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rep := readReport(t, ws)
	if s.Init != ws || s.InitSHA256 != rep.SHA256 {
		t.Errorf("summary init %q %q, want %q %q", s.Init, s.InitSHA256, ws, rep.SHA256)
	}
	before, _ := os.Stat(filepath.Join(ws, rundir.SFTReportFile))
	graft := newTiny(t, dir, append(sftSets, "name=graft", "estimator=graft")...)
	defer graft.Close()
	if got, _ := graft.Policy().Weights(); !reflect.DeepEqual(got, want) {
		t.Fatal("another estimator of the same seed does not start from the same weights")
	}
	if after, _ := os.Stat(filepath.Join(ws, rundir.SFTReportFile)); !after.ModTime().Equal(before.ModTime()) {
		t.Error("the warm start was computed again")
	}
	// policy.init takes any checkpoint of a run: the graft run starts from grpo's last one.
	ckpts, err := rundir.ListCheckpoints(grpo.Dir())
	if err != nil || len(ckpts) == 0 {
		t.Fatal(ckpts, err)
	}
	from := newTiny(t, dir, "name=from-ckpt", "policy.init="+ckpts[len(ckpts)-1])
	defer from.Close()
	final, _ := grpo.Policy().Weights()
	if got, _ := from.Policy().Weights(); !reflect.DeepEqual(got, final) {
		t.Error("policy.init of a checkpoint does not load its weights")
	}
}

// Bad warm starts and inits are refused before any work, naming the key and what is allowed.
func TestWarmStartErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a policy")
	}
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if _, err := RunSFT(tinyConfig(t, dir, sftSets...), ws, Options{Out: io.Discard}); err != nil {
		t.Fatal(err)
	}
	corrupt := filepath.Join(dir, "corrupt")
	if err := os.CopyFS(corrupt, os.DirFS(ws)); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(corrupt, rundir.PolicyDir, "*"))
	for _, f := range files {
		os.WriteFile(f, []byte("{not a checkpoint"), 0o644)
	}
	noVocab := filepath.Join(dir, "novocab")
	os.CopyFS(noVocab, os.DirFS(ws))
	os.Remove(filepath.Join(noVocab, rundir.VocabFile))
	for _, tc := range []struct {
		name string
		sets []string
		want []string
	}{
		{"missing", []string{"policy.init=" + filepath.Join(dir, "absent")}, []string{"policy.init", "absent", "not a directory"}},
		{"corrupt", []string{"policy.init=" + corrupt}, []string{"policy.init", "corrupt"}},
		{"no vocabulary", []string{"policy.init=" + noVocab}, []string{"policy.init", rundir.VocabFile}},
		{"other shape", []string{"policy.init=" + ws, "policy.d_model=32"}, []string{"policy.init", "shape"}},
		{"other vocabulary", []string{"policy.init=" + ws, "env=keydoor", "rollout.action_max_tokens=2", "policy.max_len=192"}, []string{"policy.init", "vocabulary"}},
		{"idle without idle actions", append([]string{"sft.idle=0.3"}, sftSets...), []string{"sft.idle", "maze", "idle_actions"}},
		{"env without expert", append([]string{"env.name=faulty-test", "env.mode=error", "env.every=1000"}, sftSets...), []string{"sft", "faulty-test", "no expert", "maze"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tinyConfig(t, dir, append([]string{"name=" + strings.ReplaceAll(tc.name, " ", "-")}, tc.sets...)...)
			tr, err := New(cfg, Options{Out: io.Discard})
			if err == nil {
				tr.Close()
				t.Fatal("accepted")
			}
			var ce *config.Error
			if !errors.As(err, &ce) {
				t.Errorf("want a *config.Error (exit status 2), got %T: %v", err, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// Idle demonstrations (sft.idle): the demonstrator takes the env's idle action look at the set
// per-step rate, within four binomial standard deviations of it, without stopping the expert's
// successes; without sft.idle it never takes it.
func TestIdleDemonstrations(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a policy")
	}
	dir := t.TempDir()
	sets := []string{"sft.demos=64", "sft.steps=80", "sft.batch=8", "sft.lr=0.01", "sft.epsilon=0", "env.idle_actions=true", "env.max_turns=40", "policy.max_len=512"}
	const p = 0.4
	rep, err := RunSFT(tinyConfig(t, dir, append(sets, "sft.idle=0.4")...), filepath.Join(dir, "idle"), Options{Out: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	n := float64(rep.DemoSteps)
	if share, sd := float64(rep.IdleSteps)/n, math.Sqrt(p*(1-p)/n); math.Abs(share-p) > 4*sd || rep.NoiseSteps != 0 {
		t.Errorf("%d idle steps of %d (share %.3f), %d noise steps; want a share within 4 sd (%.3f) of %g and no noise", rep.IdleSteps, rep.DemoSteps, share, rep.NoiseSteps, 4*sd, p)
	}
	if rep.DemoSuccess < 0.9 {
		t.Errorf("demonstrations succeed %.2f of the time; idle steps must not stop the expert", rep.DemoSuccess)
	}
	plain, err := RunSFT(tinyConfig(t, dir, sets...), filepath.Join(dir, "plain"), Options{Out: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if plain.IdleSteps != 0 {
		t.Errorf("sft.idle 0 took %d idle steps", plain.IdleSteps)
	}
}

// Open training tasks: the config says open, writes it back, accepts it from --set, and a run
// draws fresh tasks every iteration and evaluates on the held-out panel only.
func TestOpenTasks(t *testing.T) {
	dir := t.TempDir()
	cfg := tinyConfig(t, dir, "tasks.train=open", "tasks.per_iter=3")
	if !cfg.Tasks.Train.Open || cfg.Tasks.Train.String() != "open" {
		t.Fatalf("tasks.train = %+v", cfg.Tasks.Train)
	}
	if !strings.Contains(string(cfg.YAML()), "train: open") {
		t.Fatalf("written config:\n%s", cfg.YAML())
	}
	again, err := config.Parse("config.yaml", cfg.YAML(), nil)
	if err != nil || !reflect.DeepEqual(again.Tasks, cfg.Tasks) {
		t.Fatalf("round trip: %+v, %v", again.Tasks, err)
	}
	if testing.Short() {
		return
	}
	tr, err := New(cfg, Options{Out: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	seen := map[int64]bool{}
	for range 4 {
		for _, s := range tr.nextTasks() {
			if seen[s] || s < 1<<51 {
				t.Fatalf("task seed %d: repeated, or in a panel's range", s)
			}
			seen[s] = true
		}
	}
	m, err := tr.evaluate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m["eval/train/greedy/success"]; ok {
		t.Error("open training tasks have no training panel to evaluate")
	}
	if m["eval/success"] != m["eval/heldout/greedy/success"] || m["eval/success"] == nil {
		t.Errorf("eval/success %v, held-out %v", m["eval/success"], m["eval/heldout/greedy/success"])
	}
}

// The warm start depends on what shapes it — env, layout, architecture, optimiser, sft section,
// seed — and on nothing RL-specific, so a sweep's estimators of one seed share it.
func TestWarmStartDirKey(t *testing.T) {
	dir := t.TempDir()
	base := WarmStartDir(tinyConfig(t, dir, sftSets...))
	if !strings.HasPrefix(base, filepath.Join(dir, rundir.WarmStartsDir, "maze-seed1-")) {
		t.Fatalf("warm start dir %s", base)
	}
	for _, same := range [][]string{{"estimator=graft"}, {"name=other"}, {"iterations=7"}, {"update.epochs=3"}, {"tasks.per_iter=1"}, {"eval.every=1"}} {
		if got := WarmStartDir(tinyConfig(t, dir, append(sftSets, same...)...)); got != base {
			t.Errorf("%v changes the warm start: %s", same, got)
		}
	}
	for _, other := range [][]string{{"seed=2"}, {"env.size=6"}, {"policy.d_model=32"}, {"sft.steps=81"}, {"optim.grad_clip=0.5"}, {"rollout.layout=window"},
		{"sft.idle=0.3"}, {"env.idle_actions=true"}} {
		if got := WarmStartDir(tinyConfig(t, dir, append(sftSets, other...)...)); got == base {
			t.Errorf("%v keeps the warm start of another config", other)
		}
	}
}
