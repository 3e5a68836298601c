package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/advantage"
	_ "github.com/graftrl/graftrl/envs/maze"
	"github.com/graftrl/graftrl/internal/limits"
)

const minimalYAML = "name: t\n"

// lmYAML turns off what cannot apply to a language model's actions.
const lmYAML = "rollout: {constrain_actions: false}\n"

// Config errors must name the key, the value and what is allowed.
func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name, yaml string
		sets       []string
		want       []string // substrings of the error
	}{
		{"unknown top-level key", minimalYAML + "iteratons: 3\n", nil, []string{`unknown key "iteratons"`, "iterations"}},
		{"unknown nested key", minimalYAML + "update:\n  epochz: 2\n", nil, []string{`"update.epochz"`, "epochs", "minibatches"}},
		{"inline loss keys are allowed", minimalYAML + "update:\n  clip_lo: 0.1\n", nil, []string{`"update.clip_lo"`, "clip_low"}},
		{"wrong type", minimalYAML + "iterations: many\n", nil, []string{`"iterations"`, `"many"`, "integer"}},
		{"wrong type nested", minimalYAML + "optim:\n  lr: fast\n", nil, []string{`"optim.lr"`, `"fast"`, "number"}},
		{"negative seed", minimalYAML + "seed: -3\n", nil, []string{`"seed"`, "non-negative integer"}},
		{"out of range", minimalYAML + "iterations: 0\n", nil, []string{"iterations: 0", "allowed 1.."}},
		{"clip out of range", minimalYAML + "update:\n  clip_low: 1.5\n", nil, []string{"update.clip_low: 1.5", "allowed"}},
		{"bad aggregation", minimalYAML + "update:\n  aggregation: mean\n", nil, []string{"update.aggregation", `"mean"`, "token-mean"}},
		{"heads must divide", minimalYAML + "policy:\n  heads: 5\n", nil, []string{"policy.heads: 5", "divide"}},
		{"per_iter above panel", minimalYAML + "tasks:\n  train: 4\n  per_iter: 8\n", nil, []string{"tasks.per_iter: 8", "tasks.train = 4"}},
		{"unknown env", minimalYAML + "env: {name: mazz}\n", nil, []string{"env.name", `"mazz"`, "maze"}},
		{"env option", minimalYAML + "env: {name: maze, size: 12}\n", nil, []string{"env maze", `"size"`, "12", "5..11"}},
		{"env unknown option", minimalYAML + "env: {name: maze, szie: 5}\n", nil, []string{`unknown option "szie"`, "size"}},
		{"unknown estimator", minimalYAML + "estimator: {name: ppo}\n", nil, []string{"estimator.name", `"ppo"`, "grpo"}},
		{"estimator option", minimalYAML + "estimator: {name: grpo, epsilon: 1}\n", nil, []string{`"estimator.epsilon"`, "allowed under estimator", "eps"}},
		{"bad backend", minimalYAML + "backend: tpu\n", nil, []string{"backend", `"tpu"`, "xla:cpu"}},
		{"missing name", "seed: 1\n", nil, []string{"name: a run name is required"}},
		{"not yaml", "name: [unclosed\n", nil, []string{"config x.yaml"}},
		{"bad override syntax", minimalYAML, []string{"iterations"}, []string{"--set iterations", "key.path=value"}},
		{"override type", minimalYAML, []string{"update.epochs=two"}, []string{`"update.epochs"`, `"two"`}},
		{"override unknown", minimalYAML, []string{"update.epocs=2"}, []string{`"update.epocs"`}},
		{"train neither size nor open", minimalYAML + "tasks: {train: opn}\n", nil, []string{`"tasks.train"`, `"opn"`, "open"}},
		{"train zero", minimalYAML + "tasks: {train: 0}\n", nil, []string{"tasks.train: 0", "or open"}},
		{"open without eval panel", minimalYAML + "tasks: {train: open, eval: 0}\n", nil, []string{"tasks.eval: 0", "tasks.train: open"}},
		{"sft epsilon", minimalYAML + "sft: {demos: 8, epsilon: 1}\n", nil, []string{"sft.epsilon: 1", "[0, 1)"}},
		{"sft steps", minimalYAML + "sft: {demos: 8, steps: 0}\n", nil, []string{"sft.steps: 0", "1.."}},
		{"sft unknown key", minimalYAML + "sft: {demo: 8}\n", nil, []string{`"sft.demo"`, "demos", "epsilon"}},
		{"sft and init", minimalYAML + "sft: {demos: 8}\npolicy: {init: runs/x/sft}\n", nil, []string{"policy.init", "sft", "one of them"}},
		{"devices on go", minimalYAML + "backend: go\npolicy: {devices: 2}\n", nil, []string{"policy.devices: 2", "xla backend", "0 or 1", "xla:cpu"}},
		{"devices out of range", minimalYAML + "policy: {devices: 65}\n", nil, []string{"policy.devices: 65", "up to 64"}},
		{"retries out of range", minimalYAML + "faults: {retries: -1}\n", nil, []string{"faults.retries: -1", "0..100"}},
		{"cross-entropy for RL", minimalYAML + "update: {objective: cross-entropy}\n", nil, []string{"update.objective", "sft warm start", "token, step"}},
		{"fractional integer", minimalYAML + "iterations: 1.5\n", nil, []string{`"iterations"`, `"1.5"`, "integer"}},
		{"fractional integer nested", minimalYAML + "update: {epochs: 2.0}\n", nil, []string{`"update.epochs"`, `"2.0"`, "integer"}},
		{"fractional override", minimalYAML, []string{"iterations=2.9"}, []string{`"iterations"`, `"2.9"`, "integer"}},
		{"fractional panel", minimalYAML, []string{"tasks.train=16.5"}, []string{`"tasks.train"`, `"16.5"`, "1..100000, or open"}},
		{"fractional env option", minimalYAML + "env: {name: maze, size: 5.5}\n", nil, []string{"env maze", `"size"`, "5.5"}},
		{"group of one, grpo", minimalYAML + "tasks: {group_size: 1}\n", nil, []string{"tasks.group_size: 1", "grpo", "no signal", "2..1024"}},
		{"group of one, gigpo", minimalYAML + "tasks: {group_size: 1}\nestimator: gigpo\n", nil, []string{"tasks.group_size: 1", "gigpo"}},
		{"group of one, graphgpo", minimalYAML + "tasks: {group_size: 1}\nestimator: graphgpo\n", nil, []string{"tasks.group_size: 1", "graphgpo"}},
		{"group of one, drgrpo", minimalYAML, []string{"tasks.group_size=1", "estimator=drgrpo"}, []string{"tasks.group_size: 1", "drgrpo"}},
		{"lora without a pretrained model", minimalYAML + "policy: {lora: {rank: 8}}\n", nil, []string{"policy.lora", "pretrained"}},
		{"chat without a pretrained model", minimalYAML + "rollout: {chat: {system: hi}}\n", nil, []string{"rollout.chat", "pretrained"}},
		{"word actions on a language model", minimalYAML + "policy: {pretrained: m.gguf}\n", nil, []string{"rollout.constrain_actions: true", "allowed: false"}},
		{"lora rank 0", minimalYAML + lmYAML + "policy: {pretrained: m.gguf, lora: {rank: 0}}\n", nil, []string{"policy.lora.rank: 0", "1..256"}},
		{"lora rank negative", minimalYAML + lmYAML + "policy: {pretrained: m.gguf, lora: {rank: -2}}\n", nil, []string{"policy.lora.rank: -2", "1..256"}},
		{"lora target names no layer", minimalYAML + lmYAML + "policy: {pretrained: m.gguf, lora: {targets: [attn_q, attn_x]}}\n", nil, []string{"policy.lora.targets", `"attn_x"`, "ffn_down"}},
		{"lora unknown key", minimalYAML + lmYAML + "policy: {pretrained: m.gguf, lora: {rnak: 4}}\n", nil, []string{"policy.lora.rnak", "rank"}},
		{"lora with a warm start", minimalYAML + lmYAML + "policy: {pretrained: m.gguf, lora: {}, init: runs/x/sft}\n", nil, []string{"policy.lora", "warm start"}},
		{"chat user without the observation", minimalYAML + "policy: {pretrained: m.gguf}\nrollout: {constrain_actions: false, chat: {user: what now}}\n", nil, []string{"rollout.chat.user", "{observation}"}},
		{"empty file", "", []string{"name=x"}, []string{"config x.yaml", "holds no config", "empty or only comments"}},
		{"only comments", "# a config\n\n# to come\n", nil, []string{"config x.yaml", "holds no config"}},
		{"empty mapping", "{}\n", nil, []string{"config x.yaml", "holds no config"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tc.yaml), tc.sets)
			if err == nil {
				t.Fatal("expected an error")
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("want an *Error, got %T: %v", err, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// A problem an override brings names the --set flag, not the file; one in the file names the
// file, overrides or not.
func TestConfigErrorsNameTheirSource(t *testing.T) {
	for _, tc := range []struct {
		yaml  string
		sets  []string
		start string
	}{
		{minimalYAML, []string{"optim.lr=-1"}, "--set optim.lr=-1: optim.lr: -1 is out of range"},
		{minimalYAML, []string{"seed=2", "update.epochz=2"}, `--set update.epochz=2: unknown key "update.epochz"`},
		{minimalYAML, []string{"iterations=2.9"}, `--set iterations=2.9: key "iterations"`},
		{minimalYAML, []string{"env.size=12"}, `--set env.size=12: env maze: option "size"`},
		{minimalYAML, []string{"estimator=graft", "estimator.mode=tdd"}, "--set estimator.mode=tdd: "},
		{minimalYAML, []string{"estimator=ppo"}, "--set estimator=ppo: estimator.name"},
		{minimalYAML, []string{"iterations"}, "--set iterations: expected key.path=value"},
		{minimalYAML + "iterations: 0\n", []string{"seed=3"}, "config x.yaml: iterations: 0"},
		{minimalYAML + "update: {epochz: 2}\n", []string{"update.epochs=2"}, `config x.yaml: unknown key "update.epochz"`},
	} {
		_, err := Parse("x.yaml", []byte(tc.yaml), tc.sets)
		if err == nil || !strings.HasPrefix(err.Error(), tc.start) {
			t.Errorf("%q with %v: error %v, want it to begin %q", tc.yaml, tc.sets, err, tc.start)
		}
	}
}

// A config file over the size limit (a 50 MB string in it) is refused before it is parsed,
// naming the file and GRAFTRL_MAX_CONFIG_BYTES; raising the limit lets it through.
func TestConfigSizeLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, []byte("name: t\nlabel: "+strings.Repeat("x", 50<<20)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path, nil)
	var ce *Error
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), limits.Config.Env()) {
		t.Fatalf("50 MB config: %v", err)
	}
	t.Setenv(limits.Config.Env(), "64MiB")
	if cfg, err := Load(path, nil); err != nil || len(cfg.Label) != 50<<20 {
		t.Fatalf("with the limit raised: %v", err)
	}
}

// A group of one rollout per task: refused for the group-relative estimators (above), accepted
// for graft with a warning, since graft's per-node normalisation still credits the states a
// rollout revisits.
func TestGroupOfOne(t *testing.T) {
	cfg, err := Parse("x.yaml", []byte(minimalYAML+"tasks: {group_size: 1}\nestimator: graft\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if w := cfg.Warnings(); len(w) != 1 || !strings.Contains(w[0], "tasks.group_size: 1") {
		t.Fatalf("warnings %q", w)
	}
	if got := advantage.GroupRelative(); strings.Join(got, ",") != "drgrpo,gigpo,graphgpo,grpo" {
		t.Fatalf("group-relative estimators %v", got)
	}
}

// Defaults fill absent keys; overrides apply in order and may expand section shorthands.
func TestConfigDefaultsAndOverrides(t *testing.T) {
	cfg, err := Parse("x.yaml", []byte("name: t\nupdate:\n  epochs: 3\n"), []string{
		"optim.lr=0.0005", "estimator=gigpo", "estimator.gamma=0.9", "env.size=6", "policy.layers=1", "name=u"})
	if err != nil {
		t.Fatal(err)
	}
	d := Defaults()
	switch {
	case cfg.Update.Epochs != 3 || cfg.Update.Minibatches != d.Update.Minibatches:
		t.Errorf("update = %+v", cfg.Update)
	case cfg.Optim.LR != 0.0005 || cfg.Optim.GradClip != d.Optim.GradClip:
		t.Errorf("optim = %+v", cfg.Optim)
	case cfg.Estimator.Name != "gigpo" || cfg.Estimator.Options["gamma"] != 0.9:
		t.Errorf("estimator = %+v", cfg.Estimator)
	case cfg.Env.Name != "maze" || cfg.Env.Options["size"] != 6:
		t.Errorf("env = %+v", cfg.Env)
	case cfg.Policy.Layers != 1 || cfg.Policy.DModel != d.Policy.DModel:
		t.Errorf("policy = %+v", cfg.Policy)
	case cfg.Name != "u":
		t.Errorf("name = %q", cfg.Name)
	case cfg.Update.Loss.ClipLow != 0.2 || cfg.Update.Loss.Aggregation != "token-mean":
		t.Errorf("loss defaults lost: %+v", cfg.Update.Loss)
	}
	// The resolved config round-trips through YAML.
	again, err := Parse("resolved.yaml", cfg.YAML(), nil)
	if err != nil {
		t.Fatalf("resolved config does not parse: %v\n%s", err, cfg.YAML())
	}
	if string(again.YAML()) != string(cfg.YAML()) {
		t.Errorf("round trip changed the config:\n%s\nvs\n%s", cfg.YAML(), again.YAML())
	}
}
