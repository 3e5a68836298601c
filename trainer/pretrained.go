package trainer

import (
	"fmt"
	"strings"

	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/modelfile"
	"github.com/graftrl/graftrl/policy"
	"github.com/graftrl/graftrl/policy/host"
	"github.com/graftrl/graftrl/policy/pretrained"
	"github.com/graftrl/graftrl/policy/spec"
	"github.com/graftrl/graftrl/rollout"
	"github.com/graftrl/graftrl/tokens/bpe"
)

// Model is the pretrained language model of a run (policy.pretrained): where it was read from,
// its checksum, its architecture, weights and tokenizer.
type Model struct {
	// Path is the model file or directory (policy.pretrained resolved).
	Path string
	// SHA256 identifies the model's bytes (pretrained.Checksum): a LoRA run's checkpoints
	// hold adapters for this model only.
	SHA256    string
	Config    pretrained.Config
	Weights   pretrained.Weights
	Tokenizer *bpe.Tokenizer
}

// modelCopies is how many float32 copies of a pretrained model's weights a run holds at once:
// the policy's parameters, the sampler's packed copy and the weights read back for it, and, when
// every weight trains, Adam's two moments and the KL reference.
func modelCopies(c *config.Config) int {
	if c.Policy.LoRA.On {
		return 3
	}
	return 6
}

// ModelPath resolves policy.pretrained: smollm2 is the file scripts/install-smollm2.sh installs.
func ModelPath(c *config.Config) (string, error) {
	if c.Policy.Pretrained != config.SmolLM2 {
		return c.Policy.Pretrained, nil
	}
	path, err := modelfile.InstalledSmolLM2()
	if err != nil {
		return "", &config.Error{Msg: fmt.Sprintf("policy.pretrained: %s: %v (install it with scripts/install-smollm2.sh, or give a .gguf file or a Hugging Face directory)", config.SmolLM2, err)}
	}
	return path, nil
}

// loadModel reads the run's pretrained model; every refusal of the file (pretrained.Open's
// checks, memory included) is a *config.Error naming policy.pretrained.
func loadModel(c *config.Config) (*Model, error) {
	path, err := ModelPath(c)
	if err != nil {
		return nil, err
	}
	refuse := func(err error) error {
		return &config.Error{Msg: fmt.Sprintf("policy.pretrained: %s: %s", path, strings.TrimPrefix(err.Error(), path+": "))}
	}
	src, err := pretrained.Open(path, modelCopies(c))
	if err != nil {
		return nil, refuse(err)
	}
	defer src.Close()
	m := &Model{Path: path, Tokenizer: src.Tokenizer}
	if m.Config, m.Weights, err = src.Weights(); err != nil {
		return nil, refuse(err)
	}
	if m.Tokenizer.Size() != m.Config.Vocab {
		return nil, refuse(fmt.Errorf("its tokenizer has %d tokens and its embedding %d rows (allowed: equal)", m.Tokenizer.Size(), m.Config.Vocab))
	}
	if m.SHA256, err = pretrained.Checksum(path); err != nil {
		return nil, refuse(err)
	}
	return m, nil
}

// chatFormat is the chat layout of env e's episodes for model m (rollout.chat).
func chatFormat(c *config.Config, m *Model, e envs.Env) (rollout.Format, error) {
	o := rollout.ChatOptions{System: c.Rollout.Chat.System, User: c.Rollout.Chat.User, Examples: c.Rollout.Chat.Examples}
	if s, err := envs.Lookup(c.Env.Name); err == nil {
		o.Description = s.Description
	}
	if aw, ok := e.(envs.ActionWorder); ok {
		o.ActionWords = aw.ActionWords()
	}
	f, err := rollout.NewChat(m.Tokenizer, o)
	if err != nil {
		return nil, &config.Error{Msg: err.Error()}
	}
	return f, nil
}

// Sampler is the pure-Go copy of a policy's weights that rollouts decode with (rollout.sampler
// host): graftrl's transformer (host.Model) or a pretrained Llama (host.Llama).
type Sampler interface {
	// SetWeights replaces the weights (the policy's, in its parameter order) in place.
	SetWeights(w [][]float32) error
	// NewDecoder returns a decoder of slots rows.
	NewDecoder(slots int) rollout.Decoder
}

// wordSampler is the transformer's sampler.
type wordSampler struct{ *host.Model }

func (s wordSampler) NewDecoder(slots int) rollout.Decoder { return s.Model.NewDecoder(slots) }

// llamaSampler is a pretrained Llama's sampler.
type llamaSampler struct {
	*host.Llama
	c pretrained.Config
}

func (s llamaSampler) SetWeights(w [][]float32) error {
	lw, err := spec.LlamaWeights(s.c, w)
	if err != nil {
		return err
	}
	return s.Llama.SetWeights(lw)
}

func (s llamaSampler) NewDecoder(slots int) rollout.Decoder { return s.Llama.NewRows(slots) }

// NewSampler builds the host sampler of pol's current weights.
func NewSampler(pol *policy.Policy) (Sampler, error) {
	w, err := pol.Weights()
	if err != nil {
		return nil, err
	}
	if lc, ok := pol.Llama(); ok {
		lw, err := spec.LlamaWeights(lc, w)
		if err != nil {
			return nil, err
		}
		h, err := host.NewLlama(lc, lw)
		if err != nil {
			return nil, err
		}
		return llamaSampler{h, lc}, nil
	}
	h, err := host.New(pol.Config(), w)
	if err != nil {
		return nil, err
	}
	return wordSampler{h}, nil
}
