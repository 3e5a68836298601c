package bpe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// HFFiles are the tokenizer files of a Hugging Face model directory.
type HFFiles struct {
	// Tokenizer is tokenizer.json, the tokenizers library's file: required.
	Tokenizer []byte
	// Config is tokenizer_config.json (the special tokens, the chat template); nil for none.
	Config []byte
	// ChatTemplate is chat_template.jinja, where newer transformers keep the template; when
	// given it takes the place of Config's chat_template.
	ChatTemplate []byte
}

// The names of those files in a model directory.
const (
	HFTokenizerFile    = "tokenizer.json"
	HFConfigFile       = "tokenizer_config.json"
	HFChatTemplateFile = "chat_template.jinja"
)

// hfTokenizer is tokenizer.json as FromHFJSON reads it; the pipeline's steps are kept as raw
// JSON and compared with the one this package implements.
type hfTokenizer struct {
	AddedTokens []struct {
		ID      int32  `json:"id"`
		Content string `json:"content"`
		Special bool   `json:"special"`
	} `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	Decoder       json.RawMessage `json:"decoder"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Model         struct {
		Type                    string            `json:"type"`
		Vocab                   map[string]int32  `json:"vocab"`
		Merges                  []json.RawMessage `json:"merges"`
		Dropout                 *float64          `json:"dropout"`
		ByteFallback            bool              `json:"byte_fallback"`
		ContinuingSubwordPrefix *string           `json:"continuing_subword_prefix"`
		EndOfWordSuffix         *string           `json:"end_of_word_suffix"`
		UnkToken                *string           `json:"unk_token"`
	} `json:"model"`
}

// The pipeline steps this package implements, in tokenizers' JSON: SmolLM2's pre-tokenizer
// (digits one by one, then GPT-2's byte-level split) and the byte-level decoder.
const (
	hfPreTokenizer = `{"type":"Sequence","pretokenizers":[{"type":"Digits","individual_digits":true},{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true}]}`
	hfDecoder      = `{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true}`
	hfPostProc     = `{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":false,"use_regex":true}`
)

// FromHFJSON builds the tokenizer of a Hugging Face model directory's files. It accepts what
// this package implements, as SmolLM2's tokenizer.json spells it: model type BPE (no dropout,
// byte fallback, subword prefix or suffix) with merges, no normalizer, the pre-tokenizer
// Sequence[Digits(individual_digits), ByteLevel(add_prefix_space false)], a ByteLevel decoder.
// Anything else is refused naming the field. Added tokens are matched whole (special ones as
// control tokens); the special ids come from tokenizer_config.json's bos_token, eos_token,
// unk_token and pad_token, the chat template from chat_template.jinja or its chat_template.
func FromHFJSON(f HFFiles) (*Tokenizer, error) {
	var h hfTokenizer
	if err := json.Unmarshal(f.Tokenizer, &h); err != nil {
		return nil, fmt.Errorf("bpe: %s: %w", HFTokenizerFile, err)
	}
	if err := h.check(); err != nil {
		return nil, fmt.Errorf("bpe: %s: %w", HFTokenizerFile, err)
	}
	tokens, types, err := h.vocabulary()
	if err != nil {
		return nil, fmt.Errorf("bpe: %s: %w", HFTokenizerFile, err)
	}
	merges, err := h.merges()
	if err != nil {
		return nil, fmt.Errorf("bpe: %s: %w", HFTokenizerFile, err)
	}
	var cfg map[string]any
	if f.Config != nil {
		if err := json.Unmarshal(f.Config, &cfg); err != nil {
			return nil, fmt.Errorf("bpe: %s: %w", HFConfigFile, err)
		}
	}
	sp, err := hfSpecials(cfg, tokens, h.Model.UnkToken)
	if err != nil {
		return nil, fmt.Errorf("bpe: %s: %w", HFConfigFile, err)
	}
	t, err := New(tokens, merges, types, sp)
	if err != nil {
		return nil, err
	}
	switch tmpl := cfg["chat_template"].(type) {
	case string:
		t.template = tmpl
	case []any: // named templates: transformers uses the one called "default"
		for _, e := range tmpl {
			if m, _ := e.(map[string]any); m["name"] == "default" {
				t.template, _ = m["template"].(string)
			}
		}
	}
	if f.ChatTemplate != nil {
		t.template = string(f.ChatTemplate)
	}
	return t, nil
}

// check compares the pipeline's steps with the ones this package implements.
func (h *hfTokenizer) check() error {
	m := h.Model
	switch {
	case m.Type != "BPE":
		return fmt.Errorf("model.type is %q; only \"BPE\" (byte-level) is read", m.Type)
	case len(m.Merges) == 0:
		return fmt.Errorf("model.merges is missing or empty; a byte-level BPE tokenizer needs its merges")
	case m.Dropout != nil || m.ByteFallback || (m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "") ||
		(m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != ""):
		return fmt.Errorf("model has dropout, byte_fallback, continuing_subword_prefix or end_of_word_suffix; none is implemented")
	}
	for _, s := range []struct {
		name string
		got  json.RawMessage
		want string
		skip []string
	}{
		{"normalizer", h.Normalizer, "null", nil},
		{"pre_tokenizer", h.PreTokenizer, hfPreTokenizer, []string{"trim_offsets"}},
		// The byte-level decoder maps bytes back whatever its options, which act on offsets.
		{"decoder", h.Decoder, hfDecoder, []string{"trim_offsets", "add_prefix_space", "use_regex"}},
	} {
		if !sameJSON(s.got, s.want, s.skip...) {
			return fmt.Errorf("%s is %s; only %s (SmolLM2's) is implemented", s.name, clip(s.got), s.want)
		}
	}
	return nil
}

// sameJSON reports whether two JSON texts hold the same value, ignoring the object keys skip
// (at any depth), options that change offsets but not ids. A missing value is null.
func sameJSON(got json.RawMessage, want string, skip ...string) bool {
	if len(bytes.TrimSpace(got)) == 0 {
		got = json.RawMessage("null")
	}
	var a, b any
	if json.Unmarshal(got, &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		return false
	}
	var drop func(v any) any
	drop = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range skip {
				delete(x, k)
			}
			for k, e := range x {
				x[k] = drop(e)
			}
		case []any:
			for i, e := range x {
				x[i] = drop(e)
			}
		}
		return v
	}
	return reflect.DeepEqual(drop(a), drop(b))
}

func clip(b []byte) string {
	s := string(bytes.TrimSpace(b))
	if s == "" {
		s = "missing"
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// vocabulary is the tokens in id order, with their types: model.vocab and added_tokens together
// must number the ids 0..n-1, each once (an added token may repeat its vocab entry).
func (h *hfTokenizer) vocabulary() ([]string, []int32, error) {
	n := int32(len(h.Model.Vocab))
	for _, a := range h.AddedTokens {
		n = max(n, a.ID+1)
	}
	if n == 0 {
		return nil, nil, fmt.Errorf("model.vocab is empty")
	}
	tokens, types := make([]string, n), make([]int32, n)
	set := make([]bool, n)
	put := func(id int32, tok string, typ int32) error {
		if id < 0 || id >= n {
			return fmt.Errorf("token %q has id %d, outside 0..%d", tok, id, n-1)
		}
		if set[id] && tokens[id] != tok {
			return fmt.Errorf("id %d is both %q and %q", id, tokens[id], tok)
		}
		tokens[id], types[id], set[id] = tok, typ, true
		return nil
	}
	for tok, id := range h.Model.Vocab {
		if err := put(id, tok, TypeNormal); err != nil {
			return nil, nil, err
		}
	}
	for _, a := range h.AddedTokens {
		typ := TypeUserDefined
		if a.Special {
			typ = TypeControl
		}
		if err := put(a.ID, a.Content, typ); err != nil {
			return nil, nil, err
		}
	}
	if i := slices.Index(set, false); i >= 0 {
		return nil, nil, fmt.Errorf("no token has id %d (ids must run from 0 to %d)", i, n-1)
	}
	return tokens, types, nil
}

// merges are model.merges as "left right": tokenizers writes them as such strings, or (since
// 0.20) as two-element arrays.
func (h *hfTokenizer) merges() ([]string, error) {
	out := make([]string, len(h.Model.Merges))
	for i, raw := range h.Model.Merges {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			out[i] = s
			continue
		}
		var pair []string
		if json.Unmarshal(raw, &pair) != nil || len(pair) != 2 {
			return nil, fmt.Errorf("model.merges[%d] is %s, not \"left right\" or [left, right]", i, clip(raw))
		}
		out[i] = pair[0] + " " + pair[1]
	}
	return out, nil
}

// hfSpecials are the special ids tokenizer_config.json names by their text (a string, or an
// object with "content"); unk falls back to model.unk_token.
func hfSpecials(cfg map[string]any, tokens []string, unk *string) (Specials, error) {
	sp := Specials{BOS: NoID, EOS: NoID, Unk: NoID, Pad: NoID}
	for key, dst := range map[string]*int32{"bos_token": &sp.BOS, "eos_token": &sp.EOS, "unk_token": &sp.Unk, "pad_token": &sp.Pad} {
		v := cfg[key]
		if m, ok := v.(map[string]any); ok {
			v = m["content"]
		}
		if v == nil && key == "unk_token" && unk != nil {
			v = *unk
		}
		if v == nil {
			continue
		}
		s, ok := v.(string)
		id := slices.Index(tokens, s)
		if !ok || id < 0 {
			return sp, fmt.Errorf("%s is %v, not a token of the vocabulary", key, v)
		}
		*dst = int32(id)
	}
	return sp, nil
}

// Vocabulary is the tokenizer as a GGUF holds it: the tokens in id order, their types
// (TypeControl for those matched whole, else TypeNormal) and the merges in rank order.
func (t *Tokenizer) Vocabulary() (tokens []string, types []int32, merges []string) {
	types = make([]int32, len(t.tokens))
	for id := range t.tokens {
		types[id] = TypeNormal
		if t.special[id] {
			types[id] = TypeControl
		}
	}
	type ranked struct {
		rank int
		text string
	}
	var rs []ranked
	for pair, m := range t.merges {
		rs = append(rs, ranked{m.rank, t.tokens[pair[0]] + " " + t.tokens[pair[1]]})
	}
	slices.SortFunc(rs, func(a, b ranked) int { return a.rank - b.rank })
	for _, r := range rs {
		merges = append(merges, r.text)
	}
	return slices.Clone(t.tokens), types, merges
}

// ChatTemplateText is the chat template's Jinja text as the file gave it ("" for none).
func (t *Tokenizer) ChatTemplateText() string { return t.template }

// HFJSON writes the tokenizer as a Hugging Face directory's tokenizer.json and
// tokenizer_config.json (PreTrainedTokenizerFast; the special tokens by their text, the chat
// template), which FromHFJSON and transformers' AutoTokenizer read back to the same ids.
func (t *Tokenizer) HFJSON() (HFFiles, error) {
	var b bytes.Buffer
	b.WriteString(`{"version":"1.0","truncation":null,"padding":null,"added_tokens":[`)
	decoder := map[string]any{}
	first := true
	for id, tok := range t.tokens {
		if !t.special[id] {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		fmt.Fprintf(&b, `{"id":%d,"content":%s,"single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}`, id, jsonText(tok))
		decoder[strconv.Itoa(id)] = map[string]any{"content": tok, "lstrip": false, "normalized": false, "rstrip": false, "single_word": false, "special": true}
	}
	fmt.Fprintf(&b, `],"normalizer":null,"pre_tokenizer":%s,"post_processor":%s,"decoder":%s,`, hfPreTokenizer, hfPostProc, hfDecoder)
	b.WriteString(`"model":{"type":"BPE","dropout":null,"unk_token":null,"continuing_subword_prefix":null,"end_of_word_suffix":null,"fuse_unk":false,"byte_fallback":false,"ignore_merges":false,"vocab":{`)
	for id, tok := range t.tokens {
		if id > 0 {
			b.WriteByte(',')
		}
		b.WriteString(jsonText(tok) + ":" + strconv.Itoa(id))
	}
	b.WriteString(`},"merges":[`)
	_, _, merges := t.Vocabulary()
	for i, m := range merges {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(jsonText(m))
	}
	b.WriteString("]}}\n")
	cfg := map[string]any{
		"tokenizer_class": "PreTrainedTokenizerFast", "add_prefix_space": false, "clean_up_tokenization_spaces": false,
		"added_tokens_decoder": decoder,
	}
	for key, id := range map[string]int32{"bos_token": t.sp.BOS, "eos_token": t.sp.EOS, "unk_token": t.sp.Unk, "pad_token": t.sp.Pad} {
		if id != NoID {
			cfg[key] = t.tokens[id]
		}
	}
	if t.template != "" {
		cfg["chat_template"] = t.template
	}
	c, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return HFFiles{}, err
	}
	return HFFiles{Tokenizer: b.Bytes(), Config: append(c, '\n')}, nil
}

// jsonText is s as a JSON string, with <, > and & as they are (tokens such as <|im_end|>).
func jsonText(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}
