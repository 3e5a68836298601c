// Command sidebyside trains GRPO and GRAFT side by side through graftrl's public API, with the
// loop written out: collect → estimate → update → evaluate. Start here to use graftrl as a
// library, with your own environment (cliff.go) and your own loop; `graftrl train` runs the same
// loop with minibatches, checkpoints, metrics.jsonl and resume (package trainer).
//
//	go run ./examples/sidebyside [-env cliff|maze] [-iters 40] [-seed 1]
//
// Both learners start from the same weights and draw from the same sampling seed, so their
// first batch is the same: its advantages differ only by the estimator.
package main

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/graftrl/graftrl/advantage"
	_ "github.com/graftrl/graftrl/advantage/all" // registers grpo, graft and the other estimators
	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/envs"
	_ "github.com/graftrl/graftrl/envs/all" // registers maze and the other shipped envs
	"github.com/graftrl/graftrl/policy"
	"github.com/graftrl/graftrl/policy/host"
	"github.com/graftrl/graftrl/policy/spec"
	"github.com/graftrl/graftrl/rollout"
	"github.com/graftrl/graftrl/tokens"
)

// options size a run: main reads them from flags, the test sets them small.
type options struct {
	env         string // "cliff" (cliff.go) or a registered env such as "maze"
	iters, eval int    // training iterations; held-out tasks evaluated at the end
	tasks       int    // tasks per iteration
	group       int    // rollouts per task (N)
	seed        uint64
	model       spec.Config
	out         io.Writer
}

// learner is one estimator's side of the run: its own policy, CPU sampler and collector.
type learner struct {
	name string
	est  advantage.Estimator
	pol  *policy.Policy
	host *host.Model
	dec  rollout.Decoder
	coll *rollout.Collector
	rng  *rand.Rand
}

// record is one learner's iteration: the batch it collected, its advantages and the statistics
// of its last update step.
type record struct {
	batch *rollout.Batch
	adv   rollout.Advantages
	stats policy.TrainStats
}

func main() {
	o := options{model: spec.DefaultConfig(), out: os.Stdout}
	flag.StringVar(&o.env, "env", "cliff", `environment: "cliff" (cliff.go) or a registered one (maze, …)`)
	flag.IntVar(&o.iters, "iters", 40, "training iterations")
	flag.IntVar(&o.tasks, "tasks", 8, "tasks per iteration")
	flag.IntVar(&o.group, "group", 8, "rollouts per task")
	flag.IntVar(&o.eval, "eval", 32, "held-out tasks evaluated greedily at the end")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the initial weights and of sampling")
	flag.Parse()
	if _, _, err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "sidebyside:", err)
		os.Exit(1)
	}
}

// run trains one learner per estimator and returns their records and held-out greedy success,
// by estimator name.
func run(o options) (map[string][]record, map[string]float64, error) {
	if o.tasks < 1 || o.group < 1 || o.iters < 0 || o.eval < 0 {
		return nil, nil, fmt.Errorf("-tasks %d -group %d -iters %d -eval %d: tasks and group must be at least 1, iters and eval at least 0",
			o.tasks, o.group, o.iters, o.eval)
	}
	newEnv := func() (envs.Env, error) { return envs.New(o.env, nil) } // nil: the env's defaults
	if o.env == "cliff" {
		newEnv = func() (envs.Env, error) { return &cliff{}, nil }
	}
	probe, err := newEnv()
	if err != nil {
		return nil, nil, err
	}
	defer envs.Close(probe)
	vocab, err := tokens.NewVocab(probe.Vocabulary())
	if err != nil {
		return nil, nil, err
	}
	var actionTokens []int32 // the only tokens an action may use: the env's action words
	if aw, ok := probe.(envs.ActionWorder); ok {
		actionTokens = vocab.Encode(nil, strings.Join(aw.ActionWords(), " "))
	}
	// The loss, optimiser and token layout a config file starts from, with one-word actions (no
	// end-of-action token), four epochs per batch and the quickstart's entropy bonus.
	cfg := config.Defaults()
	cfg.Rollout.ActionMaxTokens, cfg.Update.Epochs, cfg.Update.Loss.EntropyCoef = 1, 4, 0.05
	cfg.Policy.Config, cfg.Policy.Config.Vocab = o.model, vocab.Size()

	backend, err := policy.NewBackend(policy.BackendOptions{Name: "go"}) // pure Go: nothing to install
	if err != nil {
		return nil, nil, err
	}
	slots := o.tasks * o.group
	var learners []*learner
	for _, name := range []string{"grpo", "graft"} {
		l := &learner{name: name, rng: rand.New(rand.NewPCG(o.seed, 1))}
		if l.est, err = advantage.New(name, nil); err != nil { // nil: the estimator's defaults
			return nil, nil, err
		}
		if l.pol, err = policy.New(backend, policy.Options{Model: cfg.Policy.Config, Loss: cfg.Update.Loss,
			Optim: cfg.Optim, Seed: o.seed, ActionTokens: actionTokens}); err != nil {
			return nil, nil, err
		}
		w, err := l.pol.Weights()
		if err != nil {
			return nil, nil, err
		}
		if l.host, err = host.New(cfg.Policy.Config, w); err != nil {
			return nil, nil, err
		}
		l.dec = l.host.NewDecoder(slots)
		rc := cfg.RolloutConfig()
		rc.ActionBias = l.pol.ActionBias()
		if l.coll, err = rollout.NewCollector(rc, rollout.Words{V: vocab}, newEnv, slots); err != nil {
			return nil, nil, err
		}
		defer l.coll.Close()
		learners = append(learners, l)
	}

	records := map[string][]record{}
	train := envs.TaskSeeds(envs.Train, 4*o.tasks, cfg.Tasks.PanelSeed)
	for it := range o.iters {
		tasks := train[it*o.tasks%len(train):][:o.tasks]
		fmt.Fprintf(o.out, "iter %3d", it+1)
		for _, l := range learners {
			r, diag, err := l.iterate(rollout.Request{Tasks: tasks, Group: o.group}, cfg, slots)
			if err != nil {
				return nil, nil, err
			}
			records[l.name] = append(records[l.name], r)
			fmt.Fprintf(o.out, "  │ %-5s success %.2f loss %+.4f adv_std %.3f", l.name, success(r.batch), r.stats.Loss, diag["adv_std"])
		}
		fmt.Fprintln(o.out)
	}
	// Evaluate: greedy decoding on held-out tasks, never trained on.
	heldOut := map[string]float64{}
	for _, l := range learners {
		req := rollout.Request{Tasks: envs.TaskSeeds(envs.Eval, o.eval, cfg.Tasks.PanelSeed), Group: 1, Greedy: true}
		b, _, err := l.coll.Collect(l.dec, req, l.rng)
		if err != nil {
			return nil, nil, err
		}
		heldOut[l.name] = success(b)
		fmt.Fprintf(o.out, "%s: held-out greedy success %.2f\n", l.name, heldOut[l.name])
	}
	return records, heldOut, nil
}

// iterate is one iteration of a learner: collect, estimate, update.
func (l *learner) iterate(req rollout.Request, cfg config.Config, slots int) (record, rollout.Diagnostics, error) {
	// Collect: req.Group episodes of each task, all stepped together.
	batch, _, err := l.coll.Collect(l.dec, req, l.rng)
	if err != nil {
		return record{}, nil, err
	}
	batch = batch.WithoutErrors() // episodes an env fault ended are neither estimated nor trained on
	// Estimate: one advantage per step.
	adv, diag := l.est.Estimate(batch)
	// Update: PPO epochs of the clipped loss on the whole batch; then the sampler reads the new
	// weights.
	tb := trainBatch(batch, adv, cfg.Update.Loss, slots, cfg.Policy.MaxLen)
	r := record{batch: batch, adv: adv}
	for range cfg.Update.Epochs {
		if r.stats, err = l.pol.Update(tb, cfg.Optim.LR); err != nil {
			return record{}, nil, err
		}
	}
	w, err := l.pol.Weights()
	if err == nil {
		err = l.host.SetWeights(w)
	}
	return r, diag, err
}

// trainBatch lays the batch out as rows × maxLen token positions, one row per episode (the
// episode layout): position t holds token t and predicts token t+1, which is trained on, with
// its step's advantage, when it is an action token (StepOf ≥ 0). One fixed shape: one compiled
// update graph.
func trainBatch(b *rollout.Batch, adv rollout.Advantages, loss spec.LossConfig, rows, maxLen int) *policy.TrainBatch {
	n := rows * maxLen
	tb := &policy.TrainBatch{Rows: rows, Len: maxLen, Tokens: make([]int32, n), Targets: make([]int32, n),
		OldLogp: make([]float32, n), Adv: make([]float32, n)}
	action := make([]bool, n)
	for i, tr := range b.Trajs {
		row := tr.Rows[0]
		for t := 0; t+1 < len(row.Tokens); t++ {
			p := i*maxLen + t
			tb.Tokens[p], tb.Targets[p] = row.Tokens[t], row.Tokens[t+1]
			if k := row.StepOf[t+1]; k >= 0 {
				action[p], tb.OldLogp[p], tb.Adv[p] = true, row.LogProb[t+1], float32(adv[i][k])
			}
		}
	}
	tb.Weight = spec.AggregationWeights(loss.Aggregation, action, rows, maxLen, float64(maxLen))
	return tb
}

// success is the share of the batch's episodes that ended in success.
func success(b *rollout.Batch) float64 {
	n := 0
	for _, tr := range b.Trajs {
		if tr.Success {
			n++
		}
	}
	return rollout.Ratio(n, len(b.Trajs))
}
