package trainer

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/policy"
	"github.com/graftrl/graftrl/rollout"
	"github.com/graftrl/graftrl/tokens"
)

// The set-up a training run (New) and a warm start (RunSFT) share: one probe of the env, the
// policy on the config's backend, and the collector that steps the env's instances for it.

// EnvInfo is what a run learns from its environment before anything is built on it.
type EnvInfo struct {
	// Vocab is the token vocabulary of the env's words; nil for a pretrained policy, whose
	// tokens are its model's.
	Vocab *tokens.Vocab
	// Model is the pretrained model (policy.pretrained); nil for graftrl's transformer.
	Model *Model
	// Format lays the env's episodes out as tokens: the word vocabulary's layout, or the
	// pretrained model's chat.
	Format rollout.Format
	// MaxTurns is the env's step cap.
	MaxTurns int
	// ActionTokens are the token ids actions are restricted to (rollout.constrain_actions with
	// an envs.ActionWorder env); nil leaves actions unconstrained.
	ActionTokens []int32
}

// ProbeEnv builds one instance of the configured environment, reads its vocabulary, step cap and
// action words, and closes it again. For a remote env this is where its server is contacted; an
// env that cannot be built is a *config.Error. So is a policy.max_len too short for the env's
// first turn (its prompt plus one action) on the first tasks of the panels, which would leave
// every such episode truncated before it acts; a remote env's prompts are not probed (each
// reset would hold a session of its server). The checks run on the instance first, in order,
// before anything is read from it (a warm start checks its teacher there: one instance serves
// both); the first error of one is returned as it is.
func ProbeEnv(c *config.Config, checks ...func(envs.Env) error) (EnvInfo, error) {
	probe, err := envs.New(c.Env.Name, c.Env.Options)
	if err != nil {
		return EnvInfo{}, &config.Error{Msg: err.Error()}
	}
	defer envs.Close(probe)
	for _, check := range checks {
		if err := check(probe); err != nil {
			return EnvInfo{}, err
		}
	}
	info := EnvInfo{MaxTurns: probe.MaxTurns()}
	if c.Policy.Pretrained != "" {
		if info.Model, err = loadModel(c); err != nil {
			return EnvInfo{}, err
		}
		if info.Format, err = chatFormat(c, info.Model, probe); err != nil {
			return EnvInfo{}, err
		}
	} else {
		if info.Vocab, err = tokens.NewVocab(probe.Vocabulary()); err != nil {
			return EnvInfo{}, fmt.Errorf("env %s: %w", c.Env.Name, err)
		}
		info.Format = rollout.Words{V: info.Vocab}
	}
	if _, remote := probe.(envs.Parallel); !remote {
		room := c.RolloutConfig().ActionRoom(info.Format)
		if prompt := longestPrompt(c, probe, info.Format); prompt+room > c.Policy.MaxLen {
			return EnvInfo{}, &config.Error{Msg: fmt.Sprintf("policy.max_len: %d is too short for env %s: its instruction and first observation take up to %d tokens and one action %d more (allowed %d..8192)",
				c.Policy.MaxLen, c.Env.Name, prompt, room, prompt+room)}
		}
	}
	if aw, ok := probe.(envs.ActionWorder); ok && c.Rollout.ConstrainActions && info.Vocab != nil {
		// With one-token actions the end-of-action token is always implied, never sampled.
		if c.Rollout.ActionMaxTokens > 1 {
			info.ActionTokens = []int32{tokens.EOAID}
		}
		info.ActionTokens = info.Vocab.Encode(info.ActionTokens, strings.Join(aw.ActionWords(), " "))
		if slices.Contains(info.ActionTokens, tokens.UnkID) {
			return EnvInfo{}, fmt.Errorf("env %s: an action word is not in its vocabulary", c.Env.Name)
		}
	}
	return info, nil
}

// promptProbes is how many tasks of each panel longestPrompt resets.
const promptProbes = 8

// longestPrompt is the longest first row (rollout.LongestPrompt) of the first tasks of the
// training and held-out panels, reset on env e within faults.step_timeout each.
func longestPrompt(c *config.Config, e envs.Env, f rollout.Format) int {
	seeds := envs.TaskSeeds(envs.Train, min(c.Tasks.Train.Size, promptProbes), c.Tasks.PanelSeed)
	seeds = append(seeds, envs.TaskSeeds(envs.Eval, min(c.Tasks.Eval, promptProbes), c.Tasks.PanelSeed)...)
	return rollout.LongestPrompt(e, f, seeds, time.Duration(c.Faults.StepTimeout*float64(time.Second)))
}

// PolicyOptions are the options of the run's policy on an env: the model sized to the env's
// vocabulary, the loss, the optimizer, the seed of the initial weights and the action tokens.
// A policy built from them loads the run's checkpoints (policy.Policy.Load).
func PolicyOptions(c *config.Config, info EnvInfo) policy.Options {
	pc := c.Policy.Config
	o := policy.Options{Loss: c.Update.Loss, Optim: c.Optim, Seed: rngFor(c.Seed, streamInit).Uint64(),
		ActionTokens: info.ActionTokens, Devices: c.Policy.Devices}
	if m := info.Model; m != nil {
		// The architecture is the model's: of the policy section only max_len applies.
		o.Model = policy.Config{Vocab: m.Config.Vocab, MaxLen: pc.MaxLen}
		o.Pretrained = &policy.Pretrained{Config: m.Config, Weights: m.Weights}
		if c.Policy.LoRA.On {
			l := c.Policy.LoRA.LoRA
			o.LoRA = &l
		}
		return o
	}
	pc.Vocab = info.Vocab.Size()
	o.Model = pc
	return o
}

// identity is what a checkpoint's vocabulary file records of the policy's tokens: the env's
// words, or for a pretrained policy the model's checksum (the adapters and weights of its
// checkpoints fit that model only).
func (info EnvInfo) identity() []string {
	if info.Model != nil {
		return []string{"pretrained:" + info.Model.SHA256}
	}
	return info.Vocab.Words()
}

// newPolicy builds the backend of c (its name, the devices the updates are split over, and
// whether a missing plugin may be downloaded) and a policy of options po on it; options the
// policy refuses are a *config.Error.
func newPolicy(c *config.Config, po policy.Options, installPlugin bool) (*policy.Policy, error) {
	backend, err := policy.NewBackend(policy.BackendOptions{Name: c.Backend, InstallPlugin: installPlugin, Devices: c.Policy.Devices})
	if err != nil {
		return nil, err
	}
	pol, err := policy.New(backend, po)
	if err != nil {
		return nil, &config.Error{Msg: err.Error()}
	}
	return pol, nil
}

// newCollector builds the collector of c's rollouts for pol (its action bias): slots instances of
// the configured environment, their text laid out in format f.
func newCollector(c *config.Config, pol *policy.Policy, f rollout.Format, slots int) (*rollout.Collector, error) {
	rc := c.RolloutConfig()
	rc.ActionBias = pol.ActionBias()
	return rollout.NewCollector(rc, f, func() (envs.Env, error) {
		return envs.New(c.Env.Name, c.Env.Options)
	}, slots)
}
