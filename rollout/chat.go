package rollout

import (
	"fmt"
	"slices"
	"strings"

	"github.com/graftrl/graftrl/tokens/bpe"
)

// Chat is the Format of a pretrained chat model (SmolLM2's ChatML): an episode is a chat whose
// system turn holds the env's task and rules, each observation a user turn and each action an
// assistant turn that the model ends with its end-of-turn token:
//
//	<|im_start|>system\n SYSTEM <|im_end|>\n  (then any example turns, as below)
//	<|im_start|>user\n OBSERVATION <|im_end|>\n<|im_start|>assistant\n ACTION <|im_end|>\n
//	<|im_start|>user\n …
//
// Only the assistant's tokens and its <|im_end|> are the policy's (trained on); the rest is
// context. The action text is read from the assistant's turn by ParseAction's lenient rule.
type Chat struct {
	tok         *bpe.Tokenizer
	system      string   // the system turn, {task} still to fill
	shots       string   // the example turns after it
	user        string   // the user turn, {observation} still to fill
	actionWords []string // the env's action words (nil: the whole first line is the action)
	end         int32    // <|im_end|>
	after       []int32  // "\n" after <|im_end|>
}

// ChatOptions are the texts of a Chat's turns. In System, {task} is replaced by each episode's
// instruction, {actions} by the env's action words and {description} by the env's one-line
// description; in User, {observation} by the observation.
type ChatOptions struct {
	System, User string
	// Examples are worked turns shown after the system turn, before every episode (few-shot
	// prompting: a small model answers in the form its earlier turns show).
	Examples []ChatExample
	// Description is the env's one-line description ({description}).
	Description string
	// ActionWords are the env's action words ({actions}, and the lenient reading of actions);
	// nil for an env without them.
	ActionWords []string
}

// ChatExample is one worked turn: an observation and the reply it calls for.
type ChatExample struct {
	User      string `yaml:"user"`
	Assistant string `yaml:"assistant"`
}

// DefaultChatSystem and DefaultChatUser are the turns a Chat uses when none are configured.
const (
	DefaultChatSystem = "{description}\nTask: {task}\nEach turn, answer with one action and nothing else. Actions: {actions}."
	DefaultChatUser   = "{observation}"
)

// chatEnd is the ChatML end of turn.
const chatEnd = "<|im_end|>"

// Validate checks the turns' texts without a tokenizer (a run config checks them before any
// work); errors name the key under rollout.chat.
func (o ChatOptions) Validate() error {
	if o.User != "" && !strings.Contains(o.User, "{observation}") {
		return fmt.Errorf("rollout.chat.user: %q does not contain {observation} (allowed: any text with {observation})", o.User)
	}
	for i, ex := range o.Examples {
		if ex.User == "" || ex.Assistant == "" {
			return fmt.Errorf("rollout.chat.examples[%d]: user and assistant must both be given", i)
		}
	}
	return nil
}

// NewChat builds the Chat of tokenizer tok (ChatML: it must have <|im_start|> and <|im_end|>).
func NewChat(tok *bpe.Tokenizer, o ChatOptions) (*Chat, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	end, ok := tok.ID(chatEnd)
	if _, start := tok.ID("<|im_start|>"); !ok || !start {
		return nil, fmt.Errorf("rollout: the model's vocabulary has no <|im_start|> and <|im_end|>: its chats are not ChatML")
	}
	if o.System == "" {
		o.System = DefaultChatSystem
	}
	if o.User == "" {
		o.User = DefaultChatUser
	}
	sys := strings.NewReplacer("{actions}", strings.Join(o.ActionWords, ", "), "{description}", o.Description).Replace(o.System)
	var shots strings.Builder
	for _, ex := range o.Examples {
		shots.WriteString("<|im_start|>user\n" + strings.ReplaceAll(o.User, "{observation}", ex.User) + "<|im_end|>\n")
		shots.WriteString("<|im_start|>assistant\n" + ex.Assistant + "<|im_end|>\n")
	}
	return &Chat{tok: tok, system: sys, shots: shots.String(), user: o.User, actionWords: slices.Clone(o.ActionWords),
		end: end, after: tok.Encode(nil, "\n")}, nil
}

// Size is the tokenizer's vocabulary size.
func (c *Chat) Size() int { return c.tok.Size() }

// Instruction is the system turn with the task filled in, then the example turns.
func (c *Chat) Instruction(instr string) []int32 {
	return c.tok.Encode(nil, "<|im_start|>system\n"+strings.ReplaceAll(c.system, "{task}", instr)+"<|im_end|>\n"+c.shots)
}

// Turn is the observation's user turn and the opening of the assistant's.
func (c *Chat) Turn(obs string) []int32 {
	return c.tok.Encode(nil, "<|im_start|>user\n"+strings.ReplaceAll(c.user, "{observation}", obs)+"<|im_end|>\n<|im_start|>assistant\n")
}

// End is <|im_end|>.
func (c *Chat) End() int32 { return c.end }

// ForcedEnd is always true: an assistant turn cut at the cap is closed as ChatML closes turns.
func (c *Chat) ForcedEnd(int) bool { return true }

// AfterAction is the newline ChatML puts after every turn.
func (c *Chat) AfterAction() []int32 { return c.after }

// Action reads the action from the assistant's text (ParseAction). A turn cut at the token cap
// is the empty action, which every env refuses as invalid.
func (c *Chat) Action(ids []int32, capped bool) string {
	if capped {
		return ""
	}
	return ParseAction(c.tok.Decode(ids), c.actionWords)
}

// EncodeAction is the action text's tokens, as the model would write it.
func (c *Chat) EncodeAction(text string) ([]int32, error) {
	ids := c.tok.Encode(nil, text)
	if slices.Contains(ids, c.end) {
		return nil, fmt.Errorf("rollout: the teacher's action %q contains %s", text, chatEnd)
	}
	return ids, nil
}

// Decode is the tokens' text.
func (c *Chat) Decode(ids []int32) string { return c.tok.Decode(ids) }

// ParseAction is the lenient reading of a model's free-text action: the first line that holds
// any text, in lower case, its words stripped of surrounding punctuation and quotes; with
// actionWords, the longest run of action words that starts at the line's first action word
// ("I move Up." → "up"; "add 3 4" → "add 3 4" where add, 3 and 4 are action words); without
// them, or when the line holds no action word, the line itself (which the env may refuse as an
// invalid action).
func ParseAction(text string, actionWords []string) string {
	var line string
	for l := range strings.SplitSeq(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			line = strings.ToLower(l)
			break
		}
	}
	if len(actionWords) == 0 {
		return line
	}
	var run []string
	for _, w := range strings.Fields(line) {
		w = strings.Trim(w, ".,;:!?\"'`*()[]{}<>")
		if slices.Contains(actionWords, w) {
			run = append(run, w)
		} else if len(run) > 0 {
			break
		}
	}
	if len(run) == 0 {
		return line
	}
	return strings.Join(run, " ")
}
