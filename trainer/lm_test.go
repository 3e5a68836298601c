package trainer

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/modelfile"
	"github.com/graftrl/graftrl/policy"
	"github.com/graftrl/graftrl/policy/pretrained"
	"github.com/graftrl/graftrl/policy/spec"
	"github.com/graftrl/graftrl/rollout"
	"github.com/graftrl/graftrl/rundir"
	"github.com/graftrl/graftrl/tokens/bpe"
)

// smolLM2Template is SmolLM2-Instruct's chat template, the one tokens/bpe renders.
const smolLM2Template = "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"

// byteTokens is GPT-2's byte alphabet: the token spelling each byte.
func byteTokens() []string {
	out, n := make([]string, 256), 0
	for b := range 256 {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			out[b] = string(rune(b))
		} else {
			out[b] = string(rune(256 + n))
			n++
		}
	}
	return out
}

// tinyChatLlama is a random Llama small enough to train in a test, with a byte-level tokenizer
// (a few merges: the maze's moves) and SmolLM2's ChatML.
func tinyChatLlama(seed uint64) (pretrained.Config, pretrained.Weights, []modelfile.KV) {
	toks := append(byteTokens(), "up", "do", "wn", "down", "le", "ft", "left", "ri", "gh", "ght", "right", "<|im_start|>", "<|im_end|>", "<|endoftext|>")
	merges := []string{"u p", "d o", "w n", "do wn", "l e", "f t", "le ft", "r i", "g h", "gh t", "ri ght"}
	types := make([]int32, len(toks))
	for i := range types {
		types[i] = bpe.TypeNormal
		if strings.HasPrefix(toks[i], "<|") {
			types[i] = bpe.TypeControl
		}
	}
	c := pretrained.Config{Layers: 1, DModel: 16, Hidden: 24, Heads: 2, KVHeads: 1, HeadDim: 8, Vocab: len(toks),
		RopeBase: 10000, NormEps: 1e-5}
	rng := rand.New(rand.NewPCG(seed, 7))
	var flat [][]float32
	for _, s := range spec.LlamaParams(c) {
		v := make([]float32, s.Size())
		for i := range v {
			v[i] = float32(rng.NormFloat64() * 0.2)
			if s.Init == spec.InitOnes {
				v[i]++
			}
		}
		flat = append(flat, v)
	}
	w, err := spec.LlamaWeights(c, flat)
	if err != nil {
		panic(err)
	}
	meta := []modelfile.KV{
		{Key: "general.name", Value: "tiny chat llama"},
		{Key: "tokenizer.ggml.model", Value: "gpt2"}, {Key: "tokenizer.ggml.pre", Value: "smollm"},
		{Key: "tokenizer.ggml.tokens", Value: toks}, {Key: "tokenizer.ggml.token_type", Value: types},
		{Key: "tokenizer.ggml.merges", Value: merges},
		{Key: "tokenizer.ggml.eos_token_id", Value: uint32(len(toks) - 2)},
		{Key: "tokenizer.chat_template", Value: smolLM2Template},
	}
	return c, w, meta
}

// writeTinyChatModel writes tinyChatLlama as a GGUF file in dir and returns its path.
func writeTinyChatModel(t testing.TB, dir string) string {
	t.Helper()
	return writeTinyChatModelSeed(t, dir, 7)
}

// writeTinyChatModelSeed is writeTinyChatModel with weights drawn from seed.
func writeTinyChatModelSeed(t testing.TB, dir string, seed uint64) string {
	t.Helper()
	c, w, meta := tinyChatLlama(seed)
	path := filepath.Join(dir, "tiny-chat.gguf")
	if err := pretrained.WriteGGUF(path, c, w, meta); err != nil {
		t.Fatal(err)
	}
	return path
}

// lmYAML is a run of the tiny chat model on 5×5 mazes with LoRA, checkpointed every iteration.
const lmYAML = `
name: lm
iterations: 4
env: {name: maze, size: 5, labelled: true, goal_hint: true}
tasks: {train: open, eval: 2, per_iter: 2, group_size: 2}
rollout:
  action_max_tokens: 4
  constrain_actions: false
  chat:
    system: "Maze: reply up, down, left or right."
    examples: [{user: r0 c0 goal-down, assistant: down}]
policy:
  max_len: 512
  lora: {rank: 2, alpha: 4}
update: {epochs: 1, minibatches: 2, kl: k3}
eval: {every: 2}
checkpoint: {every: 1, keep_last: 3}
`

// lmConfig is lmYAML on the model at path, into dir.
func lmConfig(t testing.TB, path, dir string, sets ...string) config.Config {
	t.Helper()
	cfg, err := config.Parse("lm.yaml", []byte(lmYAML), append([]string{"out_dir=" + dir, "policy.pretrained=" + path}, sets...))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// A pretrained policy trains on chat episodes with every estimator, its LoRA checkpoints hold
// the adapters only and name the model's checksum, and the run evaluates and finishes.
func TestPretrainedRun(t *testing.T) {
	dir := t.TempDir()
	model := writeTinyChatModel(t, dir)
	finals := map[string]Metrics{}
	for _, est := range []string{"grpo", "graft", "graphgpo"} {
		cfg := lmConfig(t, model, dir, "name=lm-"+est, "estimator="+est, "iterations=2")
		tr, err := New(cfg, Options{Out: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := tr.Run(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", est, err)
		}
		if sum.Iterations != 2 || sum.EnvSteps == 0 {
			t.Fatalf("%s: summary %+v", est, sum)
		}
		finals[est] = sum.Final
		if _, ok := sum.Final["eval/heldout/success"]; !ok {
			t.Errorf("%s: no held-out evaluation in %v", est, sum.Final)
		}
		ckpt := rundir.CheckpointPath(filepath.Join(dir, "lm-"+est), 2)
		vocab, err := os.ReadFile(filepath.Join(ckpt, rundir.VocabFile))
		if err != nil {
			t.Fatal(err)
		}
		sha, _ := pretrained.Checksum(model)
		if string(vocab) != "pretrained:"+sha+"\n" {
			t.Errorf("%s: the checkpoint's vocabulary file is %q; want the model's checksum", est, vocab)
		}
		if _, err := policy.ReadCheckpointParams(rundir.PolicyPath(ckpt), spec.LlamaParams(tr.info.Model.Config)); err == nil {
			t.Errorf("%s: a LoRA checkpoint holds the base weights", est)
		}
	}
	// graftrl eval of the newest checkpoint repeats the run's own last evaluation.
	m, err := EvaluateRun(filepath.Join(dir, "lm-grpo"), "", Options{Out: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if m["eval/heldout/greedy/success"] != finals["grpo"]["eval/heldout/greedy/success"] ||
		m["eval/heldout/sampled/success"] != finals["grpo"]["eval/heldout/sampled/success"] {
		t.Errorf("eval: %v; the run's own evaluation: %v", m, finals["grpo"])
	}
	// The runs' model file replaced by another model: their checkpoints are refused.
	writeTinyChatModelSeed(t, dir, 8)
	_, err = EvaluateRun(filepath.Join(dir, "lm-grpo"), "", Options{Out: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "policy.pretrained") || !strings.Contains(err.Error(), "was not trained from") {
		t.Errorf("evaluating a LoRA run on another model: %v; want a refusal naming policy.pretrained", err)
	}
}

// Only the assistant's tokens carry loss: in a hand-built two-turn chat, changing the target of
// every other position (system, examples, observations, the chat's markup, the newline after
// each turn) changes neither the loss nor the gradient (the weights after one update are bit
// for bit the same), while changing one assistant token's target changes both.
func TestOnlyAssistantTokensCarryLoss(t *testing.T) {
	c, w, meta := tinyChatLlama(7)
	toks, types, merges := meta[3].Value.([]string), meta[4].Value.([]int32), meta[5].Value.([]string)
	tok, err := bpe.New(toks, merges, types, bpe.Specials{BOS: bpe.NoID, EOS: int32(len(toks) - 2), Unk: bpe.NoID, Pad: bpe.NoID})
	if err != nil {
		t.Fatal(err)
	}
	f, err := rollout.NewChat(tok, rollout.ChatOptions{System: "Go.", Examples: []rollout.ChatExample{{User: "x", Assistant: "up"}}})
	if err != nil {
		t.Fatal(err)
	}
	// The episode: system and example, then two turns, each an observation and an action.
	var row rollout.Row
	add := func(ids []int32, step int16) {
		for _, id := range ids {
			row.Tokens, row.StepOf = append(row.Tokens, id), append(row.StepOf, step)
			row.LogProb = append(row.LogProb, 0)
		}
	}
	add(f.Instruction("t"), -1)
	for k, a := range []string{"left", "down"} {
		add(f.Turn("r1 c1 goal-"+a), -1)
		ids, _ := f.EncodeAction(a)
		add(append(ids, f.End()), int16(k))
		add(f.AfterAction(), -1)
	}
	tr := trainRow{row: &row, adv: []float64{1, -0.5}}
	loss := spec.DefaultLossConfig()
	tb := makeTrainBatch([]trainRow{tr}, loss, 256, 4, false)
	assistant := 0
	for i, wt := range tb.Weight {
		if want := i+1 < len(row.StepOf) && row.StepOf[i+1] >= 0; (wt != 0) != want {
			t.Fatalf("position %d (target %q): weight %g; the assistant's tokens only must weigh", i, tok.Decode([]int32{tb.Targets[i]}), wt)
		}
		if wt != 0 {
			assistant++
		}
	}
	if assistant != 4 { // left <|im_end|> down <|im_end|>: the merges spell each move as one token
		t.Fatalf("%d positions weigh; want the 4 of the assistant's turns", assistant)
	}
	update := func(b *policy.TrainBatch) ([][]float32, float64) {
		backend, err := policy.NewBackend(policy.BackendOptions{Name: "go"})
		if err != nil {
			t.Fatal(err)
		}
		pol, err := policy.New(backend, policy.Options{Model: policy.Config{MaxLen: 256}, Loss: loss,
			Optim: spec.DefaultOptimConfig(), Pretrained: &policy.Pretrained{Config: c, Weights: w}})
		if err != nil {
			t.Fatal(err)
		}
		st, err := pol.Update(b, 1e-2)
		if err != nil {
			t.Fatal(err)
		}
		after, err := pol.Weights()
		if err != nil {
			t.Fatal(err)
		}
		return after, st.Loss
	}
	base, baseLoss := update(tb)
	other := *tb
	other.Targets = slices.Clone(tb.Targets)
	for i, wt := range tb.Weight {
		if wt == 0 {
			other.Targets[i] = (other.Targets[i] + 7) % int32(c.Vocab)
		}
	}
	got, gotLoss := update(&other)
	if gotLoss != baseLoss || !equalWeights(got, base) {
		t.Errorf("changing the targets of context positions changed the update (loss %g → %g)", baseLoss, gotLoss)
	}
	for i, wt := range tb.Weight {
		if wt != 0 { // the first assistant position
			other.Targets = slices.Clone(tb.Targets)
			other.Targets[i] = (other.Targets[i] + 7) % int32(c.Vocab)
			break
		}
	}
	if got, gotLoss := update(&other); gotLoss == baseLoss || equalWeights(got, base) {
		t.Errorf("changing an assistant token's target left the update as it was: the check cannot fail")
	}
}

func equalWeights(a, b [][]float32) bool {
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			return false
		}
	}
	return len(a) == len(b)
}

// A pretrained run killed with kill -9 after a checkpoint and resumed ends byte for byte where
// the uninterrupted run ends: metrics.jsonl and the final weights (LoRA adapters merged).
func TestPretrainedResumeAfterKill(t *testing.T) {
	model := writeTinyChatModel(t, t.TempDir())
	straight := t.TempDir()
	tr, err := New(lmConfig(t, model, straight), Options{Out: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantMetrics, wantWeights := readRun(t, filepath.Join(straight, "lm"))

	dir := t.TempDir()
	run := filepath.Join(dir, "lm")
	env := "GRAFTRL_TEST_TRAIN_MODEL=" + model
	cmd := startChild(t, dir, env)
	waitForCheckpoint(t, run, 2, cmd)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	resumeMatches(t, dir, run, wantMetrics, wantWeights, env)
}

// A context too short for the first turn of a chat (system turn, examples, the first
// observation and one reply) is refused before any work, naming policy.max_len.
func TestPretrainedContextTooShort(t *testing.T) {
	dir := t.TempDir()
	model := writeTinyChatModel(t, dir)
	_, err := New(lmConfig(t, model, dir, "policy.max_len=64"), Options{Out: io.Discard})
	var ce *config.Error
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "policy.max_len: 64 is too short") {
		t.Fatalf("max_len 64: %v; want a config error naming policy.max_len", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "lm")); err == nil {
		t.Error("the refused run left its directory behind")
	}
}

// Every shipped language-model config is valid, and on SmolLM2 (installed by
// scripts/install-smollm2.sh; skipped without it unless GRAFTRL_SMOLLM2=1) its context holds
// the first turn of the panels' first tasks and its chat reads the env's action words.
func TestShippedLMConfigs(t *testing.T) {
	files, err := filepath.Glob("../configs/lm/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no configs/lm/*.yaml (%v)", err)
	}
	if _, err := modelfile.InstalledSmolLM2(); err != nil {
		if os.Getenv("GRAFTRL_SMOLLM2") == "1" {
			t.Fatalf("GRAFTRL_SMOLLM2=1: %v", err)
		}
		t.Skip(err)
	}
	for _, f := range files {
		cfg, err := config.Load(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		info, err := ProbeEnv(&cfg)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if info.Model == nil || info.Model.Config.Vocab != 49152 {
			t.Errorf("%s: the model is not SmolLM2's", f)
		}
		if _, ok := info.Format.(*rollout.Chat); !ok {
			t.Errorf("%s: episodes are not chats", f)
		}
	}
}
