package trainer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/policy"
	"github.com/graftrl/graftrl/policy/spec"
	"github.com/graftrl/graftrl/rollout"
	"github.com/graftrl/graftrl/rundir"
)

// SFTReport is what a warm start writes beside its weights (rundir.SFTReportFile).
type SFTReport struct {
	Env        string           `json:"env"`
	Seed       uint64           `json:"seed"`
	SFT        config.SFTConfig `json:"sft"`
	Policy     policy.Config    `json:"policy"`
	Demos      int              `json:"demos"`
	DemoSteps  int              `json:"demo_steps"`
	NoiseSteps int              `json:"noise_steps"`
	// IdleSteps counts the demonstrations' idle actions (sft.idle), taken as targets.
	IdleSteps   int     `json:"idle_steps,omitempty"`
	DemoSuccess float64 `json:"demo_success"`
	DemoErrors  int     `json:"demo_errors"`
	// ExpertHeldout is the expert's success (no noise) on the held-out panel: the ceiling the
	// policy's eval/heldout/greedy/success is measured against.
	ExpertHeldout float64            `json:"expert_heldout_success"`
	Rows          int                `json:"rows"`
	Tokens        int                `json:"trained_tokens"`
	Loss          []SFTLossPoint     `json:"loss"`
	Seconds       map[string]float64 `json:"seconds"`
	SHA256        string             `json:"policy_sha256"`
}

// SFTLossPoint is the cross-entropy per action token after a step.
type SFTLossPoint struct {
	Step int     `json:"step"`
	Loss float64 `json:"loss"`
}

// RunSFT runs the warm start of cfg (its sft section) and writes the weights, the vocabulary and
// the report into dir, which must not exist yet; it is written under a temporary name and
// renamed into place when complete. The same config and seed give the same weights. While it
// works it holds the lock dir.lock (as EnsureWarmStart does): when another process holds it,
// RunSFT is refused at once with a *DirError naming that process; so is a dir that exists.
func RunSFT(cfg config.Config, dir string, opts Options) (*SFTReport, error) {
	if err := cfg.Validate(); err != nil {
		return nil, &config.Error{Msg: err.Error()}
	}
	if !cfg.SFT.Enabled() {
		return nil, &config.Error{Msg: "sft.demos: 0 turns the warm start off; set it to the number of demonstrations"}
	}
	info, err := ProbeEnv(&cfg, checkTeacher(cfg))
	if err != nil {
		return nil, err
	}
	made, err := mkdirAllMade(filepath.Dir(dir))
	if err != nil {
		return nil, &DirError{Dir: dir, Msg: fmt.Sprintf("sft: %s cannot be written: %v", dir, err)}
	}
	lock := dir + ".lock"
	unlock, err := rundir.TryLock(lock)
	if errors.Is(err, rundir.ErrLocked) {
		return nil, lockedError(dir, lock, "warm start "+dir)
	}
	if err != nil {
		removeMade(made)
		return nil, &DirError{Dir: dir, Msg: fmt.Sprintf("sft: %s cannot be written: %v", dir, err)}
	}
	defer unlock()
	rep, err := runSFT(cfg, info, dir, opts)
	if err != nil {
		dropWarmStartLock(dir, made)
	}
	return rep, err
}

// dropWarmStartLock is the clean-up of a warm start that failed (a backend that cannot load,
// an env that fails its demonstrations): when its folder dir does not exist, the lock file
// beside it guards nothing and is removed — while still held, so that a process waiting for it
// finds it gone and takes a new one (rundir.Lock) — and so are the folders made for it (made,
// from mkdirAllMade) that are left empty.
func dropWarmStartLock(dir string, made []string) {
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		return
	}
	os.Remove(dir + ".lock")
	removeMade(made)
}

// runSFT is RunSFT under the lock, on the env ProbeEnv described: the demonstrations, the
// supervised steps on them, and the init directory written.
func runSFT(cfg config.Config, info EnvInfo, dir string, opts Options) (*SFTReport, error) {
	if _, err := os.Stat(dir); err == nil {
		return nil, &DirError{Dir: dir, Msg: fmt.Sprintf("sft: %s exists already (allowed: a folder that does not exist yet)", dir)}
	}
	out := opts.Out
	if out == nil {
		out = os.Stderr
	}
	start := time.Now()
	po := PolicyOptions(&cfg, info)
	po.Loss = spec.DefaultLossConfig()
	po.Loss.Objective = spec.ObjectiveCrossEntropy
	pol, err := newPolicy(&cfg, po, opts.InstallPlugin)
	if err != nil {
		return nil, err
	}
	coll, err := newCollector(&cfg, pol, info.Format, 1)
	if err != nil {
		return nil, err
	}
	defer coll.Close()

	rep := &SFTReport{Env: cfg.Env.Name, Seed: cfg.Seed, SFT: cfg.SFT, Policy: po.Model, Seconds: map[string]float64{}}
	rows, err := demonstrate(cfg, info, coll, rep)
	if err != nil {
		return nil, err
	}
	if cfg.Tasks.Eval > 0 {
		if rep.ExpertHeldout, err = expertHeldout(cfg, coll); err != nil {
			return nil, err
		}
	}
	rep.Seconds["demonstrations"] = time.Since(start).Seconds()
	idle := ""
	if cfg.SFT.Idle > 0 {
		idle = fmt.Sprintf(", %d idle", rep.IdleSteps)
	}
	fmt.Fprintf(out, "sft: %d demonstrations of %s (%d steps, %d of them noise%s, success %.2f), %d rows; the expert's held-out success %.3f\n",
		rep.Demos, cfg.Env.Name, rep.DemoSteps, rep.NoiseSteps, idle, rep.DemoSuccess, rep.Rows, rep.ExpertHeldout)

	t0 := time.Now()
	if rep.Loss, err = trainSFT(cfg, pol, po, info.MaxTurns, rows, out, opts); err != nil {
		return nil, err
	}
	rep.Seconds["train"] = time.Since(t0).Seconds()
	if err := writeInit(dir, pol, info.identity(), rep); err != nil {
		return nil, err
	}
	rep.Seconds["total"] = time.Since(start).Seconds()
	return rep, nil
}

// demonstrate rolls out the expert, with ε-noise, on fresh task seeds outside every panel and
// returns the rows of its episodes, every action token a target (advantage 1). It counts the
// demonstrations, their steps, successes and env errors into rep, and refuses demonstrations
// that more than a quarter of the episodes fail with env errors, or that hold no action.
func demonstrate(cfg config.Config, info EnvInfo, coll *rollout.Collector, rep *SFTReport) ([]trainRow, error) {
	rng := rngFor(cfg.Seed, streamSFT)
	teacher := noisyExpert(cfg.SFT.Epsilon, cfg.SFT.Idle, &rep.NoiseSteps, &rep.IdleSteps)
	batch, _, err := coll.Demonstrate(teacher, rollout.Request{Tasks: envs.DemoTaskSeeds(rng, cfg.SFT.Demos), Group: 1}, rng)
	if err != nil {
		return nil, &config.Error{Msg: "sft: " + err.Error()}
	}
	var rows []trainRow
	ones := make([]float64, info.MaxTurns+1)
	for i := range ones {
		ones[i] = 1
	}
	for i := range batch.Trajs {
		tr := &batch.Trajs[i]
		rep.Demos++
		rep.DemoSteps += len(tr.Steps)
		if tr.Err != "" {
			rep.DemoErrors++
			continue
		}
		if tr.Success {
			rep.DemoSuccess++
		}
		for r := range tr.Rows {
			rows = append(rows, trainRow{row: &tr.Rows[r], adv: ones})
			for _, k := range tr.Rows[r].StepOf {
				if k >= 0 {
					rep.Tokens++
				}
			}
		}
	}
	rep.DemoSuccess /= float64(max(1, rep.Demos-rep.DemoErrors))
	rep.Rows = len(rows)
	if rep.DemoErrors*4 > rep.Demos {
		return nil, fmt.Errorf("sft: %d of %d demonstrations ended in env errors (first: %s)", rep.DemoErrors, rep.Demos, firstErr(batch))
	}
	if len(rows) == 0 {
		return nil, errors.New("sft: the demonstrations hold no action to learn")
	}
	return rows, nil
}

// expertHeldout is the expert's success, without noise, on the held-out panel: the ceiling the
// policy's held-out success is measured against (SFTReport.ExpertHeldout).
func expertHeldout(cfg config.Config, coll *rollout.Collector) (float64, error) {
	panel := envs.TaskSeeds(envs.Eval, cfg.Tasks.Eval, cfg.Tasks.PanelSeed)
	eb, _, err := coll.Demonstrate(noisyExpert(0, 0, new(int), new(int)), rollout.Request{Tasks: panel, Group: 1}, rngFor(cfg.Seed, streamEval))
	if err != nil {
		return 0, &config.Error{Msg: "sft: " + err.Error()}
	}
	success := 0.0
	for _, tr := range eb.Trajs {
		if tr.Success {
			success++
		}
	}
	return success / float64(len(eb.Trajs)), nil
}

// trainSFT runs the supervised steps of the warm start: shuffled passes over the rows, sft.batch
// rows per step, each a cross-entropy update of pol (loss and max_len of po). It returns the loss
// at every twentieth of the steps and at the last, and shows it on the progress bar or, unless
// quiet, as log lines.
func trainSFT(cfg config.Config, pol *policy.Policy, po policy.Options, maxTurns int, rows []trainRow, out io.Writer, opts Options) ([]SFTLossPoint, error) {
	var losses []SFTLossPoint
	bar := newProgressNamed(out, opts, cfg.SFT.Steps, "sft")
	shuffle := rngFor(cfg.Seed, streamSFTRows)
	var order []int
	every := max(1, cfg.SFT.Steps/20)
	for step := 1; step <= cfg.SFT.Steps; step++ {
		if len(order) < cfg.SFT.Batch {
			order = append(order, shuffle.Perm(len(rows))...)
		}
		sel := make([]trainRow, 0, cfg.SFT.Batch)
		for _, i := range order[:min(cfg.SFT.Batch, len(order))] {
			sel = append(sel, rows[i])
		}
		order = order[len(sel):]
		st, err := pol.Update(makeTrainBatch(sel, po.Loss, po.Model.MaxLen, maxTurns, po.Pretrained == nil), cfg.SFT.LR)
		if err != nil {
			return nil, fmt.Errorf("sft step %d: %w", step, err)
		}
		if step%every == 0 || step == cfg.SFT.Steps {
			losses = append(losses, SFTLossPoint{Step: step, Loss: st.Loss})
			if bar.active() {
				bar.bar.Describe(fmt.Sprintf("sft loss %.3f", st.Loss))
			} else if !opts.Quiet {
				fmt.Fprintf(out, "sft step %d/%d: cross-entropy %.4f\n", step, cfg.SFT.Steps, st.Loss)
			}
		}
		if bar.active() {
			_ = bar.bar.Set(step)
		}
	}
	bar.finish()
	return losses, nil
}

// oneIsZero maps 1 (one device, as 0 is) to 0.
func oneIsZero(n int) int {
	if n == 1 {
		return 0
	}
	return n
}

// WarmStartDir is where a training config's warm start is kept:
// <out_dir>/sft/<env>-seed<seed>-<key>, key a hash of everything the warm start depends on (the
// env and its options, the token layout, the architecture, the optimiser, the sft section, the
// backend and the seed) and of nothing else — not the estimator or the RL settings, so every
// estimator of a seed starts from the same weights.
func WarmStartDir(cfg config.Config) string {
	key := struct {
		Env     config.EnvConfig
		Rollout config.RolloutConfig
		Policy  policy.Config
		Optim   policy.OptimConfig
		SFT     config.SFTConfig
		Backend string
		Devices int `json:",omitempty"` // 0 for one device, so that one-device keys stay as they were
		Seed    uint64
		Faults  float64
	}{cfg.Env, cfg.Rollout, cfg.Policy.Config, cfg.Optim, cfg.SFT, spec.ResolveBackendName(cfg.Backend),
		oneIsZero(cfg.Policy.Devices), cfg.Seed, cfg.Faults.StepTimeout}
	data, _ := json.Marshal(key)
	sum := sha256.Sum256(data)
	name := fmt.Sprintf("%s-seed%d-%s", cfg.Env.Name, cfg.Seed, hex.EncodeToString(sum[:6]))
	return filepath.Join(cfg.OutDir, rundir.WarmStartsDir, name)
}

// EnsureWarmStart returns the warm start of cfg (WarmStartDir), computing it first (as RunSFT
// does) unless it exists. Concurrent runs that need the same warm start (the estimators of one
// seed in a sweep) wait for the one that computes it.
func EnsureWarmStart(cfg config.Config, opts Options) (string, error) {
	dir := WarmStartDir(cfg)
	done := func() bool {
		_, err := os.Stat(filepath.Join(dir, rundir.SFTReportFile))
		return err == nil
	}
	if done() {
		return dir, nil
	}
	info, err := ProbeEnv(&cfg, checkTeacher(cfg))
	if err != nil {
		return "", err
	}
	made, err := mkdirAllMade(filepath.Dir(dir))
	if err != nil {
		return "", fmt.Errorf("sft: %w", err)
	}
	unlock, err := rundir.Lock(dir + ".lock")
	if err != nil {
		removeMade(made)
		return "", fmt.Errorf("sft: %w", err)
	}
	defer unlock()
	if done() {
		return dir, nil
	}
	if _, err := runSFT(cfg, info, dir, opts); err != nil {
		dropWarmStartLock(dir, made)
		return "", err
	}
	return dir, nil
}

// checkTeacher is ProbeEnv's check of a warm start's env: it refuses, as a *config.Error, an env
// the warm start cannot demonstrate with: no expert, or noise without a list of valid actions.
func checkTeacher(cfg config.Config) func(envs.Env) error {
	return func(e envs.Env) error {
		if _, ok := envs.ExpertOf(e); !ok {
			return &config.Error{Msg: fmt.Sprintf("sft: env %s has no expert to demonstrate with (envs with one: %s); remove the sft section",
				cfg.Env.Name, strings.Join(expertEnvs(), ", "))}
		}
		if idler, ok := e.(envs.Idler); cfg.SFT.Idle > 0 && (!ok || len(idler.IdleActions()) == 0) {
			return &config.Error{Msg: fmt.Sprintf("sft.idle: env %s has no idle actions to demonstrate (maze has look with env.idle_actions: true); allowed: 0", cfg.Env.Name)}
		}
		if _, ok := e.(envs.ValidActioner); !ok && cfg.SFT.Epsilon > 0 {
			return &config.Error{Msg: fmt.Sprintf("sft.epsilon: env %s cannot list its valid actions, so demonstrations cannot be noisy (allowed: 0)", cfg.Env.Name)}
		}
		return nil
	}
}

// expertEnvs lists the registered environments whose default instance has an expert.
func expertEnvs() []string {
	var out []string
	for _, name := range envs.Names() {
		e, err := envs.New(name, envs.Options{})
		if err != nil {
			continue
		}
		if _, ok := envs.ExpertOf(e); ok {
			out = append(out, name)
		}
		envs.Close(e)
	}
	return out
}

// noisyExpert is the demonstration teacher: with probability idle one of the env's idle actions
// drawn uniformly (a target: the warm start learns to waste steps), else with probability ε a
// uniformly random valid action (context only), else the expert's action (a target). noise and
// idleSteps count the random and the idle steps. With idle 0 it draws exactly what it drew
// before idle existed.
func noisyExpert(epsilon, idle float64, noise, idleSteps *int) rollout.Teacher {
	return func(e envs.Env, rng *rand.Rand) (string, bool, error) {
		if idle > 0 && rng.Float64() < idle {
			var acts []string
			if idler, ok := e.(envs.Idler); ok {
				acts = idler.IdleActions()
			}
			if len(acts) == 0 {
				return "", false, fmt.Errorf("sft.idle: env %T has no idle actions", e)
			}
			*idleSteps++
			return acts[rng.IntN(len(acts))], true, nil
		}
		if epsilon > 0 && rng.Float64() < epsilon {
			valid := e.(envs.ValidActioner).ValidActions()
			if len(valid) > 0 {
				*noise++
				return valid[rng.IntN(len(valid))], false, nil
			}
		}
		expert, ok := envs.ExpertOf(e)
		if !ok {
			return "", false, fmt.Errorf("env %T has no expert", e)
		}
		a, err := expert()
		return a, true, err
	}
}

func firstErr(b *rollout.Batch) string {
	for _, t := range b.Trajs {
		if t.Err != "" {
			return t.Err
		}
	}
	return ""
}

// writeInit writes an init directory (weights, vocabulary, report) under a temporary name and
// renames it into place.
func writeInit(dir string, pol *policy.Policy, vocab []string, rep *SFTReport) error {
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("sft: %s exists already", dir)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("sft: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return fmt.Errorf("sft: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := pol.Save(filepath.Join(tmp, rundir.PolicyDir)); err != nil {
		return err
	}
	if err := writeVocab(tmp, vocab); err != nil {
		return fmt.Errorf("sft: %w", err)
	}
	sum, err := hashDir(filepath.Join(tmp, rundir.PolicyDir))
	if err != nil {
		return err
	}
	rep.SHA256 = sum
	data, _ := json.MarshalIndent(rep, "", "  ")
	if err := os.WriteFile(filepath.Join(tmp, rundir.SFTReportFile), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("sft: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("sft: %w", err)
	}
	return nil
}

// hashDir is the SHA-256 of a directory's regular files: each file's name, length and bytes, in
// name order. GoMLX names checkpoint files after the time they were written, so the hash covers
// their content and the name's step, not its clock.
func hashDir(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("hash %s: %w", dir, err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return "", fmt.Errorf("hash %s: %w", dir, err)
		}
		fmt.Fprintf(h, "%s %d\n", stableName(n), len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// stableName drops the timestamp GoMLX writes into checkpoint file names
// (checkpoint-n0000000-20261203-163717-step-00000280.bin → checkpoint-step-00000280.bin).
func stableName(n string) string {
	if i, j := strings.Index(n, "checkpoint-"), strings.Index(n, "-step-"); i == 0 && j > 0 {
		return "checkpoint" + n[j:]
	}
	return n
}

// writeVocab writes the vocabulary into dir (rundir.VocabFile), one word per line in id order
// (EnvInfo.identity: for a pretrained policy, its model's checksum).
func writeVocab(dir string, vocab []string) error {
	return os.WriteFile(filepath.Join(dir, rundir.VocabFile), []byte(strings.Join(vocab, "\n")+"\n"), 0o644)
}

// readInitVocab reads the vocabulary of an init directory.
func readInitVocab(dir string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(dir, rundir.VocabFile))
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(data)), nil
}

// loadInit reads the weights of policy.init for a policy of options po on the env info
// describes, and the SHA-256 of its checkpoint. A missing or damaged directory, another
// architecture or another vocabulary (another pretrained model) is a config.Error naming
// policy.init.
func loadInit(path string, po policy.Options, info EnvInfo) ([][]float32, string, error) {
	fail := func(format string, args ...any) ([][]float32, string, error) {
		return nil, "", &config.Error{Msg: "policy.init: " + fmt.Sprintf(format, args...)}
	}
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		return fail("%s is not a directory (allowed: a warm start written by graftrl sft, or a checkpoint directory iter-NNNNNN of a run)", path)
	}
	if err := checkDirSize(path); err != nil {
		return fail("%v", err)
	}
	words, err := readInitVocab(path)
	if err != nil {
		return fail("%s has no readable %s (%v): it was not written by graftrl sft or a graftrl checkpoint", path, rundir.VocabFile, err)
	}
	if want := info.identity(); !slices.Equal(words, want) {
		if info.Model != nil {
			return fail("%s was not trained from policy.pretrained %s (its %s does not name that model's checksum %s)", path, info.Model.Path, rundir.VocabFile, info.Model.SHA256)
		}
		return fail("%s was trained with another vocabulary (%d words; this env has %d): a policy of another env or env options", path, len(words), len(want))
	}
	specs := spec.Params(po.Model)
	if po.Pretrained != nil {
		specs = spec.LlamaParams(po.Pretrained.Config)
	}
	w, err := policy.ReadCheckpointParams(filepath.Join(path, rundir.PolicyDir), specs)
	if err != nil {
		return fail("%v", err)
	}
	sum, err := hashDir(filepath.Join(path, rundir.PolicyDir))
	if err != nil {
		return fail("%v", err)
	}
	return w, sum, nil
}
