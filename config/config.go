// Package config is the run configuration: its schema (Config and its sections, as written in
// configs/*.yaml and documented in configs/README.md), the defaults, --set overrides, the
// strict decoding of a file (package internal/strict: unknown keys, types, fractions for
// integers) and the validation of every value's range. Problems are *Errors naming the file
// or flag, the key, the value and what is allowed; commands exit with status 2 on them.
// It does not depend on GoMLX.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/graftrl/graftrl/advantage"
	_ "github.com/graftrl/graftrl/advantage/all"
	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/internal/limits"
	"github.com/graftrl/graftrl/internal/strict"
	"github.com/graftrl/graftrl/policy/spec"
	"github.com/graftrl/graftrl/rollout"
)

// Config is a training run, as written in YAML (configs/*.yaml). Every field is documented in
// configs/README.md; Defaults gives the values of keys a file leaves out.
type Config struct {
	// Name names the run directory <out_dir>/<name>.
	Name string `yaml:"name"`
	// OutDir holds run directories (default "runs").
	OutDir string `yaml:"out_dir"`
	// Seed makes the run reproducible: weights, sampling, task order and minibatches derive from it.
	Seed uint64 `yaml:"seed"`
	// Label names a variant in comparisons (default: the estimator name).
	Label string `yaml:"label"`
	// Iterations is the number of collect → estimate → update iterations (the cap when a budget is set).
	Iterations int `yaml:"iterations"`
	// EnvSteps is the run's budget in environment steps: training stops after the iteration that
	// reaches it (0: no budget, run all iterations). Comparisons fix it so methods get equal budgets.
	EnvSteps int64 `yaml:"env_steps"`
	// Backend is the GoMLX backend: go (default), xla:cpu, xla:cuda; empty means $GOMLX_BACKEND or go.
	Backend string `yaml:"backend"`
	// Env selects the environment and its options.
	Env EnvConfig `yaml:"env"`
	// Tasks fixes the task panels and how many tasks and rollouts an iteration uses.
	Tasks TaskConfig `yaml:"tasks"`
	// Rollout configures the token layout of episodes and the sampler.
	Rollout RolloutConfig `yaml:"rollout"`
	// Policy is the transformer architecture and, optionally, the weights it starts from.
	Policy PolicyConfig `yaml:"policy"`
	// SFT is the supervised warm start on expert demonstrations that runs before RL (demos > 0).
	SFT SFTConfig `yaml:"sft"`
	// Optim is Adam with gradient clipping.
	Optim spec.OptimConfig `yaml:"optim"`
	// Update is the clipped policy-gradient update.
	Update UpdateConfig `yaml:"update"`
	// Estimator selects the advantage estimator and its options.
	Estimator EstimatorConfig `yaml:"estimator"`
	// Eval configures periodic evaluation on the fixed panels.
	Eval EvalConfig `yaml:"eval"`
	// Checkpoint configures checkpoints.
	Checkpoint CheckpointConfig `yaml:"checkpoint"`
	// SaveBatches writes every k-th iteration's rollout batch to the run directory (0: never).
	SaveBatches int `yaml:"save_batches"`
	// CreditDiagnostics adds to every train line of metrics.jsonl how much step-level credit
	// assignment the iteration's batch asks for: est/decision_share and est/decision_steps
	// (graft.DecisionShare under graft.DefaultOptions, whatever the run's estimator, so that
	// methods compare), and est/wasted_success, est/wasted_fail with est/success_steps,
	// est/fail_steps (rollout.CountDetours, written only when the env reports distances). Off by
	// default: runs without it write the metrics.jsonl they always did.
	CreditDiagnostics bool `yaml:"credit_diagnostics"`
	// Resume is "" (default: refuse to reuse a run directory) or "auto" (continue the run in the
	// directory from its newest valid checkpoint, or start it when there is none).
	Resume string `yaml:"resume"`
	// Faults configures fault containment.
	Faults FaultConfig `yaml:"faults"`
}

// FaultConfig bounds what a run tolerates before it stops.
type FaultConfig struct {
	// StepTimeout is the seconds an env Reset or Step may take before its episode is ended as an
	// error (0: no limit).
	StepTimeout float64 `yaml:"step_timeout"`
	// MaxErrorShare aborts the run when a larger share of an iteration's episodes errored.
	MaxErrorShare float64 `yaml:"max_error_share"`
	// MaxSkippedUpdates aborts the run after this many consecutive updates skipped for a
	// non-finite loss or gradient (the last good checkpoint stays intact).
	MaxSkippedUpdates int `yaml:"max_skipped_updates"`
	// Retries is how many times an episode whose remote env lost its session is replayed on a
	// new session before it counts as an error (0: never).
	Retries int `yaml:"retries"`
}

// EnvConfig is the env section: its name plus the env's own options.
type EnvConfig struct {
	// Name is the registered env (envs.Lookup).
	Name string
	// Options are the env's own options, checked by the env (envs.CheckOptions).
	Options envs.Options
}

// EstimatorConfig is the estimator section: its name plus the estimator's own options.
type EstimatorConfig struct {
	// Name is the registered estimator (advantage.Names).
	Name string
	// Options are the estimator's own options (advantage.Check checks them, advantage.New builds the estimator).
	Options map[string]any
}

// PolicyConfig is the policy section: the architecture and the weights training starts from.
type PolicyConfig struct {
	spec.Config `yaml:",inline"`
	// Init is a directory whose weights start the run, weights only with a fresh optimiser: a
	// warm start written by graftrl sft, or a checkpoint iter-NNNNNN of a run. Empty: random
	// weights drawn from the seed, or the sft section's warm start when it is on.
	Init string `yaml:"init" json:"init,omitempty"`
	// Devices splits every update's minibatch over this many devices (data parallel; xla
	// backends only: xla:cpu makes that many host devices, xla:cuda uses that many GPUs).
	// 0 or 1: one device.
	Devices int `yaml:"devices" json:"devices,omitempty"`
	// Pretrained makes the policy a pretrained language model instead of graftrl's transformer:
	// a GGUF file, a Hugging Face directory, or smollm2 (SmolLM2-135M-Instruct as
	// scripts/install-smollm2.sh installs it). Its episodes are chats (rollout.chat); of the
	// architecture keys only max_len applies. Empty: graftrl's own transformer.
	Pretrained string `yaml:"pretrained,omitempty" json:"pretrained,omitempty"`
	// LoRA, with pretrained, trains low-rank adapters on the model's projections with the
	// model frozen; absent: every weight is trained.
	LoRA LoRAConfig `yaml:"lora,omitempty" json:"lora,omitempty"`
}

// SmolLM2 is the policy.pretrained value that names SmolLM2-135M-Instruct as
// scripts/install-smollm2.sh installs it.
const SmolLM2 = "smollm2"

// LoRAConfig is policy.lora: spec.LoRA's keys, each defaulting to spec.DefaultLoRA's, and
// whether the section was given at all (On).
type LoRAConfig struct {
	spec.LoRA
	// On says the section is present: adapters instead of full fine-tuning.
	On bool
}

// UnmarshalYAML reads the section over spec.DefaultLoRA, strictly (unknown keys refused).
func (l *LoRAConfig) UnmarshalYAML(n *yaml.Node) error {
	l.LoRA = spec.DefaultLoRA()
	if n.ShortTag() != "!!null" {
		if err := strict.DecodeAt(n, "policy.lora", &l.LoRA); err != nil {
			return err
		}
	}
	l.On = true
	return nil
}

// MarshalYAML writes the adapters' keys.
func (l LoRAConfig) MarshalYAML() (any, error) { return l.LoRA, nil }

// IsZero is true when the section is absent (it is then left out of config.yaml).
func (l LoRAConfig) IsZero() bool { return !l.On }

// ChatConfig is rollout.chat: the turns of a pretrained model's chat episodes
// (rollout.ChatOptions; empty keys take rollout.DefaultChatSystem and DefaultChatUser).
type ChatConfig struct {
	// System is the system turn: {task} is the episode's instruction, {actions} the env's action
	// words, {description} its one-line description.
	System string `yaml:"system,omitempty"`
	// User is each observation's user turn: {observation} is the observation.
	User string `yaml:"user,omitempty"`
	// Examples are worked turns (user, assistant) shown after the system turn of every
	// episode, each user text put into User as an observation would be.
	Examples []rollout.ChatExample `yaml:"examples,omitempty"`
}

// TrainTasks is tasks.train: the size of the fixed training panel, or open — fresh tasks every
// iteration, drawn from a seed space no eval panel meets (envs.OpenTaskSeeds).
type TrainTasks struct {
	// Size is the number of tasks of the training panel (0 when Open).
	Size int
	// Open draws PerIter fresh tasks every iteration instead.
	Open bool
}

// UnmarshalYAML reads a panel size or the word open.
func (tt *TrainTasks) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.Value == "open" {
		*tt = TrainTasks{Open: true}
		return nil
	}
	var size int
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!float" || n.Decode(&size) != nil {
		return fmt.Errorf("%q is neither a panel size nor open (allowed: 1..100000, or open)", n.Value)
	}
	*tt = TrainTasks{Size: size}
	return nil
}

// MarshalYAML writes the panel size, or open.
func (tt TrainTasks) MarshalYAML() (any, error) {
	if tt.Open {
		return "open", nil
	}
	return tt.Size, nil
}

// String is the YAML form: the size or "open".
func (tt TrainTasks) String() string {
	if tt.Open {
		return "open"
	}
	return strconv.Itoa(tt.Size)
}

// TaskConfig fixes the task panels.
type TaskConfig struct {
	// Train is the size of the training panel (the tasks iterations draw from), or open.
	Train TrainTasks `yaml:"train"`
	// Eval is the size of the held-out panel (never trained on).
	Eval int `yaml:"eval"`
	// PanelSeed fixes which tasks form the panels, independently of the run seed, so every method
	// and seed of a comparison sees the same tasks.
	PanelSeed int64 `yaml:"panel_seed"`
	// PerIter is the number of tasks in an iteration's batch (drawn from the training panel
	// without replacement, cycling through it in a seeded order).
	PerIter int `yaml:"per_iter"`
	// GroupSize is N, the rollouts per task.
	GroupSize int `yaml:"group_size"`
}

// RolloutConfig configures token layouts and the sampler.
type RolloutConfig struct {
	// Layout is episode (default) or window.
	Layout string `yaml:"layout"`
	// WindowTurns is K, the past turns a window-layout row keeps.
	WindowTurns int `yaml:"window_turns"`
	// ActionMaxTokens caps an action's tokens (before the end-of-action token).
	ActionMaxTokens int `yaml:"action_max_tokens"`
	// Sampler is host (the dedicated CPU inference path, default) or graph (KV decode on the GoMLX backend).
	Sampler string `yaml:"sampler"`
	// ConstrainActions restricts action tokens to the env's action words (and the end-of-action
	// token) when the env declares them (envs.ActionWorder); default true.
	ConstrainActions bool `yaml:"constrain_actions"`
	// Chat are the turns of a pretrained policy's episodes (policy.pretrained only).
	Chat ChatConfig `yaml:"chat,omitempty"`
}

// UpdateConfig is the PPO-style update over one batch.
type UpdateConfig struct {
	// Epochs is the number of passes over the batch.
	Epochs int `yaml:"epochs"`
	// Minibatches splits each pass.
	Minibatches int `yaml:"minibatches"`
	// DropZeroAdvantage drops rows whose steps all have zero advantage before the update
	// (dynamic sampling); the number dropped is logged.
	DropZeroAdvantage bool `yaml:"drop_zero_advantage"`
	// Loss holds the loss options (clip_low, clip_high, aggregation, entropy_coef, kl …).
	Loss spec.LossConfig `yaml:",inline"`
}

// EvalConfig configures evaluation.
type EvalConfig struct {
	// Every evaluates after every k-th iteration and after the last (0: only after the last).
	Every int `yaml:"every"`
	// Sampled adds sampled-decoding success (one sampled episode per task) beside greedy.
	Sampled bool `yaml:"sampled"`
	// AtStart evaluates the untrained policy before the first iteration (iteration 0).
	AtStart bool `yaml:"at_start"`
}

// CheckpointConfig configures checkpoints.
type CheckpointConfig struct {
	// Every writes a checkpoint after every k-th iteration and after the last (0: only the last).
	Every int `yaml:"every"`
	// KeepLast keeps the newest k checkpoints.
	KeepLast int `yaml:"keep_last"`
}

// SFTConfig is the sft section: a supervised warm start on expert demonstrations, run before RL
// (configs/README.md, sft). demos > 0 turns it on.
type SFTConfig struct {
	// Demos is the number of demonstration episodes rolled out by the env's expert (0: no warm start).
	Demos int `yaml:"demos"`
	// Epsilon is the per-step probability that a demonstration takes a random valid action
	// instead of the expert's, so that demonstrations visit off-expert states and show the
	// recovery from them; the random actions are context, never targets.
	Epsilon float64 `yaml:"epsilon"`
	// Idle is the per-step probability that a demonstration takes one of the env's idle actions
	// (envs.Idler: maze's look with env.idle_actions), as a target, before the ε draw: the warm
	// start learns to waste about that share of its steps, so that its successes hold a set
	// share of steps that change nothing (docs/credit2). 0: never.
	Idle float64 `yaml:"idle" json:",omitempty"`
	// Steps is the number of Adam steps on the demonstrations.
	Steps int `yaml:"steps"`
	// Batch is the number of demonstration rows per step.
	Batch int `yaml:"batch"`
	// LR is the learning rate of the supervised phase.
	LR float64 `yaml:"lr"`
}

// DefaultSFTConfig is the sft section a config starts from (off until demos is set).
func DefaultSFTConfig() SFTConfig {
	return SFTConfig{Demos: 0, Epsilon: 0.1, Steps: 200, Batch: 16, LR: 1e-3}
}

// Enabled reports whether the warm start runs.
func (s SFTConfig) Enabled() bool { return s.Demos > 0 }

// Validate checks the section; errors name the key under sft.
func (s SFTConfig) Validate() error {
	switch {
	case s.Demos < 0 || s.Demos > 1_000_000:
		return fmt.Errorf("sft.demos: %d is out of range (allowed 0 = no warm start, or 1..1000000)", s.Demos)
	case !(s.Epsilon >= 0 && s.Epsilon < 1):
		return fmt.Errorf("sft.epsilon: %g is out of range (allowed [0, 1))", s.Epsilon)
	case !(s.Idle >= 0 && s.Idle < 1):
		return fmt.Errorf("sft.idle: %g is out of range (allowed [0, 1))", s.Idle)
	case s.Steps < 1 || s.Steps > 10_000_000:
		return fmt.Errorf("sft.steps: %d is out of range (allowed 1..10000000)", s.Steps)
	case s.Batch < 1 || s.Batch > 4096:
		return fmt.Errorf("sft.batch: %d is out of range (allowed 1..4096)", s.Batch)
	case !(s.LR > 0 && s.LR <= 1):
		return fmt.Errorf("sft.lr: %g is out of range (allowed (0, 1])", s.LR)
	}
	return nil
}

// Defaults returns the configuration every file starts from.
func Defaults() Config {
	return Config{
		OutDir:     "runs",
		Seed:       1,
		Iterations: 100,
		Env:        EnvConfig{Name: "maze", Options: envs.Options{}},
		Tasks:      TaskConfig{Train: TrainTasks{Size: 16}, Eval: 16, PerIter: 16, GroupSize: 8},
		Rollout: RolloutConfig{Layout: rollout.LayoutEpisode, WindowTurns: 2, ActionMaxTokens: 3, Sampler: "host",
			ConstrainActions: true},
		Policy:     PolicyConfig{Config: spec.DefaultConfig()},
		SFT:        DefaultSFTConfig(),
		Optim:      spec.DefaultOptimConfig(),
		Update:     UpdateConfig{Epochs: 1, Minibatches: 2, Loss: spec.DefaultLossConfig()},
		Estimator:  EstimatorConfig{Name: "grpo", Options: map[string]any{}},
		Eval:       EvalConfig{Every: 10, Sampled: true, AtStart: true},
		Checkpoint: CheckpointConfig{Every: 10, KeepLast: 2},
		Faults:     FaultConfig{StepTimeout: 60, MaxErrorShare: 0.25, MaxSkippedUpdates: 20, Retries: 3},
	}
}

// MaxIterations is the largest value of iterations.
const MaxIterations = 10_000_000

// Error is a configuration problem: the file, the key and what is allowed.
// Commands exit with status 2 on it, before any work starts.
type Error struct {
	// File is the config file the problem is in ("" when not known).
	File string
	// Flag is the command-line flag the problem comes from instead of the file, such as
	// "--set optim.lr=-1" ("" when it comes from the file): the message then names the flag.
	Flag string
	// Msg says what is wrong: the key, the value and what is allowed.
	Msg string
}

func (e *Error) Error() string {
	switch {
	case e.Flag != "":
		return e.Flag + ": " + e.Msg
	case e.File == "":
		return "config: " + e.Msg
	}
	return "config " + e.File + ": " + e.Msg
}

// Blame says where a problem found once the config was loaded comes from, unless it says so
// already: the --set override among overrides that its message is about (Flag), else file.
func (e *Error) Blame(file string, overrides []string) {
	if e.File != "" || e.Flag != "" {
		return
	}
	if o := overrideOf(e.Msg, overrides); o != "" {
		e.Flag = setFlag(o)
		return
	}
	e.File = file
}

// overrideOf returns the override (key.path=value) that a problem message is about, the last one
// when several are: the message begins with its key (and a colon, or a dot and a key under it)
// or quotes its key, or, for an env or estimator option (env.size=12), names the option
// (`option "size"`, `option size`) and holds its value. It returns "" when the message is about
// none of them.
func overrideOf(msg string, overrides []string) string {
	for i := len(overrides) - 1; i >= 0; i-- {
		key, value, _ := strings.Cut(overrides[i], "=")
		if strings.HasPrefix(msg, key+":") || strings.HasPrefix(msg, key+".") || strings.Contains(msg, `"`+key+`"`) {
			return overrides[i]
		}
		if dot := strings.LastIndex(key, "."); dot > 0 && value != "" && strings.Contains(msg, value) {
			opt := key[dot+1:]
			if strings.Contains(msg, `option "`+opt+`"`) || strings.Contains(msg, "option "+opt+" ") {
				return overrides[i]
			}
		}
	}
	return ""
}

// ReadFile reads a config file, refusing one over the config size limit (limits.Config,
// GRAFTRL_MAX_CONFIG_BYTES): every problem is an *Error naming the file.
func ReadFile(path string) ([]byte, error) {
	data, err := limits.Config.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error()}
	}
	return data, nil
}

// Load reads a YAML config file, applies --set overrides (key.path=value) and validates the
// result: ReadFile, then Parse.
func Load(path string, overrides []string) (Config, error) {
	data, err := ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	return Parse(path, data, overrides)
}

// Parse is Decode, then Validate: unknown keys, wrong types and out-of-range values are
// *Errors. A problem that an override brings names the override (--set key=value) rather than
// the file name.
func Parse(name string, data []byte, overrides []string) (Config, error) {
	cfg, err := Decode(name, data, overrides)
	if err != nil {
		return Config{}, err
	}
	if err := cfg.Validate(); err != nil {
		ce := &Error{Msg: err.Error()}
		ce.Blame(name, overrides)
		return Config{}, ce
	}
	return cfg, nil
}

// Decode parses a config over the defaults, applies the overrides and checks its keys and
// types (strictly: internal/strict), but not the ranges of its values (Validate). The file and
// each override value are bounded first (strict.Parse): nesting deeper than strict.MaxDepth,
// aliases repeating more than strict.MaxAliasNodes nodes and a second YAML document are
// refused naming the line. It reads what a command needs before the final overrides are
// known (the run name that --estimator extends), and a run's recorded config when only its
// values are wanted (compare).
func Decode(name string, data []byte, overrides []string) (Config, error) {
	cfg := Defaults()
	fail := func(format string, args ...any) (Config, error) {
		return Config{}, &Error{File: name, Msg: fmt.Sprintf(format, args...)}
	}
	// Bounded before anything is decoded: decoding a deep or aliased tree costs far more than
	// parsing it.
	doc, err := strict.Parse(data)
	if err != nil {
		var se *strict.ShapeError
		if errors.As(err, &se) {
			return fail("%v", err)
		}
		return fail("invalid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	root := doc
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		root = doc.Content[0]
	}
	if doc.Kind == 0 || (doc.Kind == yaml.DocumentNode && len(doc.Content) == 0) {
		return fail("the file holds no config (it is empty or only comments); a config sets at least a name, e.g. name: my-run (see configs/README.md)")
	}
	if root.Kind != yaml.MappingNode {
		return fail("the top level must be a mapping of keys (see configs/README.md)")
	}
	if len(root.Content) == 0 {
		return fail("the file holds no config (an empty mapping); a config sets at least a name, e.g. name: my-run (see configs/README.md)")
	}
	for _, o := range overrides {
		if err := applyOverride(root, o); err != nil {
			return Config{}, &Error{File: name, Flag: setFlag(o), Msg: err.Error()}
		}
	}
	if err := strict.Decode(root, &cfg); err != nil {
		ce := &Error{Msg: err.Error()}
		ce.Blame(name, overrides)
		return Config{}, ce
	}
	return cfg, nil
}

// UnmarshalYAML reads the env section: name plus free-form options for the env to check.
func (e *EnvConfig) UnmarshalYAML(n *yaml.Node) error {
	name, opts, err := namedSection(n)
	if err != nil {
		return err
	}
	if name != "" {
		e.Name = name
		e.Options = envs.Options{}
	}
	for k, v := range opts {
		e.Options[k] = v
	}
	return nil
}

// MarshalYAML writes the env section back in its YAML form.
func (e EnvConfig) MarshalYAML() (any, error) { return flatten(e.Name, e.Options), nil }

// UnmarshalYAML reads the estimator section: name plus free-form options.
func (e *EstimatorConfig) UnmarshalYAML(n *yaml.Node) error {
	name, opts, err := namedSection(n)
	if err != nil {
		return err
	}
	if name != "" {
		e.Name = name
		e.Options = map[string]any{}
	}
	for k, v := range opts {
		e.Options[k] = v
	}
	return nil
}

// MarshalYAML writes the estimator section back in its YAML form.
func (e EstimatorConfig) MarshalYAML() (any, error) { return flatten(e.Name, e.Options), nil }

func flatten(name string, opts map[string]any) map[string]any {
	m := map[string]any{"name": name}
	for k, v := range opts {
		m[k] = v
	}
	return m
}

// namedSection reads a section that names what it configures: "env: maze", or a mapping of its
// name and options.
func namedSection(n *yaml.Node) (string, map[string]any, error) {
	if n.Kind == yaml.ScalarNode { // shorthand: "env: maze"
		return n.Value, nil, nil
	}
	var m map[string]any
	if err := n.Decode(&m); err != nil {
		return "", nil, errors.New("must be a name or a mapping with a name key")
	}
	name := ""
	if v, ok := m["name"]; ok {
		s, isStr := v.(string)
		if !isStr || s == "" {
			return "", nil, fmt.Errorf("name: %v is not a name", v)
		}
		name = s
		delete(m, "name")
	}
	return name, m, nil
}

// setFlag names an override in a message: --set key=value, a value longer than a line cut
// short, since a refused value may be as long as a file (one nested 10,000 levels deep, say).
func setFlag(o string) string {
	const keep = 40
	key, value, _ := strings.Cut(o, "=")
	if len(value) <= 2*keep {
		return "--set " + o
	}
	cut := keep
	for cut > 0 && !utf8.RuneStart(value[cut]) {
		cut--
	}
	return fmt.Sprintf("--set %s=%s… (%d bytes)", key, value[:cut], len(value))
}

var overrideKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)

// applyOverride sets key.path=value in the YAML tree, creating mappings as needed. The value is
// parsed as YAML (so 0.5 is a number, true a boolean, "x" a string).
func applyOverride(root *yaml.Node, o string) error {
	key, value, ok := strings.Cut(o, "=")
	if !ok || !overrideKey.MatchString(key) {
		return errors.New("expected key.path=value, e.g. update.epochs=2")
	}
	parts := strings.Split(key, ".")
	// The value is bounded as a file is, its levels counted from where it goes: under the top
	// level and one mapping per key of the path but the last. Text that is no YAML is a string.
	v, err := strict.ParseAt([]byte(value), len(parts))
	var se *strict.ShapeError
	if errors.As(err, &se) {
		return fmt.Errorf("%s: the value at %v", key, err)
	}
	if err != nil || len(v.Content) != 1 {
		v = &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}}}
	}
	if value == "" {
		v.Content = []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: ""}}
	}
	n := root
	for i, p := range parts {
		var child *yaml.Node
		for j := 0; j+1 < len(n.Content); j += 2 {
			if n.Content[j].Value == p {
				child = n.Content[j+1]
				break
			}
		}
		last := i == len(parts)-1
		if child == nil {
			child = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			if last {
				child = v.Content[0]
			}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: p}, child)
			n = child
			continue
		}
		if last {
			*child = *v.Content[0]
			return nil
		}
		if child.Kind == yaml.ScalarNode && (p == "env" || p == "estimator") {
			// "env: maze" shorthand: expand so that env.size=... can be set.
			name := child.Value
			*child = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
				{Kind: yaml.ScalarNode, Tag: "!!str", Value: "name"}, {Kind: yaml.ScalarNode, Tag: "!!str", Value: name}}}
		}
		if child.Kind != yaml.MappingNode {
			return fmt.Errorf("%s is not a mapping", strings.Join(parts[:i+1], "."))
		}
		n = child
	}
	return nil
}

// Validate checks every value's range; errors name the key, the value and what is allowed. It
// looks at the config only: the env options are checked without building an environment
// (envs.CheckOptions), so a remote env's server is not contacted; what only the environment can
// tell (its vocabulary, its step cap, a reachable server) is checked when the run starts
// (trainer.New). The first problem found is returned.
func (c *Config) Validate() error {
	for _, check := range []func() error{c.validateRun, c.validateEnv, c.validateTasks, c.validateRollout,
		c.validatePolicy, c.validateUpdate, c.validateEstimator, c.validateSchedule, c.validateFaults} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// validateRun checks the run's own keys: name, env_steps, out_dir, iterations and backend.
func (c *Config) validateRun() error {
	if c.Name == "" {
		return errors.New("name: a run name is required (it names the directory <out_dir>/<name>)")
	}
	if strings.ContainsAny(c.Name, `/\`) || c.Name == "." || c.Name == ".." {
		return fmt.Errorf("name: %q must not contain path separators", c.Name)
	}
	if c.EnvSteps < 0 {
		return fmt.Errorf("env_steps: %d is out of range (allowed 0 = no budget, or > 0)", c.EnvSteps)
	}
	if c.OutDir == "" {
		return errors.New("out_dir: must not be empty")
	}
	if c.Iterations < 1 || c.Iterations > MaxIterations {
		return fmt.Errorf("iterations: %d is out of range (allowed 1..%d)", c.Iterations, MaxIterations)
	}
	if c.Backend != "" {
		if err := spec.ValidateBackendName(c.Backend); err != nil {
			return fmt.Errorf("backend: %v", err)
		}
	}
	return nil
}

// validateEnv checks that the env is registered and takes the options given, without building it.
func (c *Config) validateEnv() error {
	if _, err := envs.Lookup(c.Env.Name); err != nil {
		return fmt.Errorf("env.name: %v", err)
	}
	return envs.CheckOptions(c.Env.Name, c.Env.Options)
}

// validateTasks checks the tasks section: the panels' sizes and an iteration's tasks and group.
func (c *Config) validateTasks() error {
	t := c.Tasks
	switch {
	case !t.Train.Open && (t.Train.Size < 1 || t.Train.Size > 100_000):
		return fmt.Errorf("tasks.train: %d is out of range (allowed 1..100000, or open)", t.Train.Size)
	case t.Eval < 0 || t.Eval > 100_000:
		return fmt.Errorf("tasks.eval: %d is out of range (allowed 0..100000)", t.Eval)
	case t.Train.Open && t.Eval < 1:
		return fmt.Errorf("tasks.eval: %d leaves nothing to evaluate with tasks.train: open, which has no training panel (allowed 1..100000)", t.Eval)
	case t.Train.Open && (t.PerIter < 1 || t.PerIter > 100_000):
		return fmt.Errorf("tasks.per_iter: %d is out of range (allowed 1..100000)", t.PerIter)
	case !t.Train.Open && (t.PerIter < 1 || t.PerIter > t.Train.Size):
		return fmt.Errorf("tasks.per_iter: %d is out of range (allowed 1..tasks.train = %d)", t.PerIter, t.Train.Size)
	case t.GroupSize < 1 || t.GroupSize > 1024:
		return fmt.Errorf("tasks.group_size: %d is out of range (allowed 1..1024)", t.GroupSize)
	case t.PanelSeed < 0 || t.PanelSeed > 1_000_000_000:
		return fmt.Errorf("tasks.panel_seed: %d is out of range (allowed 0..1000000000)", t.PanelSeed)
	}
	return nil
}

// validateRollout checks the rollout section: the token layout (rollout.Config) and the sampler.
func (c *Config) validateRollout() error {
	if err := c.RolloutConfig().Validate(); err != nil {
		return err
	}
	if c.Rollout.Sampler != "host" && c.Rollout.Sampler != "graph" {
		return fmt.Errorf("rollout.sampler: %q is not allowed (allowed: host, graph)", c.Rollout.Sampler)
	}
	return nil
}

// validatePolicy checks the policy section and the sft section, which both say where the
// initial weights come from.
func (c *Config) validatePolicy() error {
	pc := c.Policy.Config
	pc.Vocab = 2 // checked once the env's vocabulary is known
	if err := pc.Validate(); err != nil {
		return err
	}
	if d := c.Policy.Devices; d < 0 || d > spec.MaxDevices {
		return fmt.Errorf("policy.devices: %d is out of range (allowed 0 or 1 = one device, up to %d)", d, spec.MaxDevices)
	}
	if b := spec.ResolveBackendName(c.Backend); c.Policy.Devices > 1 && b == spec.DefaultBackend {
		return fmt.Errorf("policy.devices: %d needs an xla backend, but the backend is %s, which has one device (allowed with %s: 0 or 1; or set backend: xla:cpu or xla:cuda)",
			c.Policy.Devices, b, b)
	}
	if err := c.validatePretrained(); err != nil {
		return err
	}
	if err := c.SFT.Validate(); err != nil {
		return err
	}
	if c.SFT.Enabled() && c.Policy.Init != "" {
		return fmt.Errorf("policy.init: %q and an sft section both give the initial weights (allowed: one of them; leave sft.demos at 0 to start from policy.init)", c.Policy.Init)
	}
	return nil
}

// validatePretrained checks the keys that apply to a pretrained policy only, and the word-
// vocabulary keys that cannot apply to one.
func (c *Config) validatePretrained() error {
	if c.Policy.Pretrained == "" {
		switch {
		case c.Policy.LoRA.On:
			return errors.New("policy.lora: adapters need a pretrained model (allowed: set policy.pretrained, or remove policy.lora)")
		case c.Rollout.Chat.System != "" || c.Rollout.Chat.User != "" || len(c.Rollout.Chat.Examples) > 0:
			return errors.New("rollout.chat: chat turns apply to a pretrained model only (allowed: set policy.pretrained, or remove rollout.chat)")
		}
		return nil
	}
	if c.Policy.LoRA.On {
		if err := c.Policy.LoRA.Validate(); err != nil {
			return err
		}
		if c.Policy.Init != "" || c.SFT.Enabled() {
			return errors.New("policy.lora: adapters start from the pretrained model itself; a warm start (policy.init or an sft section) is for full fine-tuning (allowed: remove policy.lora, or the warm start)")
		}
	}
	if c.Rollout.ConstrainActions {
		return fmt.Errorf("rollout.constrain_actions: true cannot apply to policy.pretrained %q: it restricts actions to the env's word tokens, and a language model writes its actions in its own tokens (allowed: false)", c.Policy.Pretrained)
	}
	return rollout.ChatOptions{System: c.Rollout.Chat.System, User: c.Rollout.Chat.User, Examples: c.Rollout.Chat.Examples}.Validate()
}

// validateUpdate checks the optim and update sections.
func (c *Config) validateUpdate() error {
	if err := c.Optim.Validate(); err != nil {
		return err
	}
	if c.Update.Epochs < 1 || c.Update.Epochs > 100 {
		return fmt.Errorf("update.epochs: %d is out of range (allowed 1..100)", c.Update.Epochs)
	}
	if c.Update.Minibatches < 1 || c.Update.Minibatches > 1024 {
		return fmt.Errorf("update.minibatches: %d is out of range (allowed 1..1024)", c.Update.Minibatches)
	}
	if err := c.Update.Loss.Validate(); err != nil {
		return err
	}
	if c.Update.Loss.Objective == spec.ObjectiveCrossEntropy {
		return fmt.Errorf("update.objective: %q is the objective of the sft warm start, not of RL (allowed: %s, %s)",
			c.Update.Loss.Objective, spec.ObjectiveToken, spec.ObjectiveStep)
	}
	return nil
}

// validateEstimator checks the estimator and its options (advantage.Check, nothing built), and
// that a group-relative estimator gets groups to compare.
func (c *Config) validateEstimator() error {
	if err := advantage.Check(c.Estimator.Name, c.Estimator.Options); err != nil {
		return err
	}
	if c.Tasks.GroupSize == 1 && slices.Contains(advantage.GroupRelative(), c.Estimator.Name) {
		return fmt.Errorf("tasks.group_size: 1 gives %s no signal: its advantages compare a task's rollouts with each other (allowed with %s: 2..1024; graft accepts 1)",
			c.Estimator.Name, strings.Join(advantage.GroupRelative(), ", "))
	}
	return nil
}

// validateSchedule checks when the run evaluates, checkpoints and resumes.
func (c *Config) validateSchedule() error {
	if c.Eval.Every < 0 {
		return fmt.Errorf("eval.every: %d is out of range (allowed ≥ 0)", c.Eval.Every)
	}
	if c.Checkpoint.Every < 0 {
		return fmt.Errorf("checkpoint.every: %d is out of range (allowed ≥ 0)", c.Checkpoint.Every)
	}
	if c.Checkpoint.KeepLast < 1 || c.Checkpoint.KeepLast > 1000 {
		return fmt.Errorf("checkpoint.keep_last: %d is out of range (allowed 1..1000)", c.Checkpoint.KeepLast)
	}
	if c.Resume != "" && c.Resume != "auto" {
		return fmt.Errorf("resume: %q is not allowed (allowed: auto, or leave it out)", c.Resume)
	}
	return nil
}

// validateFaults checks the faults section and save_batches.
func (c *Config) validateFaults() error {
	f := c.Faults
	if !(f.StepTimeout >= 0 && f.StepTimeout <= 86400) {
		return fmt.Errorf("faults.step_timeout: %g is out of range (allowed 0 = no limit, or seconds up to 86400)", f.StepTimeout)
	}
	if !(f.MaxErrorShare >= 0 && f.MaxErrorShare <= 1) {
		return fmt.Errorf("faults.max_error_share: %g is out of range (allowed [0, 1])", f.MaxErrorShare)
	}
	if f.MaxSkippedUpdates < 1 || f.MaxSkippedUpdates > 1_000_000 {
		return fmt.Errorf("faults.max_skipped_updates: %d is out of range (allowed 1..1000000)", f.MaxSkippedUpdates)
	}
	if c.SaveBatches < 0 {
		return fmt.Errorf("save_batches: %d is out of range (allowed ≥ 0)", c.SaveBatches)
	}
	return nil
}

// Warnings are the config's legal but doubtful choices, logged when a run starts.
func (c *Config) Warnings() []string {
	var w []string
	if c.Tasks.GroupSize == 1 {
		w = append(w, fmt.Sprintf("tasks.group_size: 1: %s sees one rollout per task, so it credits only states a rollout revisits (an invalid move's self-loop, a cycle); use 2 or more to compare rollouts",
			c.Estimator.Name))
	}
	return w
}

// RolloutConfig is the run's token layout, context length and step timeout for the rollout
// collector; ActionBias is left to the caller (the policy's ActionBias).
func (c *Config) RolloutConfig() rollout.Config {
	return rollout.Config{Layout: c.Rollout.Layout, WindowTurns: c.Rollout.WindowTurns,
		MaxLen: c.Policy.MaxLen, ActionMaxTokens: c.Rollout.ActionMaxTokens,
		StepTimeout: time.Duration(c.Faults.StepTimeout * float64(time.Second)), Retries: c.Faults.Retries}
}

// YAML renders the resolved configuration (written to the run directory).
func (c *Config) YAML() []byte {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	_ = enc.Encode(c)
	return buf.Bytes()
}
