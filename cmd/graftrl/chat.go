package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/graftrl/graftrl/modelfile"
	"github.com/graftrl/graftrl/policy/host"
	"github.com/graftrl/graftrl/tokens/bpe"
)

// chatOptions are the flags of `graftrl chat`.
type chatOptions struct {
	model       string
	prompt      string
	system      string
	maxTokens   int
	temperature float64
	seed        uint64
	in          io.Reader
	out, errOut io.Writer
}

// smolLM2Default is where scripts/install-smollm2.sh keeps SmolLM2-135M-Instruct.
func smolLM2Default() string {
	path, err := modelfile.InstalledPath(modelfile.SmolLM2File)
	if err != nil {
		return filepath.Join("~", ".cache", "graftrl", "models", modelfile.SmolLM2File)
	}
	return path
}

func newChatCmd() *cobra.Command {
	o := &chatOptions{}
	cmd := &cobra.Command{
		Use:   "chat [--model FILE|DIR] [--prompt TEXT] [--system TEXT]",
		Short: "Talk to a pretrained llama model (SmolLM2-135M-Instruct) in the terminal",
		Long: `Loads a llama model, a GGUF file or a Hugging Face directory (by default SmolLM2-135M-Instruct
as scripts/install-smollm2.sh installs it, in ${XDG_CACHE_HOME:-~/.cache}/graftrl/models; see
graftrl convert), on the CPU and answers in its chat template,
streaming the tokens as they come, until the end of the turn (<|im_end|>) or --max-tokens.
With --prompt it answers that one turn and exits; without, every line of stdin is a user turn
and the conversation is kept. --temperature 0 (the default) is greedy; above 0 samples with
the seeded generator (--seed), so a run is repeatable.`,
		Example: `  # install the model first: scripts/install-smollm2.sh
  graftrl chat --prompt "What is the capital of France?"
  graftrl chat --system "Answer in one sentence." --temperature 0.7 --seed 3
  graftrl chat --model ./SmolLM2-135M-Instruct.Q4_1.gguf --max-tokens 64
  graftrl chat --model ./smollm2-hf --prompt "Hello"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.in, o.out, o.errOut = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
			o.prompt = strings.TrimSpace(o.prompt)
			if cmd.Flags().Changed("prompt") && o.prompt == "" {
				return &usageError{"chat: --prompt is empty; give the text of the user's turn, or leave --prompt out to read turns from stdin"}
			}
			return chatRun(o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.model, "model", "", "llama GGUF file or Hugging Face directory (default ${XDG_CACHE_HOME:-~/.cache}/graftrl/models/SmolLM2-135M-Instruct.Q4_1.gguf)")
	f.StringVar(&o.prompt, "prompt", "", "answer this one user turn and exit (default: read turns from stdin, one a line)")
	f.StringVar(&o.system, "system", "", "system turn (default: the chat template's own)")
	f.IntVar(&o.maxTokens, "max-tokens", 256, "most tokens in one answer (≥ 1)")
	f.Float64Var(&o.temperature, "temperature", 0, "sampling temperature (0 = greedy, else > 0)")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the sampler (used when --temperature > 0)")
	return cmd
}

// chatModel is a loaded model with what a chat needs of its tokenizer.
type chatModel struct {
	llama *host.Llama
	tok   *bpe.Tokenizer
	tmpl  *bpe.ChatTemplate
	end   int32 // <|im_end|>, the template's end of turn
}

func chatRun(o *chatOptions) error {
	if o.maxTokens < 1 {
		return &usageError{fmt.Sprintf("chat: --max-tokens %d: must be at least 1", o.maxTokens)}
	}
	if math.IsNaN(o.temperature) || math.IsInf(o.temperature, 0) || o.temperature < 0 {
		return &usageError{fmt.Sprintf("chat: --temperature %v: must be 0 (greedy) or a finite number above 0", o.temperature)}
	}
	if o.model == "" {
		o.model = smolLM2Default()
	}
	if _, err := os.Stat(o.model); errors.Is(err, fs.ErrNotExist) {
		return &usageError{fmt.Sprintf("chat: --model %s: no such file; install SmolLM2-135M-Instruct with scripts/install-smollm2.sh or pass --model FILE.gguf or a Hugging Face directory", o.model)}
	}
	m, err := loadChatModel(o.model)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(o.seed, 0))
	var chat []bpe.Message
	if o.system != "" {
		chat = append(chat, bpe.Message{Role: "system", Content: o.system})
	}
	turn := func(text string) error {
		chat = append(chat, bpe.Message{Role: "user", Content: text})
		answer, err := m.answer(chat, o, rng)
		if err != nil {
			return err
		}
		chat = append(chat, bpe.Message{Role: "assistant", Content: answer})
		return nil
	}
	if o.prompt != "" {
		return turn(o.prompt)
	}
	sc := bufio.NewScanner(o.in)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			if err := turn(line); err != nil {
				return err
			}
		}
	}
	return sc.Err()
}

// loadChatModel opens path (a GGUF file or a Hugging Face directory; openModel's checks) and
// builds its decoder, tokenizer and chat template.
func loadChatModel(path string) (*chatModel, error) {
	// The decoder packs the weights' matrices while the weights are held: two copies at once.
	src, err := openModel("chat: --model", path, 2)
	if err != nil {
		return nil, err
	}
	defer src.close()
	tmpl, err := src.tok.ChatTemplate()
	if err != nil {
		return nil, &usageError{fmt.Sprintf("chat: --model %s: %v", path, err)}
	}
	end, ok := src.tok.ID("<|im_end|>")
	if !ok {
		return nil, &usageError{fmt.Sprintf("chat: --model %s: its vocabulary has no <|im_end|>, the chat template's end of turn", path)}
	}
	c, w, err := src.weights("chat: --model")
	if err != nil {
		return nil, err
	}
	llama, err := host.NewLlama(c, w)
	if err != nil {
		return nil, &usageError{fmt.Sprintf("chat: --model %s: %v", path, err)}
	}
	return &chatModel{llama: llama, tok: src.tok, tmpl: tmpl, end: end}, nil
}

// answer generates the assistant's turn after chat, streaming it to o.out, and returns its text.
// The whole chat is prefilled again each turn: re-encoding the rendered text is what the
// template means, where reusing the cache would keep the sampled tokens, which can differ from
// the text's own encoding.
func (m *chatModel) answer(chat []bpe.Message, o *chatOptions, rng *rand.Rand) (string, error) {
	prompt := m.tok.Encode(nil, m.tmpl.Render(chat, true))
	d := m.llama.NewDecoder()
	logits, err := d.Prefill(prompt)
	if err != nil {
		return "", err
	}
	var ids []int32
	printed := 0
	for len(ids) < o.maxTokens {
		next := pick(logits, o.temperature, rng)
		if next == m.end {
			break
		}
		ids = append(ids, next)
		// Print only complete characters: a token can end inside a multi-byte rune, which the
		// decoder shows as U+FFFD until the next token completes it.
		text := strings.TrimRight(m.tok.Decode(ids), string(utf8.RuneError))
		if len(text) > printed {
			if _, err := io.WriteString(o.out, text[printed:]); err != nil {
				return "", err
			}
			printed = len(text)
		}
		if len(ids) == o.maxTokens {
			break
		}
		if logits, err = d.Step(next); err != nil {
			return "", err
		}
	}
	text := m.tok.Decode(ids)
	if _, err := io.WriteString(o.out, text[min(printed, len(text)):]+"\n"); err != nil {
		return "", err
	}
	return text, nil
}

// pick is the most likely token (the lowest id on a tie) at temperature 0, else a draw from
// softmax(logits/temperature).
func pick(logits []float32, temperature float64, rng *rand.Rand) int32 {
	best := 0
	for i, v := range logits {
		if v > logits[best] {
			best = i
		}
	}
	if temperature == 0 {
		return int32(best)
	}
	top := float64(logits[best])
	var sum float64
	p := make([]float64, len(logits))
	for i, v := range logits {
		p[i] = math.Exp((float64(v) - top) / temperature)
		sum += p[i]
	}
	u := rng.Float64() * sum
	for i, v := range p {
		if u -= v; u < 0 {
			return int32(i)
		}
	}
	return int32(best)
}
