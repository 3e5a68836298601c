package bpe

import (
	"fmt"
	"strings"
)

// Message is one turn of a chat: its role ("system", "user", "assistant") and its text.
type Message struct {
	Role, Content string
}

// ChatTemplate renders chats in one of the Jinja chat templates this package knows, written out
// in Go; a template it does not know is refused rather than guessed at.
type ChatTemplate struct {
	name          string
	defaultSystem string // the system turn put first when a chat has none; "" for none
}

// smolLM2ChatML is SmolLM2-Instruct's chat template (tokenizer_config.json's chat_template, and
// tokenizer.chat_template of its GGUF files), byte for byte: ChatML with a default system turn.
const smolLM2ChatML = "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"

// ParseChatTemplate recognises a chat template by its text. Only SmolLM2's ChatML template is
// known; any other is an error that quotes the start of what was found.
func ParseChatTemplate(tmpl string) (*ChatTemplate, error) {
	if tmpl == smolLM2ChatML {
		return &ChatTemplate{name: "SmolLM2 ChatML", defaultSystem: "You are a helpful AI assistant named SmolLM, trained by Hugging Face"}, nil
	}
	found := tmpl
	if len(found) > 120 {
		found = found[:120] + "…"
	}
	if tmpl == "" {
		found = "(empty)"
	}
	return nil, fmt.Errorf("bpe: unknown chat template %q (%d bytes); only SmolLM2's ChatML template is supported", found, len(tmpl))
}

// Name names the template ("SmolLM2 ChatML").
func (c *ChatTemplate) Name() string { return c.name }

// Render is the text the Jinja template gives for messages: each turn as
// "<|im_start|>ROLE\nCONTENT<|im_end|>\n", the default system turn first when the first message
// is not a system message (none for an empty chat, whose loop never runs), and with
// addGenerationPrompt the opening of the assistant's turn, "<|im_start|>assistant\n".
func (c *ChatTemplate) Render(messages []Message, addGenerationPrompt bool) string {
	var sb strings.Builder
	for i, m := range messages {
		if i == 0 && m.Role != "system" && c.defaultSystem != "" {
			writeTurn(&sb, "system", c.defaultSystem)
		}
		writeTurn(&sb, m.Role, m.Content)
	}
	if addGenerationPrompt {
		sb.WriteString("<|im_start|>assistant\n")
	}
	return sb.String()
}

func writeTurn(sb *strings.Builder, role, content string) {
	sb.WriteString("<|im_start|>")
	sb.WriteString(role)
	sb.WriteString("\n")
	sb.WriteString(content)
	sb.WriteString("<|im_end|>\n")
}

// ChatTemplate is the chat template of the file the tokenizer was read from (FromGGUF); an
// error when it has none or one ParseChatTemplate does not know.
func (t *Tokenizer) ChatTemplate() (*ChatTemplate, error) {
	if t.template == "" {
		return nil, fmt.Errorf("bpe: the tokenizer has no chat template (tokenizer.chat_template)")
	}
	return ParseChatTemplate(t.template)
}
