package bpe

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/graftrl/graftrl/modelfile"
)

// smolLM2Env set to 1 makes the checks on the real model fail rather than skip when it is not
// installed (as in modelfile's tests; .ci/run installs the model first).
const smolLM2Env = "GRAFTRL_SMOLLM2"

// smolLM2Path is where scripts/install-smollm2.sh keeps the model (modelfile's smolLM2Path).
func smolLM2Path(t *testing.T) string {
	t.Helper()
	path, err := modelfile.InstalledSmolLM2()
	if err != nil {
		if os.Getenv(smolLM2Env) == "1" {
			t.Fatalf("%s=1: %v", smolLM2Env, err)
		}
		t.Skip(err)
	}
	return path
}

// reference is testdata/smollm2_tokenizer.json, written by scripts/interop/tokenizer_reference.py.
type reference struct {
	ChatTemplate string `json:"chat_template"`
	Cases        []struct {
		Text    string  `json:"text"`
		IDs     []int32 `json:"ids"`
		Decoded string  `json:"decoded"`
	} `json:"cases"`
	Decodes []struct {
		IDs     []int32 `json:"ids"`
		Decoded string  `json:"decoded"`
	} `json:"decodes"`
	Chats []struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
		AddGenerationPrompt bool    `json:"add_generation_prompt"`
		Text                string  `json:"text"`
		IDs                 []int32 `json:"ids"`
	} `json:"chats"`
}

func smolLM2(t *testing.T) *Tokenizer {
	t.Helper()
	g, err := modelfile.OpenGGUF(smolLM2Path(t))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	tok, err := FromGGUF(g)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// SmolLM2-135M-Instruct's tokenizer from its GGUF file gives, for 1,200 strings, the ids
// transformers gives with SmolLM2's tokenizer.json pre-tokenizer, decodes them to transformers'
// text, decodes id sequences that cut UTF-8 sequences to transformers' text, and renders chats as transformers' apply_chat_template does (testdata, written by
// scripts/interop/tokenizer_reference.py).
func TestSmolLM2(t *testing.T) {
	tok := smolLM2(t)
	data, err := os.ReadFile("testdata/smollm2_tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref reference
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Cases) < 1000 || len(ref.Chats) < 3 {
		t.Fatalf("testdata has %d cases and %d chats; want at least 1000 and 3", len(ref.Cases), len(ref.Chats))
	}
	if s := tok.Specials(); tok.Size() != 49152 || s != (Specials{BOS: 1, EOS: 2, Unk: 0, Pad: 2}) {
		t.Errorf("size %d, specials %+v; want 49152 and BOS 1, EOS 2, unk 0, pad 2", tok.Size(), s)
	}
	bad := 0
	for _, c := range ref.Cases {
		if got := tok.Encode(nil, c.Text); !slices.Equal(got, c.IDs) {
			t.Errorf("Encode(%q) = %v; want %v", c.Text, got, c.IDs)
			bad++
		}
		if got := tok.Decode(c.IDs); got != c.Decoded {
			t.Errorf("Decode(%v) = %q; want %q", c.IDs, got, c.Decoded)
			bad++
		}
		if bad > 20 {
			t.Fatal("too many differences")
		}
	}
	for _, d := range ref.Decodes {
		if got := tok.Decode(d.IDs); got != d.Decoded {
			t.Errorf("Decode(%v) = %q; want %q", d.IDs, got, d.Decoded)
		}
	}
	tmpl, err := tok.ChatTemplate()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseChatTemplate(ref.ChatTemplate); err != nil {
		t.Errorf("the reference's chat template: %v", err)
	}
	for _, c := range ref.Chats {
		var msgs []Message
		for _, m := range c.Messages {
			msgs = append(msgs, Message{Role: m.Role, Content: m.Content})
		}
		text := tmpl.Render(msgs, c.AddGenerationPrompt)
		if text != c.Text {
			t.Errorf("Render(%v, %v) = %q; want %q", msgs, c.AddGenerationPrompt, text, c.Text)
		}
		if got := tok.Encode(nil, text); !slices.Equal(got, c.IDs) {
			t.Errorf("Encode(%q) = %v; want %v", text, got, c.IDs)
		}
	}
}
